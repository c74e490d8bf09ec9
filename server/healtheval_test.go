package server

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// A rolling deployment's next pass is asked for in the entry that
// carries the health that allows it, not in a later one of the watcher.
func TestHealthReportCarriesTheNextPass(t *testing.T) {
	h := newHarness(t)
	h.start()
	startRollout(t, h)
	first := byVersion(allocsOf(h.store().Snapshot(), "web"), 1)[0]

	yes := true
	index, err := h.leader.UpdateAllocsFromClient(h.ctx, []*structs.Allocation{{
		ID: first.ID, ClientStatus: structs.AllocClientStatusRunning,
		DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &yes, Timestamp: h.clock.Now()},
	}})
	must(t, err)
	h.waitFor("the second replacement", func(s *state.Snapshot) bool { return len(byVersion(allocsOf(s, "web"), 1)) == 2 })
	snap := h.store().Snapshot()
	d := deploymentOf(snap, "web", 1)
	evals, err := snap.EvalsByJob(structs.DefaultNamespace, "web")
	must(t, err)
	var carried []*structs.Evaluation
	for _, e := range evals {
		if e.CreateIndex == index {
			carried = append(carried, e)
		}
	}
	if len(carried) != 1 || carried[0].DeploymentID != d.ID || carried[0].TriggeredBy != structs.EvalTriggerDeploymentWatcher {
		t.Fatalf("evaluations created with the health report (index %d): %+v, want one for deployment %s", index, carried, d.ID)
	}
}

// healthEvals asks for no pass while one of the job's evaluations waits
// to run, nor for a deployment that is not running or has every alloc
// placed.
func TestHealthEvalsSkipWhenAPassIsDueOrTheDeploymentIsNotRunning(t *testing.T) {
	h := newHarness(t)
	h.start()
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 4000, 4096))
	must(t, err)
	_, err = h.leader.RegisterJob(h.ctx, testJob("web", 1, 100))
	must(t, err)
	h.waitFor("the alloc", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 1 })
	h.idle()
	h.stop() // nothing schedules from here on: the evaluations written stay as they are
	d := deploymentOf(h.store().Snapshot(), "web", 0)
	keys := map[healthKey]bool{{structs.DefaultNamespace, "web", d.ID}: true}
	now := h.clock.Now()
	ids := 0
	newID := func() string { ids++; return "health-eval" }
	got := func() []*structs.Evaluation {
		t.Helper()
		out, err := healthEvals(h.store().Snapshot(), keys, now, newID)
		must(t, err)
		return out
	}
	apply := func(mt fsm.MessageType, req any) {
		t.Helper()
		_, _, err := h.raft.Apply(context.Background(), mt, req)
		must(t, err)
	}

	// The first version placed everything at once: new health frees no
	// slot, and no pass is asked for.
	if !d.AllPlaced() {
		t.Fatalf("the first version's deployment is not all placed: %+v", d.TaskGroups["web"])
	}
	if out := got(); len(out) != 0 {
		t.Fatalf("every alloc placed: got %+v, want none", out)
	}
	// A group with budgeted work left (as the scheduler records it).
	apply(fsm.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: d.ID, AllPlaced: map[string]bool{"web": false}},
		UpdatedAt:        now.UnixNano(),
	})
	if st := deploymentOf(h.store().Snapshot(), "web", 0); st.Status != structs.DeploymentStatusRunning || st.TaskGroups["web"].AllPlaced {
		t.Fatalf("an AllPlaced-only update changed the status or missed the group: %s %+v", st.Status, st.TaskGroups["web"])
	}
	if out := got(); len(out) != 1 || out[0].DeploymentID != d.ID || out[0].Status != structs.EvalStatusPending {
		t.Fatalf("no evaluation waits: got %+v, want one pending for the deployment", out)
	}
	pending := &structs.Evaluation{ID: "due", Namespace: structs.DefaultNamespace, JobID: "web",
		Type: structs.JobTypeService, Status: structs.EvalStatusPending}
	apply(fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{pending}})
	if out := got(); len(out) != 0 {
		t.Fatalf("an evaluation of the job is due: got %+v, want none", out)
	}
	later := pending.Copy()
	later.WaitUntil = now.Add(time.Hour)
	apply(fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{later}})
	if out := got(); len(out) != 1 {
		t.Fatalf("the job's only pending evaluation waits an hour: got %+v, want one", out)
	}
	apply(fsm.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: structs.DeploymentStatusPaused,
			StatusDescription: "paused"},
		UpdatedAt: now.UnixNano(),
	})
	if out := got(); len(out) != 0 {
		t.Fatalf("the deployment is paused: got %+v, want none", out)
	}
}
