package evalbroker_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/droverhq/drover/evalbroker"
	"github.com/droverhq/drover/structs"
)

// fakeEnqueuer records enqueued evaluations and can be made to fail.
type fakeEnqueuer struct {
	mu   sync.Mutex
	ids  []string
	fail error
}

func (f *fakeEnqueuer) Enqueue(e *structs.Evaluation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.ids = append(f.ids, e.ID)
	return nil
}

func (f *fakeEnqueuer) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := f.ids
	f.ids = nil
	return ids
}

// blockedEval returns a blocked evaluation read from state at snapshot.
func blockedEval(id, job string, createIndex, snapshot uint64) *structs.Evaluation {
	e := mkEval(id, job, 50, createIndex)
	e.Status = structs.EvalStatusBlocked
	e.TriggeredBy = structs.EvalTriggerQueuedAllocs
	e.SnapshotIndex = snapshot
	return e
}

func newBlocked(t *testing.T) (*evalbroker.Blocked, *fakeEnqueuer, *recorder) {
	t.Helper()
	out := &fakeEnqueuer{}
	rec := &recorder{}
	bl := evalbroker.NewBlocked(out, rec.onCancel)
	bl.SetEnabled(true)
	return bl, out, rec
}

func mustBlock(t *testing.T, bl *evalbroker.Blocked, evals ...*structs.Evaluation) {
	t.Helper()
	for _, e := range evals {
		if err := bl.Block(e); err != nil {
			t.Fatalf("Block %s: %v", e.ID, err)
		}
	}
}

func TestBlockedUnblockEnqueuesOnePerJob(t *testing.T) {
	bl, out, rec := newBlocked(t)
	mustBlock(t, bl,
		blockedEval("a1", "A", 10, 10),
		blockedEval("b1", "B", 11, 11),
		blockedEval("a2", "A", 12, 12), // replaces a1
		blockedEval("a0", "A", 9, 12),  // older than a2: dropped
		blockedEval("a2", "A", 12, 12), // already tracked: no-op
	)
	if st := bl.Stats(); st.Blocked != 2 {
		t.Fatalf("Stats = %+v, want 2 blocked", st)
	}
	if got, ok := bl.Tracked("default", "A"); !ok || got.ID != "a2" {
		t.Fatalf("Tracked(A) = %v, %v; want a2", got, ok)
	}
	if cancelled, _ := rec.snapshot(); !slices.Equal(cancelled, []string{"a1", "a0"}) {
		t.Fatalf("duplicates = %v, want [a1 a0]", cancelled)
	}
	if got := out.take(); len(got) != 0 {
		t.Fatalf("enqueued before any capacity change: %v", got)
	}
	n, err := bl.Unblock(20)
	if err != nil || n != 2 {
		t.Fatalf("Unblock = %d, %v; want 2, nil", n, err)
	}
	if got := out.take(); !slices.Equal(got, []string{"b1", "a2"}) {
		t.Fatalf("enqueued = %v, want [b1 a2] in blocking order", got)
	}
	if st := bl.Stats(); st.Blocked != 0 || st.UnblockIndex != 20 {
		t.Fatalf("Stats after unblock = %+v", st)
	}
	// Nothing left to unblock; the index never goes back.
	if n, err := bl.Unblock(15); n != 0 || err != nil || bl.Stats().UnblockIndex != 20 {
		t.Fatalf("second Unblock = %d, %v, index %d", n, err, bl.Stats().UnblockIndex)
	}
}

func TestBlockedMissedUnblockEnqueuesAtOnce(t *testing.T) {
	bl, out, _ := newBlocked(t)
	if _, err := bl.Unblock(50); err != nil {
		t.Fatal(err)
	}
	// Read state before the capacity change at 50: it may have missed it.
	mustBlock(t, bl, blockedEval("stale", "A", 40, 49))
	if got := out.take(); !slices.Equal(got, []string{"stale"}) {
		t.Fatalf("enqueued = %v, want [stale]", got)
	}
	// Read state after it: genuinely blocked.
	mustBlock(t, bl, blockedEval("fresh", "B", 51, 50))
	if got := out.take(); len(got) != 0 {
		t.Fatalf("enqueued = %v, want nothing", got)
	}
	if st := bl.Stats(); st.Blocked != 1 {
		t.Fatalf("Stats = %+v, want fresh tracked", st)
	}
}

func TestBlockedUntrackAndDisable(t *testing.T) {
	bl, out, _ := newBlocked(t)
	mustBlock(t, bl, blockedEval("a1", "A", 1, 1), blockedEval("b1", "B", 2, 2))
	bl.Untrack("default", "A")
	bl.Untrack("default", "missing")
	if _, ok := bl.Tracked("default", "A"); ok {
		t.Fatal("A still tracked after Untrack")
	}
	bl.SetEnabled(false)
	if err := bl.Block(blockedEval("c1", "C", 3, 3)); !errors.Is(err, evalbroker.ErrDisabled) {
		t.Fatalf("Block while disabled = %v", err)
	}
	if _, err := bl.Unblock(9); !errors.Is(err, evalbroker.ErrDisabled) {
		t.Fatalf("Unblock while disabled = %v", err)
	}
	bl.SetEnabled(true)
	if st := bl.Stats(); st.Blocked != 0 || st.UnblockIndex != 0 {
		t.Fatalf("Stats after a new term = %+v, want empty", st)
	}
	if got := out.take(); len(got) != 0 {
		t.Fatalf("enqueued = %v", got)
	}
	if err := bl.Block(blockedEval("n", "", 1, 1)); !errors.Is(err, evalbroker.ErrInvalidEval) {
		t.Fatalf("Block without job = %v, want ErrInvalidEval", err)
	}
	if err := bl.Block(nil); !errors.Is(err, evalbroker.ErrInvalidEval) {
		t.Fatalf("Block(nil) = %v, want ErrInvalidEval", err)
	}
}

func TestBlockedKeepsEvalsWhenEnqueueFails(t *testing.T) {
	bl, out, rec := newBlocked(t)
	mustBlock(t, bl, blockedEval("a1", "A", 1, 1), blockedEval("b1", "B", 2, 2))
	out.fail = evalbroker.ErrDisabled
	n, err := bl.Unblock(5)
	if n != 0 || !errors.Is(err, evalbroker.ErrDisabled) {
		t.Fatalf("Unblock = %d, %v; want 0 and ErrDisabled", n, err)
	}
	if st := bl.Stats(); st.Blocked != 2 {
		t.Fatalf("Stats = %+v, want both kept", st)
	}
	out.fail = nil
	if n, err := bl.Unblock(6); n != 2 || err != nil {
		t.Fatalf("Unblock = %d, %v", n, err)
	}
	if cancelled, _ := rec.snapshot(); len(cancelled) != 0 {
		t.Fatalf("duplicates = %v", cancelled)
	}
}

// TestBlockedIntoBroker wires the tracker to a real broker: the unblocked
// evaluation reaches a worker waiting in Dequeue.
func TestBlockedIntoBroker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, newFakeClock())
		bl := evalbroker.NewBlocked(b, nil)
		bl.SetEnabled(true)
		mustBlock(t, bl, blockedEval("a1", "A", 1, 1))
		ch := dequeueAsync(t.Context(), b, "service")
		if _, err := bl.Unblock(2); err != nil {
			t.Fatal(err)
		}
		r := <-ch
		if r.err != nil || r.eval.ID != "a1" {
			t.Fatalf("worker got %+v, want a1", r)
		}
		if err := b.Ack("a1", r.token); err != nil {
			t.Fatal(err)
		}
	})
}
