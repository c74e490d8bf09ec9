package server

import (
	"errors"
	"testing"

	"github.com/droverhq/drover/state"
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
