package scheduler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/droverhq/drover/structs"
)

// analysisPlanCase is a group of count healthy allocs of version 0 and
// version 1 of its job, rolled one alloc at a time (after canary canaries),
// with an analysis of each When.
func analysisPlanCase(count, canary int, first bool, revert bool) Input {
	u := structs.DefaultUpdateStrategy()
	u.MaxParallel = 1
	u.Canary = canary
	u.Analyses = []*structs.Analysis{
		{Name: "errors", When: structs.AnalysisWhenEachBatch},
		{Name: "canary-errors", When: structs.AnalysisWhenCanary},
		{Name: "latency", When: structs.AnalysisWhenBackground},
	}
	old := &structs.Job{ID: "example", Namespace: structs.DefaultNamespace, Type: structs.JobTypeService, Version: 0, CreateIndex: 1,
		TaskGroups: []*structs.TaskGroup{{Name: "web", Count: count, Update: u,
			Tasks: []*structs.Task{{Name: "main", Driver: "raw_exec", Config: map[string]any{"v": "a"}}}}}}
	job := old.Copy()
	job.Version = 1
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"v": "b"}
	if revert {
		v := uint64(0)
		job.RevertOf = &v
	}
	in := Input{Job: job, JobID: job.ID, Now: baseTime, Nodes: []*structs.Node{testNode("n1", "ready")}}
	if first {
		return in
	}
	yes := true
	for i := 0; i < count; i++ {
		in.Allocs = append(in.Allocs, &structs.Allocation{
			ID: fmt.Sprintf("a%d", i), Namespace: job.Namespace, Name: structs.AllocName(job.ID, "web", i), NodeID: "n1",
			JobID: job.ID, Job: old, TaskGroup: "web", DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusRunning, DeploymentID: "d0", CreateIndex: 10,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &yes},
		})
	}
	return in
}

// The plan names the analyses that gate after each batch: each_batch ones
// after every batch that replaces allocs, canary ones after the canaries;
// background ones never gate; a first version and a revert run none.
func TestPlanRolloutAnalysis(t *testing.T) {
	plan := PlanRollout(analysisPlanCase(4, 0, false, false))
	if len(plan) != 4 {
		t.Fatalf("%d batches: %+v", len(plan), plan)
	}
	for _, b := range plan {
		if !slices.Equal(b.Analysis, []string{"errors"}) {
			t.Errorf("batch %d: analysis %v, want [errors]", b.Batch, b.Analysis)
		}
	}

	plan = PlanRollout(analysisPlanCase(3, 1, false, false))
	if len(plan) < 2 {
		t.Fatalf("%d batches: %+v", len(plan), plan)
	}
	if !slices.Equal(plan[0].Analysis, []string{"canary-errors"}) {
		t.Errorf("canary batch: analysis %v, want [canary-errors]", plan[0].Analysis)
	}
	for _, b := range plan[1:] {
		if !slices.Equal(b.Analysis, []string{"errors"}) {
			t.Errorf("batch %d after promotion: analysis %v, want [errors]", b.Batch, b.Analysis)
		}
	}

	for name, in := range map[string]Input{"first version": analysisPlanCase(4, 0, true, false), "revert": analysisPlanCase(4, 0, false, true)} {
		for _, b := range PlanRollout(in) {
			if len(b.Analysis) != 0 {
				t.Errorf("%s: batch %d gated by %v", name, b.Batch, b.Analysis)
			}
		}
	}
}
