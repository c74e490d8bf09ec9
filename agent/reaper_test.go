package agent

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/structs"
)

// memApplier returns a backend of its own and a function that applies an
// entry to it, failing the test on error.
func memApplier(t *testing.T) (*httpapi.MemBackend, func(fsm.MessageType, any)) {
	b := httpapi.NewMemBackend()
	return b, func(typ fsm.MessageType, req any) {
		t.Helper()
		if _, _, err := b.Apply(context.Background(), typ, req); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReaperTakesOnlyTerminalAllocsAndEvalsOfPurgedJobs(t *testing.T) {
	b, apply := memApplier(t)
	job := func(id string) *structs.Job {
		return &structs.Job{ID: id, Name: id, Namespace: structs.DefaultNamespace, Type: structs.JobTypeBatch,
			Priority: 50, Datacenters: []string{"dc1"},
			TaskGroups: []*structs.TaskGroup{{Name: "g", Count: 2, Tasks: []*structs.Task{{Name: "t", Driver: "mock"}}}}}
	}
	eval := func(id, jobID, status string) *structs.Evaluation {
		return &structs.Evaluation{ID: id, Namespace: structs.DefaultNamespace, JobID: jobID, Type: structs.JobTypeBatch,
			Priority: 50, TriggeredBy: structs.EvalTriggerJobRegister, Status: status, ModifyTime: time.Now().UnixNano()}
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

	req, err := reapable(b.State().Snapshot(), 100, time.Now(), time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// The purged job's live alloc and pending eval wait; the kept job's
	// history stays (younger than the hour).
	if !slices.Equal(req.Allocs, []string{"done-purged"}) || !slices.Equal(req.Evals, []string{"e-purged"}) {
		t.Fatalf("reapable: allocs %v, evals %v", req.Allocs, req.Evals)
	}
	apply(fsm.EvalReapRequestType, req)
	if req, err = reapable(b.State().Snapshot(), 100, time.Now(), time.Hour, time.Hour); err != nil || len(req.Allocs)+len(req.Evals) != 0 {
		t.Fatalf("after reaping: %+v, %v", req, err)
	}
}

// A registered service job's history goes once it is older than the
// threshold: evaluations that ended, and allocations the servers stopped
// or replaced whose client is done with them. A batch job's allocations
// stay while it is registered.
func TestReaperCollectsOldHistoryOfRegisteredJobs(t *testing.T) {
	b, apply := memApplier(t)
	now := time.Unix(1_800_000_000, 0)
	old, recent := now.Add(-2*time.Hour).UnixNano(), now.Add(-time.Minute).UnixNano()
	job := func(id, typ string) *structs.Job {
		return &structs.Job{ID: id, Name: id, Namespace: structs.DefaultNamespace, Type: typ, Priority: 50,
			Datacenters: []string{"dc1"},
			TaskGroups:  []*structs.TaskGroup{{Name: "g", Count: 5, Tasks: []*structs.Task{{Name: "t", Driver: "mock"}}}}}
	}
	eval := func(id, jobID, typ, status string, modified int64) *structs.Evaluation {
		return &structs.Evaluation{ID: id, Namespace: structs.DefaultNamespace, JobID: jobID, Type: typ,
			Priority: 50, TriggeredBy: structs.EvalTriggerJobRegister, Status: status, ModifyTime: modified}
	}
	type allocCase struct {
		id, desired, client, next string
		modified                  int64
	}
	place := func(j *structs.Job, cases []allocCase) {
		for _, c := range cases {
			a := &structs.Allocation{ID: c.id, Namespace: structs.DefaultNamespace, JobID: j.ID, TaskGroup: "g",
				NodeID: "n1", Name: j.ID + ".g[0]", DesiredStatus: c.desired, ClientStatus: structs.AllocClientStatusPending,
				NextAllocation: c.next}
			apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e-" + j.ID, Job: j,
				AllocsPlaced: []*structs.Allocation{a}, UpdatedAt: c.modified})
			apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
				Allocs: []*structs.Allocation{{ID: c.id, ClientStatus: c.client}}, UpdatedAt: c.modified})
		}
	}
	const run, stop = structs.AllocDesiredStatusRun, structs.AllocDesiredStatusStop
	const complete, failed, running = structs.AllocClientStatusComplete, structs.AllocClientStatusFailed, structs.AllocClientStatusRunning
	web, batch := job("web", structs.JobTypeService), job("nightly", structs.JobTypeBatch)
	for _, j := range []*structs.Job{web, batch} {
		apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: j,
			Eval: eval("e-"+j.ID, j.ID, j.Type, structs.EvalStatusPending, old)})
	}
	place(web, []allocCase{
		{"stopped-old", stop, complete, "", old},
		{"replaced-old", run, failed, "stopped-old", old}, // failed, its replacement placed
		{"stopped-recent", stop, complete, "", recent},
		{"failed-waiting", run, failed, "", old}, // may still be rescheduled
		{"running-old", run, running, "", old},
	})
	place(batch, []allocCase{{"batch-done", stop, complete, "", old}})
	apply(fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{
		eval("e-web", "web", structs.JobTypeService, structs.EvalStatusComplete, old),
		eval("e-web-recent", "web", structs.JobTypeService, structs.EvalStatusComplete, recent),
		eval("e-web-blocked", "web", structs.JobTypeService, structs.EvalStatusBlocked, old),
		eval("e-nightly", "nightly", structs.JobTypeBatch, structs.EvalStatusComplete, old),
	}})

	req, err := reapable(b.State().Snapshot(), 100, now, time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(req.Allocs)
	slices.Sort(req.Evals)
	if !slices.Equal(req.Allocs, []string{"replaced-old", "stopped-old"}) {
		t.Errorf("allocs reaped: %v", req.Allocs)
	}
	if !slices.Equal(req.Evals, []string{"e-nightly", "e-web"}) {
		t.Errorf("evals reaped: %v", req.Evals)
	}
	apply(fsm.EvalReapRequestType, req)
	snap := b.State().Snapshot()
	if j, _ := snap.JobByID(structs.DefaultNamespace, "web"); j == nil {
		t.Fatal("the job went with its history")
	}
	for _, id := range []string{"stopped-recent", "failed-waiting", "running-old", "batch-done"} {
		if a, _ := snap.AllocByID(id); a == nil {
			t.Errorf("%s was reaped", id)
		}
	}
	// An hour later the recent ones are old enough.
	if req, err = reapable(b.State().Snapshot(), 100, now.Add(time.Hour), time.Hour, time.Hour); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(req.Allocs, []string{"stopped-recent"}) || !slices.Equal(req.Evals, []string{"e-web-recent"}) {
		t.Fatalf("an hour later: allocs %v, evals %v", req.Allocs, req.Evals)
	}
}

