package server

import (
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// disconnectSetup registers three nodes with room for one alloc each and
// a job of two allocs whose group tolerates a disconnection for
// lostAfter, waits for both, then lets the node of one of them (the
// victim) miss its heartbeats until it is disconnected. It returns the
// victim and when its node disconnected.
func disconnectSetup(t *testing.T, h *harness, d *structs.DisconnectStrategy) (*structs.Allocation, time.Time) {
	t.Helper()
	for _, n := range []string{"a", "b", "c"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 1000, 4096))
		must(t, err)
	}
	job := testJob("web", 2, 600)
	job.TaskGroups[0].Disconnect = d
	_, err := h.leader.RegisterJob(h.ctx, job)
	must(t, err)
	h.waitFor("two allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 2 })
	settled(h)
	victim := allocsOf(h.store().Snapshot(), "web")[0]
	beatFor(t, h, 12*time.Second+h.leader.cfg.HeartbeatGrace, victim.NodeID)
	h.waitFor("the victim's node disconnected", func(s *state.Snapshot) bool {
		n, _ := s.NodeByID(victim.NodeID)
		return n.Status == structs.NodeStatusDisconnected
	})
	n, _ := h.store().Snapshot().NodeByID(victim.NodeID)
	return victim, time.Unix(0, n.StatusUpdatedAt)
}

// beatFor advances the clock by d in steps of 5s, every registered node
// but the silent one heartbeating at each step.
func beatFor(t *testing.T, h *harness, d time.Duration, silent string) {
	t.Helper()
	for left := d; left > 0; left -= 5 * time.Second {
		step := min(left, 5*time.Second)
		h.clock.Advance(step)
		nodes, err := h.store().Snapshot().Nodes()
		must(t, err)
		for _, n := range nodes {
			if n.ID != silent {
				_, err := h.leader.NodeHeartbeat(h.ctx, n.ID)
				must(t, err)
			}
		}
	}
}

// settled waits until every evaluation is terminal, blocked, or waits
// for a later time (a follow-up).
func settled(h *harness) {
	h.t.Helper()
	h.waitFor("evaluations to settle", func(s *state.Snapshot) bool {
		evals, _ := s.Evals()
		for _, e := range evals {
			if !e.Terminal() && e.Status != structs.EvalStatusBlocked && !e.WaitUntil.After(h.clock.Now()) {
				return false
			}
		}
		return true
	})
}

// TestDisconnectUnknownThenLost: a node that misses its heartbeats with
// an alloc whose group has lost_after is disconnected, not down; the alloc
// is unknown (when, recorded in AllocStates) and replaced at once, and a
// follow-up evaluation is due at the end of lost_after. Then the alloc is
// lost and the node down.
func TestDisconnectUnknownThenLost(t *testing.T) {
	h := newHarness(t)
	h.start()
	victim, since := disconnectSetup(t, h, &structs.DisconnectStrategy{LostAfter: 2 * time.Minute, Replace: true, Reconcile: structs.ReconcileBestScore})
	h.waitFor("a replacement beside the unknown alloc", func(s *state.Snapshot) bool {
		a, _ := s.AllocByID(victim.ID)
		return a.ClientStatus == structs.AllocClientStatusUnknown && len(allocsOf(s, "web")) == 3
	})
	settled(h)
	snap := h.store().Snapshot()
	a, _ := snap.AllocByID(victim.ID)
	if at, ok := a.LastClientStatusAt(structs.AllocClientStatusUnknown); !ok || !at.Equal(since) ||
		a.DesiredStatus != structs.AllocDesiredStatusRun || a.ClientDescription != structs.AllocUnknown {
		t.Fatalf("unknown alloc: %+v states %+v", a, a.AllocStates)
	}
	var repl *structs.Allocation
	for _, x := range allocsOf(snap, "web") {
		if x.PreviousAllocation == victim.ID {
			repl = x
		}
	}
	if repl == nil || repl.NodeID == victim.NodeID {
		t.Fatalf("no replacement off the disconnected node: %+v", repl)
	}
	f, _ := snap.EvalByID(a.FollowupEvalID)
	if f == nil || f.TriggeredBy != structs.EvalTriggerMaxDisconnectTimeout || !f.WaitUntil.Equal(since.Add(2*time.Minute)) {
		t.Fatalf("follow-up %+v", f)
	}
	if _, err := h.leader.NodeHeartbeat(h.ctx, victim.NodeID); !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("a disconnected node's heartbeat: %v (it must register again)", err)
	}

	beatFor(t, h, 2*time.Minute, victim.NodeID)
	h.waitFor("the alloc lost and the node down", func(s *state.Snapshot) bool {
		a, _ := s.AllocByID(victim.ID)
		n, _ := s.NodeByID(victim.NodeID)
		return a.ClientStatus == structs.AllocClientStatusLost && a.DesiredStatus == structs.AllocDesiredStatusStop &&
			n.Status == structs.NodeStatusDown
	})
	settled(h)
	if got := allocsOf(h.store().Snapshot(), "web"); len(got) != 2 {
		t.Fatalf("%d allocs after the loss, want 2 (the replacement kept)", len(got))
	}
}

