package server

import (
	"testing"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

func TestJobPlacedOnReadyNodes(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx := h.ctx
	for _, n := range []string{"a", "b"} {
		if _, _, err := h.leader.RegisterNode(ctx, testNode(n, 4000, 4096)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := h.leader.RegisterJob(ctx, testJob("web", 3, 100))
	must(t, err)
	h.waitFor("3 allocs and a complete eval", func(s *state.Snapshot) bool {
		e, _ := s.EvalByID(res.EvalID)
		return len(allocsOf(s, "web")) == 3 && e != nil && e.Status == structs.EvalStatusComplete
	})
	snap := h.store().Snapshot()
	nodes := map[string]int{}
	for _, a := range allocsOf(snap, "web") {
		nodes[a.NodeID]++
		if a.DesiredStatus != structs.AllocDesiredStatusRun || a.Job == nil || a.Job.Version != 0 {
			t.Fatalf("alloc %s: desired %s job %v", a.Name, a.DesiredStatus, a.Job)
		}
		if a.DeploymentID == "" {
			t.Fatalf("alloc %s has no deployment", a.Name)
		}
	}
	if len(nodes) == 0 || nodes["node-a"]+nodes["node-b"] != 3 {
		t.Fatalf("allocs per node = %v", nodes)
	}
	e, _ := snap.EvalByID(res.EvalID)
	if e.QueuedAllocations["web"] != 0 || len(e.FailedTGAllocs) != 0 || e.BlockedEval != "" {
		t.Fatalf("eval = %+v", e)
	}
	if n := h.raft.entries(fsmPlanType); n != 1 {
		t.Fatalf("%d plan entries, want 1", n)
	}
	// The evaluation completed in its plan's entry, not in one of its own.
	for _, a := range allocsOf(snap, "web") {
		if a.CreateIndex != e.ModifyIndex {
			t.Fatalf("alloc %s created at %d, eval completed at %d: want one entry", a.Name, a.CreateIndex, e.ModifyIndex)
		}
	}
}

func TestBlockedEvalPlacedWhenNodeJoins(t *testing.T) {
	h := newHarness(t)
	h.start()
	ctx := h.ctx
	// One node with room for two of the three allocs.
	_, _, err := h.leader.RegisterNode(ctx, testNode("a", 1000, 4096))
	must(t, err)
	res, err := h.leader.RegisterJob(ctx, testJob("web", 3, 400))
	must(t, err)
	var blockedID string
	h.waitFor("a blocked eval", func(s *state.Snapshot) bool {
		e, _ := s.EvalByID(res.EvalID)
		if e == nil || e.Status != structs.EvalStatusComplete || e.BlockedEval == "" {
			return false
		}
		b, _ := s.EvalByID(e.BlockedEval)
		blockedID = e.BlockedEval
		return b != nil && b.Status == structs.EvalStatusBlocked
	})
	snap := h.store().Snapshot()
	e, _ := snap.EvalByID(res.EvalID)
	if m := e.FailedTGAllocs["web"]; m == nil || m.DimensionExhausted["cpu"] == 0 {
		t.Fatalf("FailedTGAllocs = %+v, want web exhausted on cpu", e.FailedTGAllocs)
	}
	if e.QueuedAllocations["web"] != 1 {
		t.Fatalf("QueuedAllocations = %v, want web=1", e.QueuedAllocations)
	}
	if n := len(allocsOf(snap, "web")); n != 2 {
		t.Fatalf("%d allocs placed, want 2", n)
	}

	_, _, err = h.leader.RegisterNode(ctx, testNode("b", 1000, 4096))
	must(t, err)
	h.waitFor("the third alloc on the new node", func(s *state.Snapshot) bool {
		b, _ := s.EvalByID(blockedID)
		return len(allocsOf(s, "web")) == 3 && b != nil && b.Status == structs.EvalStatusComplete
	})
	for _, a := range allocsOf(h.store().Snapshot(), "web") {
		if a.EvalID == blockedID && a.NodeID != "node-b" {
			t.Fatalf("alloc placed by the blocked eval on %s", a.NodeID)
		}
	}
}

func TestPlanRejectedWhenNodeWentDown(t *testing.T) {
	h := newHarness(t)
	// The first plan finds its node gone down between placement and
	// commit; the worker plans again and lands elsewhere.
	var downed string
	h.leader.beforePlanCheck = func(p *planSubmission) {
		if downed != "" || len(p.placed) == 0 {
			return
		}
		downed = p.placed[0].NodeID
		if _, err := h.leader.UpdateNodeStatus(h.ctx, downed, structs.NodeStatusDown, "test"); err != nil {
			t.Error(err)
		}
	}
	h.start()
	for _, n := range []string{"a", "b"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 1000, 4096))
		must(t, err)
	}
	res, err := h.leader.RegisterJob(h.ctx, testJob("web", 1, 400))
	must(t, err)
	h.waitFor("the alloc placed and the eval complete", func(s *state.Snapshot) bool {
		e, _ := s.EvalByID(res.EvalID)
		return e != nil && e.Terminal() && len(allocsOf(s, "web")) == 1
	})
	snap := h.store().Snapshot()
	a := allocsOf(snap, "web")[0]
	if downed == "" || a.NodeID == downed {
		t.Fatalf("alloc on %s, the node taken down was %q", a.NodeID, downed)
	}
	e, _ := snap.EvalByID(res.EvalID)
	if e.Status != structs.EvalStatusComplete || e.ModifyIndex != a.CreateIndex {
		t.Fatalf("eval status %s at %d, alloc placed at %d: want complete with the accepted plan", e.Status, e.ModifyIndex, a.CreateIndex)
	}
	all, _ := snap.AllocsByNode(downed)
	if len(all) != 0 {
		t.Fatalf("%d allocs committed on the down node", len(all))
	}
}

func TestLeadershipLossStopsEverything(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.NumWorkers = 4 })
	h.start()
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 4000, 4096))
	must(t, err)
	_, err = h.leader.RegisterJob(h.ctx, testJob("web", 2, 100))
	must(t, err)
	h.idle()
	if !h.leader.Leading() {
		t.Fatal("not leading while Run runs")
	}
	h.stop()
	if h.leader.Leading() {
		t.Fatal("still leading after the term ended")
	}
	if _, err := h.leader.NodeHeartbeat(h.ctx, "node-a"); err != ErrNotLeader {
		t.Fatalf("heartbeat after the term: %v, want ErrNotLeader", err)
	}
	if g := leaked(); len(g) > 0 {
		t.Fatalf("%d goroutines left after Run returned:\n%s", len(g), g[0])
	}
	// A new term starts again from state.
	h.start()
	if _, err := h.leader.NodeHeartbeat(h.ctx, "node-a"); err != nil {
		t.Fatalf("heartbeat in the new term: %v", err)
	}
}
