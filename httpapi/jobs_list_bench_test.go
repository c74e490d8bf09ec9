package httpapi

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// benchJobs stores jobs jobs of perJob allocations each, spread over ten
// nodes, each job with its register evaluation finished and a quarter of
// its allocations reported running.
func benchJobs(b *testing.B, mb *MemBackend, jobs, perJob int) {
	b.Helper()
	ctx := context.Background()
	apply := func(t fsm.MessageType, req any) {
		if _, _, err := mb.Apply(ctx, t, req); err != nil {
			b.Fatal(err)
		}
	}
	nodes := make([]*structs.Node, 10)
	for i := range nodes {
		nodes[i] = statetest.Node(fmt.Sprintf("n%d", i))
		apply(fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: nodes[i]})
	}
	for j := range jobs {
		job := statetest.Job(fmt.Sprintf("job-%03d", j), perJob)
		eval := statetest.Eval(job.ID, job)
		apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval})
		stored, _ := mb.State().Snapshot().JobByID("default", job.ID)
		allocs := make([]*structs.Allocation, perJob)
		for i := range allocs {
			allocs[i] = statetest.Alloc(stored, nodes[i%len(nodes)], eval.ID, "", i)
		}
		apply(fsm.ApplyPlanResultsRequestType,
			&structs.ApplyPlanResultsRequest{EvalID: eval.ID, Job: stored, AllocsPlaced: allocs})
		done := eval.Copy()
		done.Status = structs.EvalStatusComplete
		done.QueuedAllocations = map[string]int{"web": 0}
		apply(fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done}})
		var up []*structs.Allocation
		for _, a := range allocs[:perJob/4] {
			up = append(up, &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning})
		}
		apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{Allocs: up, UpdatedAt: statetest.T0.UnixNano()})
	}
}

// BenchmarkJobsList measures GET /v1/jobs over loopback with 100 jobs and
// 100,000 allocations: what job status, the UI's jobs page and the nomad
// CLI's prefix lookups read.
func BenchmarkJobsList(b *testing.B) {
	mb := NewMemBackend()
	benchJobs(b, mb, 100, 1000)
	srv := httptest.NewServer(New(mb, nil).Handler())
	b.Cleanup(srv.Close)
	for _, c := range []struct{ name, path string }{
		{"all", "/v1/jobs"},
		{"prefix", "/v1/jobs?prefix=job-05"},
		{"summary", "/v1/job/job-050/summary"},
	} {
		b.Run(fmt.Sprintf("%s/100-jobs-100000-allocs", c.name), func(b *testing.B) {
			for b.Loop() {
				benchGet(b, srv.URL+c.path)
			}
		})
	}
}
