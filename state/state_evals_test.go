package state

import (
	"errors"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func TestUpsertEvals(t *testing.T) {
	s := newStore(t)
	job := statetest.Job("web", 1)
	e1, e2 := statetest.Eval("one", job), statetest.Eval("two", job)
	must(t, s.UpsertEvals(3, []*structs.Evaluation{e1, e2}))
	blocked := e1.Copy()
	blocked.Status = structs.EvalStatusBlocked
	must(t, s.UpsertEvals(4, []*structs.Evaluation{blocked}))
	snap := s.Snapshot()
	got := get[*structs.Evaluation](t)(snap.EvalByID(e1.ID))
	if got.Status != structs.EvalStatusBlocked || got.CreateIndex != 3 || got.ModifyIndex != 4 {
		t.Fatalf("updated eval = %s %d/%d", got.Status, got.CreateIndex, got.ModifyIndex)
	}
	if n := len(get[[]*structs.Evaluation](t)(snap.EvalsByJob("default", "web"))); n != 2 {
		t.Fatalf("EvalsByJob = %d", n)
	}
	if n := len(get[[]*structs.Evaluation](t)(snap.EvalsByJob("default", "we"))); n != 0 {
		t.Fatalf("EvalsByJob matched a prefix of the job ID: %d", n)
	}
	if n := len(get[[]*structs.Evaluation](t)(snap.Evals())); n != 2 {
		t.Fatalf("Evals = %d", n)
	}
	if n := len(get[[]*structs.Evaluation](t)(snap.EvalsByIDPrefix(e2.ID[:5]))); n != 1 {
		t.Fatalf("EvalsByIDPrefix = %d", n)
	}
	if get[uint64](t)(snap.Index(TableEvals)) != 4 {
		t.Fatal("evals index not bumped")
	}
	if err := s.UpsertEvals(5, []*structs.Evaluation{nil}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("nil eval: err = %v", err)
	}
}
