package agent

import (
	"context"
	"slices"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/structs"
)

func TestReaperTakesOnlyTerminalAllocsAndEvalsOfPurgedJobs(t *testing.T) {
	b := httpapi.NewMemBackend()
	apply := func(typ fsm.MessageType, req any) {
		t.Helper()
		if _, _, err := b.Apply(context.Background(), typ, req); err != nil {
			t.Fatal(err)
		}
	}
	job := func(id string) *structs.Job {
		return &structs.Job{ID: id, Name: id, Namespace: structs.DefaultNamespace, Type: structs.JobTypeBatch,
			Priority: 50, Datacenters: []string{"dc1"},
			TaskGroups: []*structs.TaskGroup{{Name: "g", Count: 2, Tasks: []*structs.Task{{Name: "t", Driver: "mock"}}}}}
	}
	eval := func(id, jobID, status string) *structs.Evaluation {
		return &structs.Evaluation{ID: id, Namespace: structs.DefaultNamespace, JobID: jobID, Type: structs.JobTypeBatch,
			Priority: 50, TriggeredBy: structs.EvalTriggerJobRegister, Status: status}
	}
	alloc := func(id, jobID string) *structs.Allocation {
		return &structs.Allocation{ID: id, Namespace: structs.DefaultNamespace, JobID: jobID, TaskGroup: "g",
			NodeID: "n1", Name: jobID + ".g[0]", DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusPending}
	}
	for _, id := range []string{"kept", "purged"} {
		apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job(id), Eval: eval("e-"+id, id, structs.EvalStatusPending)})
		apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
			EvalID: "e-" + id, Job: job(id), AllocsPlaced: []*structs.Allocation{alloc("done-"+id, id), alloc("live-"+id, id)},
		})
		apply(fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval("e-"+id, id, structs.EvalStatusComplete)}})
		apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{
			{ID: "done-" + id, ClientStatus: structs.AllocClientStatusComplete},
			{ID: "live-" + id, ClientStatus: structs.AllocClientStatusRunning},
		}})
	}
	apply(fsm.JobDeregisterRequestType, &structs.JobDeregisterRequest{Namespace: structs.DefaultNamespace, JobID: "purged", Purge: true,
		Eval: eval("e-purge", "purged", structs.EvalStatusPending)})

	req, err := reapable(b.State().Snapshot(), 100)
	if err != nil {
		t.Fatal(err)
	}
	// The purged job's live alloc and pending eval wait; the kept job's
	// history stays.
	if !slices.Equal(req.Allocs, []string{"done-purged"}) || !slices.Equal(req.Evals, []string{"e-purged"}) {
		t.Fatalf("reapable: allocs %v, evals %v", req.Allocs, req.Evals)
	}
	apply(fsm.EvalReapRequestType, req)
	if req, err = reapable(b.State().Snapshot(), 100); err != nil || len(req.Allocs)+len(req.Evals) != 0 {
		t.Fatalf("after reaping: %+v, %v", req, err)
	}
}
