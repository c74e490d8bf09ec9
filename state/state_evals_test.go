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
	// Since index 3, only the eval rewritten at 4; since 2, both, in
	// the order of their writes.
	since := func(idx uint64) (ids []string) {
		for _, e := range get[[]*structs.Evaluation](t)(snap.EvalsModifiedAfter(idx)) {
			ids = append(ids, e.ID)
		}
		return ids
	}
	if got := since(3); len(got) != 1 || got[0] != e1.ID {
		t.Fatalf("EvalsModifiedAfter(3) = %v, want [%s]", got, e1.ID)
	}
	if got := since(2); len(got) != 2 || got[0] != e2.ID || got[1] != e1.ID {
		t.Fatalf("EvalsModifiedAfter(2) = %v, want [%s %s]", got, e2.ID, e1.ID)
	}
	if got := since(4); len(got) != 0 {
		t.Fatalf("EvalsModifiedAfter(4) = %v, want none", got)
	}
	if get[uint64](t)(snap.Index(TableEvals)) != 4 {
		t.Fatal("evals index not bumped")
	}
	if err := s.UpsertEvals(5, []*structs.Evaluation{nil}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("nil eval: err = %v", err)
	}
}

func TestReap(t *testing.T) {
	s := newStore(t)
	n := statetest.Node("a")
	job := statetest.Job("web", 1)
	eval := statetest.Eval("e", job)
	_, err := s.RegisterJob(1, &structs.JobRegisterRequest{Job: job, Eval: eval})
	must(t, err)
	stored := get[*structs.Job](t)(s.Snapshot().JobByID("default", "web"))
	a := statetest.Alloc(stored, n, eval.ID, "", 0)
	must(t, s.UpsertAllocs(2, []*structs.Allocation{a}, 1))
	must(t, s.Reap(3, &structs.EvalReapRequest{Evals: []string{eval.ID, "gone"}, Allocs: []string{a.ID, "gone"}}))
	snap := s.Snapshot()
	if e := get[*structs.Evaluation](t)(snap.EvalByID(eval.ID)); e != nil {
		t.Fatal("eval not reaped")
	}
	if x := get[*structs.Allocation](t)(snap.AllocByID(a.ID)); x != nil {
		t.Fatal("alloc not reaped")
	}
	// Nothing left after garbage collection: dead, as Nomad.
	if j := get[*structs.Job](t)(snap.JobByID("default", "web")); j.Status != structs.JobStatusDead {
		t.Fatalf("status after reaping everything = %q", j.Status)
	}
	if get[uint64](t)(snap.Index(TableAllocs)) != 3 || get[uint64](t)(snap.Index(TableEvals)) != 3 {
		t.Fatal("reap did not bump the indexes")
	}
}
