package scheduler

import (
	"fmt"
	"testing"

	"github.com/droverhq/drover/structs"
)

// restartPlanCase builds a running group of count healthy allocs of
// version 0 and a restart of it (created after them).
func restartPlanCase(count, width, surge int, reschedule bool, batch *structs.Amount) Input {
	u := structs.DefaultUpdateStrategy()
	u.MaxParallel = width
	if surge > 0 {
		u.MaxSurge = structs.Count(surge)
	}
	job := &structs.Job{ID: "example", Namespace: structs.DefaultNamespace, Type: structs.JobTypeService, Version: 0, CreateIndex: 1,
		TaskGroups: []*structs.TaskGroup{{Name: "web", Count: count, Update: u,
			Tasks: []*structs.Task{{Name: "main", Driver: "raw_exec"}}}}}
	yes := true
	in := Input{Job: job, JobID: job.ID, Now: baseTime, Nodes: []*structs.Node{testNode("n1", "ready")}}
	for i := 0; i < count; i++ {
		in.Allocs = append(in.Allocs, &structs.Allocation{
			ID: fmt.Sprintf("a%d", i), Namespace: job.Namespace, Name: structs.AllocName(job.ID, "web", i), NodeID: "n1",
			JobID: job.ID, Job: job, TaskGroup: "web", DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusRunning, DeploymentID: "d0", CreateIndex: 10,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &yes},
		})
	}
	in.Deployment = &structs.Deployment{ID: "r1", Namespace: job.Namespace, JobID: job.ID, JobCreateIndex: 1,
		Status: structs.DeploymentStatusRunning, CreateIndex: 100, TaskGroups: map[string]*structs.DeploymentState{},
		Restart: &structs.RestartSpec{Groups: []string{"web"}, Reschedule: reschedule, BatchSize: batch}}
	return in
}

// Every restart, in place or replaced, with or without surge and a batch
// size, restarts each alloc exactly once, in batches no wider than its
// width (the batch size when given, else max_parallel).
func TestRestartPlanRestartsEachAllocOnceWithinTheWidth(t *testing.T) {
	for count := 1; count <= 9; count++ {
		for width := 1; width <= 4; width++ {
			for _, v := range []struct {
				surge      int
				reschedule bool
				batch      *structs.Amount
			}{{0, false, nil}, {0, true, nil}, {width, true, nil}, {0, false, structs.Count(2)}, {0, false, structs.Percent(50)}} {
				in := restartPlanCase(count, width, v.surge, v.reschedule, v.batch)
				want := width
				if v.batch != nil {
					want = max(1, v.batch.Of(count, true))
				}
				name := fmt.Sprintf("count=%d width=%d surge=%d reschedule=%t batch=%v", count, width, v.surge, v.reschedule, v.batch)
				seen := map[string]int{}
				for _, b := range PlanRollout(in) {
					if len(b.Allocs) > want {
						t.Fatalf("%s: batch %d restarts %d allocs, width %d", name, b.Batch, len(b.Allocs), want)
					}
					if b.Surge != (v.surge > 0) {
						t.Fatalf("%s: batch %d surge %t", name, b.Batch, b.Surge)
					}
					for _, a := range b.Allocs {
						seen[a]++
					}
				}
				if len(seen) != count {
					t.Fatalf("%s: %d allocs restarted, want %d: %v", name, len(seen), count, seen)
				}
				for a, n := range seen {
					if n != 1 {
						t.Fatalf("%s: %s restarted %d times", name, a, n)
					}
				}
			}
		}
	}
}
