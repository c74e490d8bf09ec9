package state

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func drainEvent(msg string, at time.Time) []*structs.NodeEvent {
	return []*structs.NodeEvent{{Message: msg, Subsystem: structs.NodeEventSubsystemDrain, Timestamp: at}}
}

// A drain's life in the store: set (ineligible, LastDrain draining, the
// event stamped with its index), kept by a re-registration, updated,
// completed only by the drainer of that very drain, and LastDrain's
// status at each step.
func TestNodeDrainLifecycle(t *testing.T) {
	s := newStore(t)
	n := statetest.Node("a")
	must(t, s.UpsertNode(1, n))
	got := get[*structs.Node](t)(s.Snapshot().NodeByID(n.ID))
	if len(got.Events) != 1 || got.Events[0].Message != structs.NodeRegisterEventRegistered || got.Events[0].CreateIndex != 1 ||
		!got.Events[0].Timestamp.Equal(statetest.T0) {
		t.Fatalf("registration events: %+v", got.Events)
	}

	start := statetest.T0.Add(time.Minute)
	drain := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}, StartedAt: start, ForceDeadline: start.Add(time.Hour)}
	must(t, s.UpdateNodeDrain(2, &structs.NodeUpdateDrainRequest{
		NodeID: n.ID, DrainStrategy: drain, Meta: map[string]string{"message": "kernel"}, AccessorID: "acc",
		NodeEvents: drainEvent(structs.NodeDrainEventDrainSet, start), UpdatedAt: start.UnixNano(),
	}))
	got = get[*structs.Node](t)(s.Snapshot().NodeByID(n.ID))
	if !got.Drain || got.DrainStrategy == nil || !got.DrainStrategy.ForceDeadline.Equal(start.Add(time.Hour)) ||
		got.SchedulingEligibility != structs.NodeSchedulingIneligible || got.ModifyIndex != 2 {
		t.Fatalf("draining node: %+v", got)
	}
	if ld := got.LastDrain; ld == nil || ld.Status != structs.DrainStatusDraining || !ld.StartedAt.Equal(start) ||
		ld.Meta["message"] != "kernel" || ld.AccessorID != "acc" {
		t.Fatalf("LastDrain: %+v", got.LastDrain)
	}
	if e := got.Events[len(got.Events)-1]; e.Message != structs.NodeDrainEventDrainSet || e.CreateIndex != 2 {
		t.Fatalf("drain event: %+v", e)
	}

	// The client restarts and registers again, eligible and not draining
	// as far as it knows: the servers' decisions stand.
	again := statetest.Node("a")
	again.StatusUpdatedAt = start.Add(time.Second).UnixNano()
	must(t, s.UpsertNode(3, again))
	got = get[*structs.Node](t)(s.Snapshot().NodeByID(n.ID))
	if got.DrainStrategy == nil || !got.Drain || got.SchedulingEligibility != structs.NodeSchedulingIneligible ||
		got.LastDrain == nil || len(got.Events) != 2 {
		t.Fatalf("re-registered node lost its drain: %+v", got)
	}

	// Neither eligibility nor a completion of another drain may end it.
	err := s.UpdateNodeEligibility(4, &structs.NodeUpdateEligibilityRequest{NodeID: n.ID, Eligibility: structs.NodeSchedulingEligible})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("eligible while draining: %v", err)
	}
	err = s.UpdateNodeDrain(4, &structs.NodeUpdateDrainRequest{NodeID: n.ID, DrainComplete: true, DrainStartedAt: statetest.T0, UpdatedAt: 1})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("completion of another drain: %v", err)
	}
	if got := get[*structs.Node](t)(s.Snapshot().NodeByID(n.ID)); got.DrainStrategy == nil || got.ModifyIndex != 3 {
		t.Fatalf("a refused write changed the node: %+v", got)
	}

	done := start.Add(10 * time.Minute)
	must(t, s.UpdateNodeDrain(5, &structs.NodeUpdateDrainRequest{
		NodeID: n.ID, DrainComplete: true, DrainStartedAt: start,
		NodeEvents: drainEvent(structs.NodeDrainEventComplete, done), UpdatedAt: done.UnixNano(),
	}))
	got = get[*structs.Node](t)(s.Snapshot().NodeByID(n.ID))
	if got.Drain || got.DrainStrategy != nil || got.SchedulingEligibility != structs.NodeSchedulingIneligible {
		t.Fatalf("a completed drain leaves the node ineligible, not draining: %+v", got)
	}
	if ld := got.LastDrain; ld.Status != structs.DrainStatusComplete || !ld.StartedAt.Equal(start) || !ld.UpdatedAt.Equal(done) ||
		ld.Meta["message"] != "kernel" {
		t.Fatalf("LastDrain after completion: %+v", ld)
	}

	// Eligible again by hand.
	must(t, s.UpdateNodeEligibility(6, &structs.NodeUpdateEligibilityRequest{NodeID: n.ID, Eligibility: structs.NodeSchedulingEligible,
		NodeEvents: []*structs.NodeEvent{{Message: structs.NodeEligibilityEventEligible, Subsystem: structs.NodeEventSubsystemCluster}}}))
	if got := get[*structs.Node](t)(s.Snapshot().NodeByID(n.ID)); got.SchedulingEligibility != structs.NodeSchedulingEligible || !got.Ready() {
		t.Fatalf("eligible node: %+v", got)
	}
}

