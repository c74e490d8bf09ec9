package deployment

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/structs"
)

func TestPassIndex(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ev := func(status string, create, snap uint64) *structs.Evaluation {
		return &structs.Evaluation{Status: status, CreateIndex: create, SnapshotIndex: snap}
	}
	delayed := ev(structs.EvalStatusPending, 30, 0)
	delayed.WaitUntil = now.Add(time.Second)
	due := ev(structs.EvalStatusPending, 30, 0)
	due.WaitUntil = now
	waiting := ev(structs.EvalStatusPending, 30, 0)
	waiting.Wait = time.Second
	cases := []struct {
		name  string
		evals []*structs.Evaluation
		want  uint64
	}{
		{"no evaluations", nil, 0},
		{"the newest creation", []*structs.Evaluation{ev(structs.EvalStatusCancelled, 7, 0), ev(structs.EvalStatusFailed, 9, 12)}, 9},
		{"a completed pass read a newer state", []*structs.Evaluation{ev(structs.EvalStatusComplete, 7, 15), ev(structs.EvalStatusCancelled, 9, 0)}, 15},
		{"a completed pass read an older state than a later creation", []*structs.Evaluation{ev(structs.EvalStatusComplete, 7, 8), ev(structs.EvalStatusCancelled, 9, 0)}, 9},
		{"a pass still to come", []*structs.Evaluation{ev(structs.EvalStatusComplete, 7, 15), ev(structs.EvalStatusPending, 16, 0)}, math.MaxUint64},
		{"a pass due now", []*structs.Evaluation{ev(structs.EvalStatusComplete, 7, 15), due}, math.MaxUint64},
		{"a pass waiting for a later time", []*structs.Evaluation{ev(structs.EvalStatusComplete, 7, 15), delayed}, 30},
		{"a pass waiting out a delay", []*structs.Evaluation{waiting}, 30},
		{"a blocked pass", []*structs.Evaluation{ev(structs.EvalStatusBlocked, 20, 0)}, 20},
		{"nil entries", []*structs.Evaluation{nil, ev(structs.EvalStatusComplete, 3, 4)}, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := passIndex(tc.evals, now); got != tc.want {
				t.Fatalf("passIndex = %d, want %d", got, tc.want)
			}
		})
	}
}

// completeEval marks the job's evaluation id complete, scheduled against
// the state at snapshot.
func (f *fakeStore) completeEval(id string, snapshot uint64) {
	f.mutate(func(index uint64) {
		for i, e := range f.evals {
			if e.ID == id {
				c := e.Copy()
				c.Status, c.SnapshotIndex, c.ModifyIndex = structs.EvalStatusComplete, snapshot, index
				f.evals[i] = c
			}
		}
	})
}

// TestWatcherWaitsForThePendingPass: health recorded while the job's
// evaluation waits calls for no evaluation of its own; once that
// evaluation completes, one is created only if the health came after the
// state the pass read.
func TestWatcherWaitsForThePendingPass(t *testing.T) {
	for _, tc := range []struct {
		name     string
		snapshot func(healthIndex uint64) uint64
		want     []string
	}{
		{"the pass read the health", func(h uint64) uint64 { return h }, []string{"eval"}},
		{"the pass read an older state", func(h uint64) uint64 { return h - 1 }, []string{"eval", "eval"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := seed(time.Now(), seedOpts{total: 4, rpb: 10 * time.Minute})
				stop := startWatcher(t, f)
				defer stop()
				synctest.Wait()
				wantWrites(t, f)

				f.setHealth("a2", true, time.Now())
				synctest.Wait()
				wantWrites(t, f, "eval") // eval-a, pending

				f.setHealth("a3", true, time.Now())
				synctest.Wait()
				wantWrites(t, f, "eval")

				f.mu.Lock()
				h := f.allocs["a3"].DeploymentStatus.ModifyIndex
				f.mu.Unlock()
				f.completeEval("eval-a", tc.snapshot(h))
				synctest.Wait()
				wantWrites(t, f, tc.want...)
			})
		})
	}
}
