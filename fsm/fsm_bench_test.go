package fsm

import (
	"fmt"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func reportApplies(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "applies/s")
}

// BenchmarkApplyJobRegister applies job registrations, each a new version
// (decode + store transaction + version pruning).
func BenchmarkApplyJobRegister(b *testing.B) {
	f := New(nil)
	job := statetest.Job("web", 3)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		job.Meta["rev"] = fmt.Sprint(i)
		e := statetest.Eval(fmt.Sprint(i), job)
		data := entry(b, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: e, SubmitTime: int64(i)})
		b.StartTimer()
		if err, ok := f.Apply(&raft.Log{Index: uint64(i + 1), Data: data}).(error); ok {
			b.Fatal(err)
		}
	}
	reportApplies(b)
}

// BenchmarkApplyPlanResults100 applies plans of 100 placements each into a
// deployment, the job carried once per entry.
func BenchmarkApplyPlanResults100(b *testing.B) {
	f := New(nil)
	job := statetest.Job("web", 100)
	applyOK(b, f, 1, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored, _ := snap(f).JobByID("default", "web")
	dep := statetest.Deployment(stored, 0)
	nodes := make([]*structs.Node, 20)
	for i := range nodes {
		nodes[i] = statetest.Node(fmt.Sprint(i))
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		req := &structs.ApplyPlanResultsRequest{EvalID: "e", Job: stored, UpdatedAt: int64(i)}
		if i == 0 {
			req.Deployment = dep
		}
		for k := range 100 {
			a := statetest.Alloc(stored, nodes[k%len(nodes)], "e", dep.ID, k)
			a.ID = statetest.ID(fmt.Sprintf("%d/%d", i, k))
			a.Job = nil
			req.AllocsPlaced = append(req.AllocsPlaced, a)
		}
		data := entry(b, ApplyPlanResultsRequestType, req)
		b.StartTimer()
		if err, ok := f.Apply(&raft.Log{Index: uint64(i + 2), Data: data}).(error); ok {
			b.Fatal(err)
		}
	}
	reportApplies(b)
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "allocs/s")
}

// BenchmarkApplyAllocClientUpdate applies single-alloc client updates
// (status, task state, health) against 1000 stored allocs.
func BenchmarkApplyAllocClientUpdate(b *testing.B) {
	f := New(nil)
	job := statetest.Job("web", 1000)
	applyOK(b, f, 1, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored, _ := snap(f).JobByID("default", "web")
	dep := statetest.Deployment(stored, 0)
	req := &structs.ApplyPlanResultsRequest{Job: stored, Deployment: dep}
	for k := range 1000 {
		a := statetest.Alloc(stored, statetest.Node(fmt.Sprint(k%20)), "e", dep.ID, k)
		a.Job = nil
		req.AllocsPlaced = append(req.AllocsPlaced, a)
	}
	applyOK(b, f, 2, ApplyPlanResultsRequestType, req)
	entries := make([][]byte, 1000)
	for k, a := range req.AllocsPlaced {
		entries[k] = entry(b, AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
			Allocs: []*structs.Allocation{{
				ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
				TaskStates: map[string]*structs.TaskState{
					"server":  {State: structs.TaskStateRunning, StartedAt: statetest.T0, Events: []*structs.TaskEvent{{Type: structs.TaskStarted, Time: 1}}},
					"sidecar": {State: structs.TaskStateRunning, StartedAt: statetest.T0},
				},
				DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: statetest.Bool(true), Timestamp: statetest.T0},
			}},
			UpdatedAt: int64(k),
		})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err, ok := f.Apply(&raft.Log{Index: uint64(i + 3), Data: entries[i%len(entries)]}).(error); ok {
			b.Fatal(err)
		}
	}
	reportApplies(b)
}