// An operator's cancel is "canceled", and MarkEligible makes the node
// eligible; without it the node stays ineligible.
func TestNodeDrainCancel(t *testing.T) {
	for _, mark := range []bool{false, true} {
		t.Run(fmt.Sprint("mark-eligible=", mark), func(t *testing.T) {
			s := newStore(t)
			n := statetest.Node("a")
			must(t, s.UpsertNode(1, n))
			drain := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: -1}, StartedAt: statetest.T0}
			must(t, s.UpdateNodeDrain(2, &structs.NodeUpdateDrainRequest{NodeID: n.ID, DrainStrategy: drain, UpdatedAt: 10}))
			must(t, s.UpdateNodeDrain(3, &structs.NodeUpdateDrainRequest{NodeID: n.ID, MarkEligible: mark, UpdatedAt: 20,
				Meta: map[string]string{"message": "never mind"}}))
			got := get[*structs.Node](t)(s.Snapshot().NodeByID(n.ID))
			want := structs.NodeSchedulingIneligible
			if mark {
				want = structs.NodeSchedulingEligible
			}
			if got.DrainStrategy != nil || got.SchedulingEligibility != want {
				t.Fatalf("cancelled drain: eligibility %q, strategy %+v", got.SchedulingEligibility, got.DrainStrategy)
			}
			if ld := got.LastDrain; ld.Status != structs.DrainStatusCanceled || ld.UpdatedAt.UnixNano() != 20 || ld.Meta["message"] != "never mind" {
				t.Fatalf("LastDrain: %+v", ld)
			}
		})
	}
}

// A node keeps its latest MaxRetainedNodeEvents events, oldest first, and
// an unknown node or eligibility is refused.
func TestNodeEventsAreCappedAndBadRequestsRefused(t *testing.T) {
	s := newStore(t)
	n := statetest.Node("a")
	must(t, s.UpsertNode(1, n))
	for i := range 15 {
		elig := []string{structs.NodeSchedulingIneligible, structs.NodeSchedulingEligible}[i%2]
		must(t, s.UpdateNodeEligibility(uint64(2+i), &structs.NodeUpdateEligibilityRequest{NodeID: n.ID, Eligibility: elig,
			NodeEvents: []*structs.NodeEvent{{Message: fmt.Sprint("event ", i), Subsystem: structs.NodeEventSubsystemCluster}}}))
	}
	got := get[*structs.Node](t)(s.Snapshot().NodeByID(n.ID))
	if len(got.Events) != structs.MaxRetainedNodeEvents || got.Events[0].Message != "event 5" || got.Events[9].Message != "event 14" ||
		got.Events[9].CreateIndex != 16 {
		t.Fatalf("events: first %+v last %+v (%d)", got.Events[0], got.Events[len(got.Events)-1], len(got.Events))
	}
	if err := s.UpdateNodeDrain(40, &structs.NodeUpdateDrainRequest{NodeID: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("drain of an unknown node: %v", err)
	}
	if err := s.UpdateNodeEligibility(40, &structs.NodeUpdateEligibilityRequest{NodeID: "nope", Eligibility: structs.NodeSchedulingEligible}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("eligibility of an unknown node: %v", err)
	}
	if err := s.UpdateNodeEligibility(40, &structs.NodeUpdateEligibilityRequest{NodeID: n.ID, Eligibility: "maybe"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown eligibility: %v", err)
	}
}
