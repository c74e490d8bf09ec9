package state

import (
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func TestUpdateAllocDesiredTransition(t *testing.T) {
	s := newStore(t)
	node := statetest.Node("n1")
	must(t, s.UpsertNode(1, node))
	job := registerJob(t, s, 2, statetest.Job("web", 2))
	a0 := statetest.Alloc(job, node, "e", "", 0)
	a1 := statetest.Alloc(job, node, "e", "", 1)
	yes, no := true, false
	a1.DesiredTransition.Migrate = &yes
	must(t, s.UpsertAllocs(3, []*structs.Allocation{a0, a1}, 30))

	eval := statetest.Eval("transition", job)
	req := &structs.AllocUpdateDesiredTransitionRequest{
		Allocs: map[string]*structs.DesiredTransition{
			a0.ID:     {Reschedule: &yes},
			a1.ID:     {Reschedule: &yes, Migrate: &no},
			"missing": {Reschedule: &yes},
		},
		Evals:     []*structs.Evaluation{eval},
		UpdatedAt: 40,
	}
	must(t, s.UpdateAllocDesiredTransition(4, req))

	snap := s.Snapshot()
	got0 := get[*structs.Allocation](t)(snap.AllocByID(a0.ID))
	if !got0.DesiredTransition.ShouldReschedule() || got0.DesiredTransition.Migrate != nil {
		t.Fatalf("alloc 0 transition = %+v", got0.DesiredTransition)
	}
	if got0.ModifyIndex != 4 || got0.ModifyTime != 40 || got0.CreateIndex != 3 {
		t.Fatalf("alloc 0 indexes: create %d modify %d time %d", got0.CreateIndex, got0.ModifyIndex, got0.ModifyTime)
	}
	got1 := get[*structs.Allocation](t)(snap.AllocByID(a1.ID))
	if !got1.DesiredTransition.ShouldReschedule() || got1.DesiredTransition.ShouldMigrate() {
		t.Fatalf("alloc 1 transition = %+v, want reschedule and migrate cleared", got1.DesiredTransition)
	}
	if e := get[*structs.Evaluation](t)(snap.EvalByID(eval.ID)); e == nil || e.CreateIndex != 4 {
		t.Fatalf("eval = %+v, want stored at 4", e)
	}
	if a := get[*structs.Allocation](t)(snap.AllocByID("missing")); a != nil {
		t.Fatalf("unknown alloc was created: %+v", a)
	}
	// The request is not aliased by the store.
	yes = false
	if !get[*structs.Allocation](t)(s.Snapshot().AllocByID(a0.ID)).DesiredTransition.ShouldReschedule() {
		t.Fatal("stored transition aliases the request")
	}
}

func TestUpdateAllocDesiredTransitionBadEvalAborts(t *testing.T) {
	s := newStore(t)
	node := statetest.Node("n1")
	must(t, s.UpsertNode(1, node))
	job := registerJob(t, s, 2, statetest.Job("web", 1))
	a0 := statetest.Alloc(job, node, "e", "", 0)
	must(t, s.UpsertAllocs(3, []*structs.Allocation{a0}, 30))
	yes := true
	err := s.UpdateAllocDesiredTransition(4, &structs.AllocUpdateDesiredTransitionRequest{
		Allocs: map[string]*structs.DesiredTransition{a0.ID: {Reschedule: &yes}},
		Evals:  []*structs.Evaluation{{}}, // no ID
	})
	if err == nil {
		t.Fatal("want an error for an eval without ID")
	}
	if got := get[*structs.Allocation](t)(s.Snapshot().AllocByID(a0.ID)); got.DesiredTransition.ShouldReschedule() {
		t.Fatal("transition applied although the entry failed")
	}
}
