package state

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func allocIDs(allocs []*structs.Allocation) []string {
	out := make([]string, len(allocs))
	for i, a := range allocs {
		out[i] = a.ID
	}
	return out
}

// TestLiveAllocIndexes: the job and node indexes list a key's live and
// stopped allocations apart; AllocsByJob and AllocsByNode still return all
// of them in ID order; an alloc the servers stop moves from the live list
// to the stopped one; a job whose ID extends another's is not mixed in.
func TestLiveAllocIndexes(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 10, statetest.Job("web", 6))
	other := registerJob(t, s, 11, statetest.Job("web2", 2))
	n1, n2 := statetest.Node("n1"), statetest.Node("n2")
	evals, err := s.Snapshot().EvalsByJob(job.Namespace, job.ID)
	must(t, err)
	if len(evals) != 1 {
		t.Fatalf("%d evals of the job", len(evals))
	}
	evalID := evals[0].ID
	var allocs []*structs.Allocation
	for i := range 6 {
		n := n1
		if i%2 == 1 {
			n = n2
		}
		a := statetest.Alloc(job, n, evalID, "", i)
		switch i {
		case 1:
			a.DesiredStatus = structs.AllocDesiredStatusStop
		case 4:
			a.DesiredStatus = structs.AllocDesiredStatusEvict
		}
		allocs = append(allocs, a)
	}
	for i := range 2 {
		allocs = append(allocs, statetest.Alloc(other, n1, "e2", "", i))
	}
	must(t, s.UpsertAllocs(12, allocs, 0))

	var live, stopped, all, onN1, liveN1 []string
	for _, a := range allocs[:6] {
		all = append(all, a.ID)
		if a.DesiredStatus == structs.AllocDesiredStatusRun {
			live = append(live, a.ID)
		} else {
			stopped = append(stopped, a.ID)
		}
	}
	for _, a := range allocs {
		if a.NodeID == n1.ID {
			onN1 = append(onN1, a.ID)
			if a.DesiredStatus == structs.AllocDesiredStatusRun {
				liveN1 = append(liveN1, a.ID)
			}
		}
	}
	for _, l := range [][]string{live, stopped, all, onN1, liveN1} {
		slices.Sort(l)
	}
	ns, id := job.Namespace, job.ID
	reads := []struct {
		name string
		read func(*Snapshot) ([]*structs.Allocation, error)
		want *[]string
	}{
		{"AllocsByJob", func(s *Snapshot) ([]*structs.Allocation, error) { return s.AllocsByJob(ns, id) }, &all},
		{"LiveAllocsByJob", func(s *Snapshot) ([]*structs.Allocation, error) { return s.LiveAllocsByJob(ns, id) }, &live},
		{"StoppedAllocsByJob", func(s *Snapshot) ([]*structs.Allocation, error) { return s.StoppedAllocsByJob(ns, id) }, &stopped},
		{"AllocsByNode", func(s *Snapshot) ([]*structs.Allocation, error) { return s.AllocsByNode(n1.ID) }, &onN1},
		{"LiveAllocsByNode", func(s *Snapshot) ([]*structs.Allocation, error) { return s.LiveAllocsByNode(n1.ID) }, &liveN1},
		// Through the job index.
		{"AllocsByEval", func(s *Snapshot) ([]*structs.Allocation, error) { return s.AllocsByEval(evalID) }, &all},
	}
	checkAll := func(when string, snap *Snapshot) {
		t.Helper()
		for _, r := range reads {
			got, err := r.read(snap)
			must(t, err)
			if g := allocIDs(got); !slices.Equal(g, *r.want) {
				t.Fatalf("%s %s:\n got %s\nwant %s", r.name, when, strings.Join(g, " "), strings.Join(*r.want, " "))
			}
		}
	}
	if len(all) != 6 || len(stopped) != 2 || len(liveN1) != 4 {
		t.Fatalf("set-up: %d allocs, %d stopped, %d live on n1", len(all), len(stopped), len(liveN1))
	}
	checkAll("", s.Snapshot())

	// The servers stop a live alloc (on n1): its keys move.
	moved := allocs[0].Copy()
	moved.DesiredStatus = structs.AllocDesiredStatusStop
	must(t, s.UpsertAllocs(13, []*structs.Allocation{moved}, 0))
	gone := func(id string) bool { return id == moved.ID }
	live = slices.DeleteFunc(slices.Clone(live), gone)
	liveN1 = slices.DeleteFunc(slices.Clone(liveN1), gone)
	stopped = append(slices.Clone(stopped), moved.ID)
	slices.Sort(stopped)
	checkAll("after a stop", s.Snapshot())

	// A restored copy (snapshot restore) indexes the same way.
	checkAll("restored", restoredCopy(t, s).Snapshot())
}

func TestAllocIndexArgs(t *testing.T) {
	x := jobAllocIndex()
	for _, args := range [][]any{{"ns"}, {"ns", "job", true, 1}, {"ns", 3}, {"ns", "job", "yes"}} {
		if _, err := x.FromArgs(args...); err == nil {
			t.Errorf("FromArgs%v: no error", args)
		}
	}
	if _, _, err := x.FromObject(&structs.Job{}); err == nil {
		t.Error("FromObject of a job: no error")
	}
	if ok, _, _ := x.FromObject(&structs.Allocation{Namespace: "default"}); ok {
		t.Error("an alloc without a job is indexed by job")
	}
	all, _ := x.FromArgs("ns", "job")
	live, _ := x.FromArgs("ns", "job", true)
	_, key, _ := x.FromObject(&structs.Allocation{Namespace: "ns", JobID: "job", DesiredStatus: structs.AllocDesiredStatusRun})
	if string(key) != string(live) || !strings.HasPrefix(string(key), string(all)) {
		t.Errorf("key %q, live prefix %q, job prefix %q", key, live, all)
	}
}