// A terminal deployment goes once it is older than
// server.deployment_gc_threshold and no allocation refers to it any more
// (in the same request as its last allocations); a job's current
// deployment, whose allocations run, stays, and so does a running one.
func TestReaperCollectsOldDeploymentsNoAllocReferTo(t *testing.T) {
	b, apply := memApplier(t)
	now := time.Unix(1_800_000_000, 0)
	old, recent := now.Add(-2*time.Hour).UnixNano(), now.Add(-time.Minute).UnixNano()
	j := &structs.Job{ID: "web", Name: "web", Namespace: structs.DefaultNamespace, Type: structs.JobTypeService, Priority: 50,
		Datacenters: []string{"dc1"},
		TaskGroups:  []*structs.TaskGroup{{Name: "g", Count: 1, Tasks: []*structs.Task{{Name: "t", Driver: "mock"}}}}}
	apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: j, Eval: &structs.Evaluation{ID: "e-web",
		Namespace: structs.DefaultNamespace, JobID: "web", Type: j.Type, Priority: 50, TriggeredBy: structs.EvalTriggerJobRegister,
		Status: structs.EvalStatusPending}})
	// deploy places one alloc under a new deployment and ends the
	// deployment with status at modified.
	deploy := func(id, alloc, status string, modified int64) {
		d := &structs.Deployment{ID: id, Namespace: structs.DefaultNamespace, JobID: "web", Status: structs.DeploymentStatusRunning,
			TaskGroups: map[string]*structs.DeploymentState{"g": {DesiredTotal: 1}}}
		a := &structs.Allocation{ID: alloc, Namespace: structs.DefaultNamespace, JobID: "web", TaskGroup: "g", NodeID: "n1",
			Name: "web.g[0]", DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending, DeploymentID: id}
		apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e-web", Job: j,
			AllocsPlaced: []*structs.Allocation{a}, Deployment: d, UpdatedAt: modified})
		apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
			Allocs: []*structs.Allocation{{ID: alloc, ClientStatus: structs.AllocClientStatusRunning}}, UpdatedAt: modified})
		if status != structs.DeploymentStatusRunning {
			apply(fsm.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
				DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: id, Status: status}, UpdatedAt: modified})
		}
	}
	// stop stops an alloc and its client reports it complete.
	stop := func(alloc string, modified int64) {
		apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e-web",
			AllocsStopped: []*structs.AllocStopUpdate{{AllocID: alloc}}, UpdatedAt: modified})
		apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
			Allocs: []*structs.Allocation{{ID: alloc, ClientStatus: structs.AllocClientStatusComplete}}, UpdatedAt: modified})
	}
	deploy("d-old", "a-old", structs.DeploymentStatusSuccessful, old)
	stop("a-old", old)
	deploy("d-stopped-recent", "a-recent", structs.DeploymentStatusCancelled, old)
	stop("a-recent", recent) // its alloc is too young to go: it still refers to it
	deploy("d-current", "a-current", structs.DeploymentStatusSuccessful, old)
	deploy("d-running", "a-running", structs.DeploymentStatusRunning, old)

	req, err := reapable(b.State().Snapshot(), 100, now, time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(req.Allocs, []string{"a-old"}) || !slices.Equal(req.Deployments, []string{"d-old"}) {
		t.Fatalf("reapable: allocs %v, deployments %v", req.Allocs, req.Deployments)
	}
	apply(fsm.EvalReapRequestType, req)
	snap := b.State().Snapshot()
	if d, _ := snap.DeploymentByID("d-old"); d != nil {
		t.Error("d-old is still stored")
	}
	for _, id := range []string{"d-stopped-recent", "d-current", "d-running"} {
		if d, _ := snap.DeploymentByID(id); d == nil {
			t.Errorf("%s was collected", id)
		}
	}
	// With a longer threshold nothing old enough is left.
	if req, err = reapable(b.State().Snapshot(), 100, now.Add(time.Hour), time.Hour, 3*time.Hour); err != nil || len(req.Deployments) != 0 {
		t.Fatalf("with a 3h threshold: %+v, %v", req, err)
	}
	// An hour later the recent alloc goes, and its deployment with it.
	if req, err = reapable(b.State().Snapshot(), 100, now.Add(time.Hour), time.Hour, time.Hour); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(req.Allocs, []string{"a-recent"}) || !slices.Equal(req.Deployments, []string{"d-stopped-recent"}) {
		t.Fatalf("an hour later: allocs %v, deployments %v", req.Allocs, req.Deployments)
	}
	// The state refuses to delete a running deployment, whatever asks.
	apply(fsm.EvalReapRequestType, &structs.EvalReapRequest{Deployments: []string{"d-running"}})
	if d, _ := b.State().Snapshot().DeploymentByID("d-running"); d == nil {
		t.Error("a running deployment was deleted")
	}
}
