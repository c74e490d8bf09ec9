package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

func TestHeartbeatExpiryMarksNodeDownAndReplaces(t *testing.T) {
	h := newHarness(t)
	h.start()
	// Each node has room for one alloc.
	for _, n := range []string{"a", "b", "c"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 1000, 4096))
		must(t, err)
	}
	_, err := h.leader.RegisterJob(h.ctx, testJob("web", 2, 600))
	must(t, err)
	h.waitFor("two allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 2 })
	h.idle()
	snap := h.store().Snapshot()
	victim := allocsOf(snap, "web")[0]

	beat := func(except string) {
		for _, n := range []string{"node-a", "node-b", "node-c"} {
			if n == except {
				continue
			}
			ttl, err := h.leader.NodeHeartbeat(h.ctx, n)
			must(t, err)
			if ttl != 10*time.Second {
				t.Fatalf("ttl = %v", ttl)
			}
		}
	}
	// Half a TTL: everyone heartbeats; nobody is down.
	h.clock.Advance(6 * time.Second)
	beat("")
	h.clock.Advance(6 * time.Second)
	beat(victim.NodeID)
	if n, _ := h.store().Snapshot().NodeByID(victim.NodeID); n.Status != structs.NodeStatusReady {
		t.Fatalf("victim is %s before its TTL passed", n.Status)
	}
	// The victim stays silent past its TTL and the grace.
	h.clock.Advance(5*time.Second + h.leader.cfg.HeartbeatGrace)
	h.waitFor("the victim down and its alloc replaced", func(s *state.Snapshot) bool {
		n, _ := s.NodeByID(victim.NodeID)
		return n.Status == structs.NodeStatusDown && len(allocsOf(s, "web")) == 2 &&
			allocsOf(s, "web")[0].ID != victim.ID && allocsOf(s, "web")[1].ID != victim.ID
	})
	h.idle()
	snap = h.store().Snapshot()
	old, _ := snap.AllocByID(victim.ID)
	if old.ClientStatus != structs.AllocClientStatusLost || old.DesiredStatus != structs.AllocDesiredStatusStop {
		t.Fatalf("victim alloc: client %s desired %s", old.ClientStatus, old.DesiredStatus)
	}
	for _, a := range allocsOf(snap, "web") {
		if a.NodeID == victim.NodeID {
			t.Fatalf("replacement placed on the down node")
		}
	}
	n, _ := snap.NodeByID(victim.NodeID)
	if n.StatusDescription != NodeHeartbeatMissed {
		t.Fatalf("description %q", n.StatusDescription)
	}
	for _, id := range []string{"node-a", "node-b", "node-c"} {
		if id == victim.NodeID {
			continue
		}
		if n, _ := snap.NodeByID(id); n.Status != structs.NodeStatusReady {
			t.Fatalf("%s is %s", id, n.Status)
		}
	}
}

func TestLeadershipGainGivesGrace(t *testing.T) {
	h := newHarness(t)
	h.start()
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 1000, 4096))
	must(t, err)
	h.stop()

	// A new term: the node's last heartbeat went to the old leader.
	h.start()
	if got := h.leader.cur.Load().beats.armed(); got != 1 {
		t.Fatalf("%d timers armed, want 1", got)
	}
	// The node's only timer is due at TTL + grace, not at TTL.
	if due := h.clock.pending(); len(due) != 1 || due[0] != 30*time.Second {
		t.Fatalf("pending timers due in %v, want [30s]", due)
	}
	h.clock.Advance(25 * time.Second)
	if due := h.clock.pending(); len(due) != 1 {
		t.Fatalf("timer fired within the grace period: pending %v", due)
	}
	h.clock.Advance(6 * time.Second)
	h.waitFor("the node down after TTL + grace", func(s *state.Snapshot) bool {
		n, _ := s.NodeByID("node-a")
		return n.Status == structs.NodeStatusDown
	})
}

func TestHeartbeatTTLScalesWithNodes(t *testing.T) {
	for _, tc := range []struct {
		nodes int
		want  time.Duration
	}{
		{10, 10 * time.Second},
		{500, 10 * time.Second},
		{5000, 100 * time.Second},
	} {
		t.Run(fmt.Sprint(tc.nodes), func(t *testing.T) {
			h := newHarness(t)
			h.start()
			for i := range tc.nodes {
				_, _, err := h.leader.RegisterNode(h.ctx, testNode(fmt.Sprint(i), 1000, 4096))
				must(t, err)
			}
			ttl, err := h.leader.NodeHeartbeat(h.ctx, "node-0")
			must(t, err)
			if ttl != tc.want {
				t.Fatalf("ttl = %v, want %v", ttl, tc.want)
			}
			// The node's timer is armed for that TTL and the grace.
			if due := h.clock.pending(); due[len(due)-1] != tc.want+h.leader.cfg.HeartbeatGrace {
				t.Fatalf("latest timer due in %v, want %v + %v", due[len(due)-1], tc.want, h.leader.cfg.HeartbeatGrace)
			}
		})
	}
}

func TestLeadershipGainGivesScaledTTLPlusGrace(t *testing.T) {
	h := newHarness(t)
	h.start()
	for i := range 1000 {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(fmt.Sprint(i), 1000, 4096))
		must(t, err)
	}
	h.stop()
	h.start()
	// 1,000 nodes at 50/s: 20s, plus 20s of grace.
	due := h.clock.pending()
	if len(due) != 1000 || due[0] != 40*time.Second || due[999] != 40*time.Second {
		t.Fatalf("%d timers pending, first due in %v", len(due), due[0])
	}
}
