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

	resp, err := h.leader.StopAlloc(h.ctx, victim.ID)
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
	if _, err := h.leader.StopAlloc(h.ctx, victim.ID); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("stopping it again: %v", err)
	}
	if _, err := h.leader.StopAlloc(h.ctx, "nope"); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("an unknown alloc: %v", err)
	}
	if h.raft.entries(fsm.AllocUpdateDesiredTransitionRequestType) != before {
		t.Fatal("a refused stop wrote an entry")
	}
}
