package server

import (
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// A drain lives in the replicated state (the node's drain strategy and
// deadline, the allocs' migrate marks): a new term's drainer, rebuilt from
// state alone, goes on with it.

func TestNewTermContinuesDrain(t *testing.T) {
	h := newHarness(t)
	h.start()
	drainSetup(t, h, 4)
	for _, n := range []string{"node-a", "node-b"} {
		_, err := h.leader.UpdateNodeDrain(h.ctx, DrainRequest{NodeID: n, Spec: &structs.DrainSpec{Deadline: time.Hour}})
		must(t, err)
	}
	moveOne(t, h, 4)
	var repl *structs.Allocation
	h.waitFor("the second move under way", func(s *state.Snapshot) bool {
		m := migrating(s, "web")
		if len(m) != 1 {
			return false
		}
		for _, a := range allocsOf(s, "web") {
			if a.PreviousAllocation == m[0].ID {
				repl = a
				return true
			}
		}
		return false
	})
	h.idle()
	h.stop()

	// The old leader's last entry: the replacement's health, written
	// without the pass that stops the old alloc (as if that was lost with
	// the leader). The new term's drainer sees it in state and asks.
	h.ctx = t.Context()
	yes := true
	_, _, err := h.raft.Apply(t.Context(), fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{ID: repl.ID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &yes, Timestamp: h.clock.Now()}}},
		UpdatedAt: h.clock.Now().UnixNano(),
	})
	must(t, err)

	h.start()
	h.waitFor("the new term stopping the alloc the healthy replacement continues", func(s *state.Snapshot) bool {
		a, _ := s.AllocByID(repl.PreviousAllocation)
		return a.DesiredStatus == structs.AllocDesiredStatusStop && a.DesiredDescription == structs.AllocMigrating
	})
	for range 2 {
		moveOne(t, h, 4)
	}
	h.waitFor("both drains complete", func(s *state.Snapshot) bool {
		a, _ := s.NodeByID("node-a")
		b, _ := s.NodeByID("node-b")
		return a.DrainStrategy == nil && b.DrainStrategy == nil
	})
	snap := h.store().Snapshot()
	if got := len(onNode(snap, "web", "node-c")); got != 4 {
		t.Fatalf("%d web allocs on node c after the drain, want 4\n%s", got, h.dump())
	}
	for _, id := range []string{"node-a", "node-b"} {
		if n, _ := snap.NodeByID(id); n.LastDrain.Status != structs.DrainStatusComplete {
			t.Errorf("%s LastDrain %+v", id, n.LastDrain)
		}
	}
}

func TestNewTermForcesDrainWhoseDeadlinePassed(t *testing.T) {
	h := newHarness(t)
	h.start()
	drainSetup(t, h, 4)
	_, err := h.leader.UpdateNodeDrain(h.ctx, DrainRequest{NodeID: "node-a", Spec: &structs.DrainSpec{Deadline: 5 * time.Second}})
	must(t, err)
	h.waitFor("one alloc marked", func(s *state.Snapshot) bool { return len(migrating(s, "web")) == 1 })
	h.idle()
	h.stop()

	// No leader past the deadline: the new term stops what is left at
	// once, from the deadline kept in state.
	h.clock.Advance(6 * time.Second)
	h.start()
	h.waitFor("the drain complete on its deadline", func(s *state.Snapshot) bool {
		n, _ := s.NodeByID("node-a")
		return n.DrainStrategy == nil
	})
	snap := h.store().Snapshot()
	if left := len(onNode(snap, "web", "node-a")) + len(onNode(snap, "agent", "node-a")); left != 0 {
		t.Fatalf("%d allocs left on node-a\n%s", left, h.dump())
	}
	n, _ := snap.NodeByID("node-a")
	if e := n.Events[len(n.Events)-1]; e.Details[structs.NodeDrainEventDetailDeadlined] != "true" {
		t.Fatalf("last event %+v", e)
	}
	if len(allocsOf(snap, "web")) != 4 {
		t.Fatalf("web has %d live allocs, want 4\n%s", len(allocsOf(snap, "web")), h.dump())
	}
}
