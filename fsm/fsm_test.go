package fsm

import (
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// TestApplyEveryMessageType walks one job through its life with hand-made
// log entries, one of each message type, checking the state after each.
func TestApplyEveryMessageType(t *testing.T) {
	f := newTestFSM(t)
	node := statetest.Node("a")
	job := statetest.Job("web", 2)
	job.TaskGroups[0].Update.Canary = 1

	applyOK(t, f, 1, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	if n, _ := snap(f).NodeByID(node.ID); n == nil || n.CreateIndex != 1 {
		t.Fatalf("node register: %+v", n)
	}

	eval := statetest.Eval("register", job)
	resp := applyOK(t, f, 2, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval, SubmitTime: 42})
	res, ok := resp.(*structs.JobRegisterResult)
	if !ok || res.JobVersion != 0 || res.JobModifyIndex != 2 {
		t.Fatalf("job register response = %#v", resp)
	}
	stored, _ := snap(f).JobByID("default", "web")
	if stored == nil || stored.SubmitTime != 42 || stored.Status != structs.JobStatusPending {
		t.Fatalf("registered job = %+v", stored)
	}

	dep := statetest.Deployment(stored, 1)
	var allocs []*structs.Allocation
	for i := range 3 { // 2 + 1 canary
		a := statetest.Alloc(stored, node, eval.ID, dep.ID, i)
		a.Job = nil
		a.DeploymentStatus.Canary = i == 2
		allocs = append(allocs, a)
	}
	placedAt := statetest.T0.Add(time.Second)
	applyOK(t, f, 3, ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: eval.ID, Job: stored, Deployment: dep, AllocsPlaced: allocs, UpdatedAt: placedAt.UnixNano(),
	})
	d, _ := snap(f).DeploymentByID(dep.ID)
	if d == nil || d.TaskGroups["web"].PlacedAllocs != 3 || len(d.TaskGroups["web"].PlacedCanaries) != 1 {
		t.Fatalf("plan results deployment = %+v", d)
	}
	if got := d.TaskGroups["web"].RequireProgressBy; !got.Equal(placedAt.Add(structs.DefaultProgressDeadline)) {
		t.Fatalf("RequireProgressBy = %v", got)
	}
	if a, _ := snap(f).AllocByID(allocs[0].ID); a == nil || a.Job == nil || a.Job.ID != "web" {
		t.Fatalf("placed alloc = %+v", a)
	}

	done := eval.Copy()
	done.Status = structs.EvalStatusComplete
	applyOK(t, f, 4, EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done}})
	if e, _ := snap(f).EvalByID(eval.ID); e.Status != structs.EvalStatusComplete || e.ModifyIndex != 4 {
		t.Fatalf("eval update = %+v", e)
	}

	healthyAt := statetest.T0.Add(time.Minute)
	applyOK(t, f, 5, AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{
			ID: allocs[2].ID, ClientStatus: structs.AllocClientStatusRunning,
			TaskStates:       map[string]*structs.TaskState{"server": {State: structs.TaskStateRunning, StartedAt: statetest.T0}},
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: statetest.Bool(true), Timestamp: healthyAt},
		}},
		UpdatedAt: healthyAt.UnixNano(),
	})
	d, _ = snap(f).DeploymentByID(dep.ID)
	if d.TaskGroups["web"].HealthyAllocs != 1 {
		t.Fatalf("healthy count = %d", d.TaskGroups["web"].HealthyAllocs)
	}
	if j, _ := snap(f).JobByID("default", "web"); j.Status != structs.JobStatusRunning {
		t.Fatalf("job status with running allocs = %q", j.Status)
	}

	promoteAt := statetest.T0.Add(2 * time.Minute)
	applyOK(t, f, 6, DeploymentPromoteRequestType, &structs.DeploymentPromoteRequest{
		DeploymentID: dep.ID, All: true, PromotedAt: promoteAt,
	})
	d, _ = snap(f).DeploymentByID(dep.ID)
	if !d.TaskGroups["web"].Promoted {
		t.Fatal("not promoted")
	}

	manualAt := statetest.T0.Add(3 * time.Minute)
	applyOK(t, f, 7, DeploymentAllocHealthRequestType, &structs.DeploymentAllocHealthRequest{
		DeploymentID: dep.ID, HealthyAllocationIDs: []string{allocs[0].ID, allocs[1].ID}, Timestamp: manualAt,
	})
	d, _ = snap(f).DeploymentByID(dep.ID)
	if g := d.TaskGroups["web"]; g.HealthyAllocs != 3 || !g.RequireProgressBy.Equal(manualAt.Add(g.ProgressDeadline)) {
		t.Fatalf("after manual health: %+v", g)
	}

	applyOK(t, f, 8, DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: dep.ID, Status: structs.DeploymentStatusSuccessful,
			StatusDescription: structs.DeploymentStatusDescriptionSuccessful},
		UpdatedAt: manualAt.UnixNano(),
	})
	applyOK(t, f, 9, JobStabilityRequestType, &structs.JobStabilityRequest{Namespace: "default", JobID: "web", JobVersion: 0, Stable: true})
	if j, _ := snap(f).JobByID("default", "web"); !j.Stable {
		t.Fatal("job version not stable")
	}
	if d, _ = snap(f).DeploymentByID(dep.ID); d.Status != structs.DeploymentStatusSuccessful {
		t.Fatalf("deployment status = %s", d.Status)
	}

	applyOK(t, f, 10, AllocUpdateDesiredTransitionRequestType, &structs.AllocUpdateDesiredTransitionRequest{
		Allocs:    map[string]*structs.DesiredTransition{allocs[1].ID: {Reschedule: statetest.Bool(true)}},
		UpdatedAt: manualAt.UnixNano(),
	})
	if a, _ := snap(f).AllocByID(allocs[1].ID); !a.DesiredTransition.ShouldReschedule() {
		t.Fatal("desired transition not applied")
	}

	downEval := statetest.Eval("node-down", stored)
	applyOK(t, f, 11, NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{
		NodeID: node.ID, Status: structs.NodeStatusDown, UpdatedAt: manualAt.UnixNano(),
		Evals: []*structs.Evaluation{downEval},
	})
	for _, a := range allocs {
		if got, _ := snap(f).AllocByID(a.ID); got.ClientStatus != structs.AllocClientStatusLost {
			t.Fatalf("alloc %s on down node: %s", got.Name, got.ClientStatus)
		}
	}

	resp = applyOK(t, f, 12, JobDeregisterRequestType, &structs.JobDeregisterRequest{
		Namespace: "default", JobID: "web", Eval: statetest.Eval("stop", stored), SubmitTime: 77,
	})
	if res, ok := resp.(*structs.JobRegisterResult); !ok || res.JobVersion != 1 {
		t.Fatalf("deregister response = %#v", resp)
	}
	if j, _ := snap(f).JobByID("default", "web"); !j.Stop {
		t.Fatal("job not stopped")
	}
	applyOK(t, f, 13, EvalReapRequestType, &structs.EvalReapRequest{Evals: []string{eval.ID}, Allocs: []string{allocs[0].ID}})
	if e, _ := snap(f).EvalByID(eval.ID); e != nil {
		t.Fatal("eval not reaped")
	}
	if a, _ := snap(f).AllocByID(allocs[0].ID); a != nil {
		t.Fatal("alloc not reaped")
	}
	applyOK(t, f, 14, NodeDeregisterRequestType, &structs.NodeDeregisterRequest{NodeIDs: []string{node.ID}})
	if n, _ := snap(f).NodeByID(node.ID); n != nil {
		t.Fatal("node not deregistered")
	}
	if idx, _ := snap(f).LatestIndex(); idx != 14 {
		t.Fatalf("latest index = %d, want 14", idx)
	}
}

// TestApplyRejections: the store's refusals come back as errors and leave
// nothing of the entry behind.
func TestApplyRejections(t *testing.T) {
	f := newTestFSM(t)
	job := statetest.Job("web", 1)
	before := dump(t, f)
	resp := f.Apply(rawLog(1, entry(t, DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "missing", Status: structs.DeploymentStatusPaused},
		// The eval must not be stored when the update is refused.
		Eval: statetest.Eval("x", job),
	})))
	if err, _ := resp.(error); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("unknown deployment: resp = %#v", resp)
	}
	if dump(t, f) != before {
		t.Fatal("a refused entry changed the state")
	}
	resp = f.Apply(rawLog(2, entry(t, JobRegisterRequestType, &structs.JobRegisterRequest{})))
	if err, _ := resp.(error); !errors.Is(err, state.ErrInvalid) {
		t.Fatalf("register without job: resp = %#v", resp)
	}
}
