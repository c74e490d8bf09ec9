package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// TestEvaluateAndPurgeNode: `node eval` evaluates the jobs on a node and
// the system jobs; a purge removes the node and evaluates the jobs that
// had allocations on it, which then find them lost and place them again.
func TestEvaluateAndPurgeNode(t *testing.T) {
	h := newHarness(t)
	h.start()
	if _, err := h.leader.EvaluateNode(h.ctx, "nope"); !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("unknown node: %v", err)
	}
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 4000, 8192))
	must(t, err)
	// A node without allocations and no system job: nothing to evaluate.
	r, err := h.leader.EvaluateNode(h.ctx, "node-a")
	if err != nil || len(r.EvalIDs) != 0 || r.EvalCreateIndex != 0 {
		t.Fatalf("empty node: %+v %v", r, err)
	}
	_, err = h.leader.RegisterJob(h.ctx, testJob("web", 2, 100))
	must(t, err)
	h.waitFor("two allocations", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 2 })
	h.idle()

	r, err = h.leader.EvaluateNode(h.ctx, "node-a")
	if err != nil || len(r.EvalIDs) != 1 || r.EvalCreateIndex == 0 {
		t.Fatalf("evaluate: %+v %v", r, err)
	}
	e, _ := h.store().Snapshot().EvalByID(r.EvalIDs[0])
	if e == nil || e.JobID != "web" || e.NodeID != "node-a" || e.TriggeredBy != structs.EvalTriggerNodeUpdate {
		t.Fatalf("node eval: %+v", e)
	}
	h.idle()

	_, _, err = h.leader.RegisterNode(h.ctx, testNode("b", 4000, 8192))
	must(t, err)
	r, err = h.leader.PurgeNode(h.ctx, "node-a")
	if err != nil || len(r.EvalIDs) != 1 || r.NodeModifyIndex == 0 || r.EvalCreateIndex <= r.NodeModifyIndex {
		t.Fatalf("purge: %+v %v", r, err)
	}
	if n, _ := h.store().Snapshot().NodeByID("node-a"); n != nil {
		t.Fatal("purged node still stored")
	}
	h.waitFor("the allocations replaced on node b", func(s *state.Snapshot) bool {
		live := allocsOf(s, "web")
		for _, a := range live {
			if a.NodeID != "node-b" {
				return false
			}
		}
		return len(live) == 2
	})
	if _, err := h.leader.PurgeNode(h.ctx, "node-a"); !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("purge again: %v", err)
	}
}

func TestEvaluateJob(t *testing.T) {
	h := newHarness(t)
	h.start()
	if _, err := h.leader.EvaluateJob(h.ctx, "", "web", false); !errors.Is(err, ErrJobNotFound) {
		t.Fatalf("unknown job: %v", err)
	}
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 4000, 8192))
	must(t, err)
	reg, err := h.leader.RegisterJob(h.ctx, testJob("web", 1, 100))
	must(t, err)
	h.waitFor("an allocation", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 1 })
	h.idle()

	r, err := h.leader.EvaluateJob(h.ctx, "default", "web", true)
	if err != nil || r.EvalID == "" || r.EvalID == reg.EvalID || r.Index == 0 {
		t.Fatalf("evaluate: %+v %v", r, err)
	}
	e, _ := h.store().Snapshot().EvalByID(r.EvalID)
	if e == nil || e.TriggeredBy != structs.EvalTriggerJobRegister || e.Priority != 50 || e.Type != structs.JobTypeService {
		t.Fatalf("eval: %+v", e)
	}
	h.idle()

	p := testJob("cron", 1, 100)
	p.Type = structs.JobTypeBatch
	p.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "0 0 * * *"}
	_, err = h.leader.RegisterJob(h.ctx, p)
	must(t, err)
	if _, err := h.leader.EvaluateJob(h.ctx, "default", "cron", false); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("periodic job: %v", err)
	}
}

// TestEvaluateJobForcesRescheduleOfFailedAllocs: with ForceReschedule,
// the failed allocations that were not replaced, of a group whose policy
// reschedules, are marked in the evaluation's entry; the others are not.
func TestEvaluateJobForcesRescheduleOfFailedAllocs(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	node := statetest.Node("a")
	job := statetest.Job("web", 3)
	job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{Attempts: 2, Interval: time.Hour}
	eval := statetest.Eval("web-1", job)
	_, _, err := h.raft.Apply(ctx, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	must(t, err)
	_, _, err = h.raft.Apply(ctx, fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval})
	must(t, err)
	stored, _ := h.store().Snapshot().JobByID("default", "web")
	failed := statetest.Alloc(stored, node, eval.ID, "", 0)
	replaced := statetest.Alloc(stored, node, eval.ID, "", 1)
	running := statetest.Alloc(stored, node, eval.ID, "", 2)
	_, _, err = h.raft.Apply(ctx, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: eval.ID, Job: stored, AllocsPlaced: []*structs.Allocation{failed, replaced, running}})
	must(t, err)
	var updates []*structs.Allocation
	for _, a := range []*structs.Allocation{failed, replaced, running} {
		u := a.Copy()
		u.ClientStatus = structs.AllocClientStatusFailed
		if a == running {
			u.ClientStatus = structs.AllocClientStatusRunning
		}
		updates = append(updates, u)
	}
	_, _, err = h.raft.Apply(ctx, fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{Allocs: updates})
	must(t, err)
	r := h.store().Snapshot()
	rep, _ := r.AllocByID(replaced.ID)
	rc := rep.Copy()
	rc.NextAllocation = "later"
	_, _, err = h.raft.Apply(ctx, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: eval.ID, Job: stored, AllocsUpdated: []*structs.Allocation{rc}})
	must(t, err)

	out, err := h.leader.EvaluateJob(ctx, "default", "web", true)
	if err != nil || out.EvalID == "" {
		t.Fatalf("evaluate: %+v %v", out, err)
	}
	s := h.store().Snapshot()
	for _, c := range []struct {
		id    string
		force bool
	}{{failed.ID, true}, {replaced.ID, false}, {running.ID, false}} {
		a, _ := s.AllocByID(c.id)
		if a.DesiredTransition.ShouldForceReschedule() != c.force {
			t.Errorf("alloc %s (%s, next %q): force reschedule %v, want %v", a.Name, a.ClientStatus, a.NextAllocation,
				a.DesiredTransition.ShouldForceReschedule(), c.force)
		}
	}
	if e, _ := s.EvalByID(out.EvalID); e == nil || e.JobID != "web" {
		t.Fatalf("eval: %+v", e)
	}
}