// TestEvalJobIndex: a job's unfinished evaluations and its newest finished
// one are read without the rest; EvalsByJob still returns all, by ID; a
// finishing evaluation moves, and a watch on what the deployment watcher
// reads wakes when it does.
func TestEvalJobIndex(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 10, statetest.Job("web", 1))
	registerJob(t, s, 11, statetest.Job("web2", 1))
	mk := func(name, status string) *structs.Evaluation {
		e := statetest.Eval(name, job)
		e.Status = status
		return e
	}
	// IDs are hashes of the names: the newest finished eval is not the
	// last by ID.
	steps := []*structs.Evaluation{
		mk("done-1", structs.EvalStatusComplete),
		mk("failed", structs.EvalStatusFailed),
		mk("blocked", structs.EvalStatusBlocked),
		mk("done-2", structs.EvalStatusComplete),
		mk("cancelled", structs.EvalStatusCancelled),
		mk("pending", structs.EvalStatusPending),
	}
	for i, e := range steps {
		must(t, s.UpsertEvals(uint64(20+i), []*structs.Evaluation{e}))
	}
	snap := s.Snapshot()
	all := get[[]*structs.Evaluation](t)(snap.EvalsByJob(job.Namespace, job.ID))
	if len(all) != 7 || !slices.IsSortedFunc(all, func(a, b *structs.Evaluation) int { return strings.Compare(a.ID, b.ID) }) {
		t.Fatalf("EvalsByJob: %d evals (want the registration's and 6), sorted %v", len(all), all)
	}
	pending := get[[]*structs.Evaluation](t)(snap.PendingEvalsByJob(job.Namespace, job.ID))
	var names []string
	for _, e := range pending {
		names = append(names, e.Status)
	}
	// The registration's eval is pending too, and first by CreateIndex.
	if want := []string{"pending", "blocked", "pending"}; !slices.Equal(names, want) {
		t.Fatalf("pending evals %v, want %v", names, want)
	}
	last := get[*structs.Evaluation](t)(snap.LatestFinishedEvalByJob(job.Namespace, job.ID))
	if last == nil || last.ID != steps[4].ID {
		t.Fatalf("newest finished eval %+v, want the cancelled one", last)
	}
	if e := get[*structs.Evaluation](t)(snap.LatestFinishedEvalByJob(job.Namespace, "nope")); e != nil {
		t.Fatalf("a job without evals: %+v", e)
	}

	ws := memdb.NewWatchSet()
	w := s.Snapshot().WithWatch(ws)
	get[[]*structs.Evaluation](t)(w.PendingEvalsByJob(job.Namespace, job.ID))
	get[*structs.Evaluation](t)(w.LatestFinishedEvalByJob(job.Namespace, job.ID))
	finished := steps[5].Copy()
	finished.Status = structs.EvalStatusComplete
	must(t, s.UpsertEvals(40, []*structs.Evaluation{finished}))
	if ws.Watch(time.After(time.Second)) {
		t.Fatal("the watch did not wake when an eval finished")
	}
	snap = s.Snapshot()
	if last := get[*structs.Evaluation](t)(snap.LatestFinishedEvalByJob(job.Namespace, job.ID)); last == nil || last.ID != finished.ID {
		t.Fatalf("newest finished eval after a finish %+v", last)
	}
	if p := get[[]*structs.Evaluation](t)(snap.PendingEvalsByJob(job.Namespace, job.ID)); len(p) != 2 {
		t.Fatalf("%d pending evals after a finish, want 2", len(p))
	}
	r := restoredCopy(t, s).Snapshot()
	if last := get[*structs.Evaluation](t)(r.LatestFinishedEvalByJob(job.Namespace, job.ID)); last == nil || last.ID != finished.ID {
		t.Fatalf("restored: newest finished eval %+v", last)
	}
}

// BenchmarkPassEvals reads what a client report's check for a due
// evaluation and the deployment watcher need of a job that three
// 10,000-alloc rollouts left with 1,500 finished evaluations and one
// pending: all of them (as before), or the pending ones and the newest
// finished one. "all" is EvalsByJob, which sorts them by ID.
func BenchmarkPassEvals(b *testing.B) {
	s, err := New()
	if err != nil {
		b.Fatal(err)
	}
	job := statetest.Job("web", 1)
	var evals []*structs.Evaluation
	for i := range 1500 {
		e := statetest.Eval(fmt.Sprint("done-", i), job)
		e.Status = structs.EvalStatusComplete
		evals = append(evals, e)
	}
	evals = append(evals, statetest.Eval("pending", job))
	for i, e := range evals {
		if err := s.UpsertEvals(uint64(i+1), []*structs.Evaluation{e}); err != nil {
			b.Fatal(err)
		}
	}
	snap := s.Snapshot()
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
			if all, err := snap.EvalsByJob(job.Namespace, job.ID); err != nil || len(all) != 1501 {
				b.Fatal(len(all), err)
			}
		}
	})
	b.Run("all-index-order", func(b *testing.B) { // what the readers read before
		for b.Loop() {
			if all, err := list[*structs.Evaluation](snap, TableEvals, "job", job.Namespace, job.ID); err != nil || len(all) != 1501 {
				b.Fatal(len(all), err)
			}
		}
	})
	b.Run("pending+newest", func(b *testing.B) {
		for b.Loop() {
			p, err := snap.PendingEvalsByJob(job.Namespace, job.ID)
			if err != nil || len(p) != 1 {
				b.Fatal(len(p), err)
			}
			if l, err := snap.LatestFinishedEvalByJob(job.Namespace, job.ID); err != nil || l == nil {
				b.Fatal(err)
			}
		}
	})
}
