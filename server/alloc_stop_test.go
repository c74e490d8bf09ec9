package server

import (
	"errors"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// StopAlloc marks the allocation for migration with an alloc-stop
// evaluation of its job, in one entry; the scheduler stops it and places
// a replacement on the node (the only one), the job keeping its count. A
// stopped or unknown allocation is refused with nothing written.
func TestStopAllocReplacesIt(t *testing.T) {
	h := newHarness(t)
	h.start()
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 8000, 8192))
	must(t, err)
	_, err = h.leader.RegisterJob(h.ctx, testJob("web", 2, 100))
	must(t, err)
	h.waitFor("two allocations", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 2 })
	h.idle()
	victim := allocsOf(h.store().Snapshot(), "web")[0]

	resp, err := h.leader.StopAlloc(h.ctx, victim.ID, structs.AllocStopOptions{})
	must(t, err)
	eval, err := h.store().Snapshot().EvalByID(resp.EvalID)
	must(t, err)
	if eval == nil || eval.TriggeredBy != structs.EvalTriggerAllocStop || eval.JobID != "web" || resp.Index == 0 {
		t.Fatalf("eval %+v, response %+v", eval, resp)
	}
	h.waitFor("the replacement", func(s *state.Snapshot) bool {
		old, _ := s.AllocByID(victim.ID)
		live := allocsOf(s, "web")
		if old.DesiredStatus != structs.AllocDesiredStatusStop || len(live) != 2 {
			return false
		}
		for _, a := range live {
			if a.PreviousAllocation == victim.ID && a.Name == victim.Name && a.NodeID == victim.NodeID {
				return true
			}
		}
		return false
	})
	old, _ := h.store().Snapshot().AllocByID(victim.ID)
	if !old.DesiredTransition.ShouldMigrate() {
		t.Fatalf("stopped alloc's transition %+v", old.DesiredTransition)
	}

	before := h.raft.entries(fsm.AllocUpdateDesiredTransitionRequestType)
	if _, err := h.leader.StopAlloc(h.ctx, victim.ID, structs.AllocStopOptions{}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("stopping it again: %v", err)
	}
	if _, err := h.leader.StopAlloc(h.ctx, "nope", structs.AllocStopOptions{}); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("an unknown alloc: %v", err)
	}
	if h.raft.entries(fsm.AllocUpdateDesiredTransitionRequestType) != before {
		t.Fatal("a refused stop wrote an entry")
	}
}

// Nomad's alloc stop options mark the stopped allocation: reschedule as
// well as migrate, and NoShutdownDelay; without them, migrate only. The
// replacement comes as for any stop.
func TestStopAllocMarks(t *testing.T) {
	h, allocs := idleWithAllocs(t, 2)
	_, err := h.leader.StopAlloc(h.ctx, allocs[0].ID, structs.AllocStopOptions{Reschedule: true, NoShutdownDelay: true})
	must(t, err)
	_, err = h.leader.StopAlloc(h.ctx, allocs[1].ID, structs.AllocStopOptions{})
	must(t, err)
	snap := h.store().Snapshot()
	marked, _ := snap.AllocByID(allocs[0].ID)
	plain, _ := snap.AllocByID(allocs[1].ID)
	if d := marked.DesiredTransition; !d.ShouldMigrate() || !d.ShouldReschedule() || d.NoShutdownDelay == nil || !*d.NoShutdownDelay {
		t.Fatalf("marked: %+v", d)
	}
	if d := plain.DesiredTransition; !d.ShouldMigrate() || d.Reschedule != nil || d.NoShutdownDelay != nil {
		t.Fatalf("plain: %+v", d)
	}
	h.waitFor("both replaced", func(s *state.Snapshot) bool {
		live := allocsOf(s, "web")
		return len(live) == 2 && live[0].ID != allocs[0].ID && live[0].ID != allocs[1].ID && live[1].ID != allocs[0].ID && live[1].ID != allocs[1].ID
	})
}
