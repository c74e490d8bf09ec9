package state

import (
	"slices"
	"strings"
	"testing"

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
	check := func(what string, got []*structs.Allocation, err error, want []string) {
		t.Helper()
		must(t, err)
		if g := allocIDs(got); !slices.Equal(g, want) {
			t.Fatalf("%s:\n got %s\nwant %s", what, strings.Join(g, " "), strings.Join(want, " "))
		}
	}
	snap := s.Snapshot()
	var got []*structs.Allocation
	got, err = snap.AllocsByJob(job.Namespace, job.ID)
	check("AllocsByJob", got, err, all)
	got, err = snap.LiveAllocsByJob(job.Namespace, job.ID)
	check("LiveAllocsByJob", got, err, live)
	got, err = snap.StoppedAllocsByJob(job.Namespace, job.ID)
	check("StoppedAllocsByJob", got, err, stopped)
	got, err = snap.AllocsByNode(n1.ID)
	check("AllocsByNode", got, err, onN1)
	got, err = snap.LiveAllocsByNode(n1.ID)
	check("LiveAllocsByNode", got, err, liveN1)
	got, err = snap.AllocsByEval(evalID) // through the job index
	check("AllocsByEval", got, err, all)
	if len(all) != 6 || len(stopped) != 2 {
		t.Fatalf("set-up: %d allocs, %d stopped", len(all), len(stopped))
	}

	// The servers stop a live alloc: its keys move.
	moved := allocs[0].Copy()
	moved.DesiredStatus = structs.AllocDesiredStatusStop
	must(t, s.UpsertAllocs(13, []*structs.Allocation{moved}, 0))
	live = slices.DeleteFunc(slices.Clone(live), func(id string) bool { return id == moved.ID })
	stopped = append(slices.Clone(stopped), moved.ID)
	slices.Sort(stopped)
	snap = s.Snapshot()
	got, err = snap.LiveAllocsByJob(job.Namespace, job.ID)
	check("LiveAllocsByJob after a stop", got, err, live)
	got, err = snap.StoppedAllocsByJob(job.Namespace, job.ID)
	check("StoppedAllocsByJob after a stop", got, err, stopped)
	got, err = snap.AllocsByJob(job.Namespace, job.ID)
	check("AllocsByJob after a stop", got, err, all)
	got, err = snap.AllocsByNode(n1.ID)
	check("AllocsByNode after a stop", got, err, onN1)

	// A restored copy (snapshot restore) indexes the same way.
	r := restoredCopy(t, s).Snapshot()
	got, err = r.LiveAllocsByJob(job.Namespace, job.ID)
	check("restored LiveAllocsByJob", got, err, live)
	got, err = r.AllocsByJob(job.Namespace, job.ID)
	check("restored AllocsByJob", got, err, all)
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