// TestDisconnectReconnectKeepsOriginal: the node comes back within
// lost_after (it registers again and its client reports the alloc
// running); with reconcile = keep_original the replacement stops.
func TestDisconnectReconnectKeepsOriginal(t *testing.T) {
	h := newHarness(t)
	h.start()
	victim, _ := disconnectSetup(t, h, &structs.DisconnectStrategy{LostAfter: 10 * time.Minute, Replace: true, Reconcile: structs.ReconcileKeepOriginal})
	h.waitFor("a replacement", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 3 })
	settled(h)
	beatFor(t, h, 30*time.Second, victim.NodeID)

	n, _ := h.store().Snapshot().NodeByID(victim.NodeID)
	c := n.Copy()
	c.Status = structs.NodeStatusReady
	_, _, err := h.leader.RegisterNode(h.ctx, c)
	must(t, err)
	_, err = h.leader.UpdateAllocsFromClient(h.ctx, []*structs.Allocation{{ID: victim.ID, ClientStatus: structs.AllocClientStatusRunning}})
	must(t, err)
	h.waitFor("the replacement stopped", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 2 })
	settled(h)
	snap := h.store().Snapshot()
	a, _ := snap.AllocByID(victim.ID)
	if a.ClientStatus != structs.AllocClientStatusRunning || a.DesiredStatus != structs.AllocDesiredStatusRun || len(a.UnknownIntervals()) != 1 ||
		a.UnknownIntervals()[0][1].IsZero() {
		t.Fatalf("original: %s/%s states %+v", a.ClientStatus, a.DesiredStatus, a.AllocStates)
	}
	all, _ := snap.AllocsByJob(structs.DefaultNamespace, "web")
	for _, x := range all {
		if x.PreviousAllocation == victim.ID && (x.DesiredStatus != structs.AllocDesiredStatusStop || x.DesiredDescription != structs.AllocReconnected) {
			t.Fatalf("replacement %s/%q", x.DesiredStatus, x.DesiredDescription)
		}
	}
	evals, _ := snap.Evals()
	found := false
	for _, e := range evals {
		found = found || e.TriggeredBy == structs.EvalTriggerReconnect
	}
	if !found {
		t.Fatal("no reconnect evaluation")
	}
}

// TestDisconnectTimersSurviveLeaderChange: the disconnection time is in
// state: a new leader marks the node down and the alloc lost at the end of
// lost_after (plus its grace for the node), not lost_after from its own
// start.
func TestDisconnectTimersSurviveLeaderChange(t *testing.T) {
	h := newHarness(t)
	h.start()
	victim, since := disconnectSetup(t, h, &structs.DisconnectStrategy{LostAfter: 2 * time.Minute, Replace: true, Reconcile: structs.ReconcileBestScore})
	settled(h)
	beatFor(t, h, time.Minute, victim.NodeID)
	h.stop()
	h.start()
	// The other nodes were given TTL + grace by the new leader.
	beatFor(t, h, 55*time.Second, victim.NodeID)
	if a, _ := h.store().Snapshot().AllocByID(victim.ID); a.ClientStatus != structs.AllocClientStatusUnknown {
		t.Fatalf("lost before lost_after: %s at %v after the disconnection", a.ClientStatus, h.clock.Now().Sub(since))
	}
	beatFor(t, h, 10*time.Second, victim.NodeID)
	h.waitFor("the alloc lost at the end of lost_after", func(s *state.Snapshot) bool {
		a, _ := s.AllocByID(victim.ID)
		return a.ClientStatus == structs.AllocClientStatusLost
	})
	if n, _ := h.store().Snapshot().NodeByID(victim.NodeID); n.Status != structs.NodeStatusDisconnected {
		t.Fatalf("node %s before its grace", n.Status)
	}
	beatFor(t, h, 20*time.Second, victim.NodeID)
	h.waitFor("the node down", func(s *state.Snapshot) bool {
		n, _ := s.NodeByID(victim.NodeID)
		return n.Status == structs.NodeStatusDown && n.StatusDescription == NodeDisconnectOver
	})
}

// TestNoDisconnectWithoutLostAfter: a node whose allocs do not tolerate a
// disconnection goes down at once, as before.
func TestNoDisconnectWithoutLostAfter(t *testing.T) {
	h := newHarness(t)
	h.start()
	for _, n := range []string{"a", "b"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 1000, 4096))
		must(t, err)
	}
	_, err := h.leader.RegisterJob(h.ctx, testJob("web", 1, 600))
	must(t, err)
	h.waitFor("an alloc", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 1 })
	settled(h)
	victim := allocsOf(h.store().Snapshot(), "web")[0]
	beatFor(t, h, 12*time.Second+h.leader.cfg.HeartbeatGrace, victim.NodeID)
	h.waitFor("the node down", func(s *state.Snapshot) bool {
		n, _ := s.NodeByID(victim.NodeID)
		return n.Status == structs.NodeStatusDown
	})
}
