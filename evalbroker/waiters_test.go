package evalbroker_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/evalbroker"
	"github.com/droverhq/drover/structs"
)

// result is what a background Dequeue returned.
type result struct {
	eval  *structs.Evaluation
	token string
	err   error
}

// dequeueAsync starts a Dequeue in the background and waits until it blocks.
func dequeueAsync(ctx context.Context, b *evalbroker.Broker, types ...string) <-chan result {
	ch := make(chan result, 1)
	go func() {
		e, tok, err := b.Dequeue(ctx, types)
		ch <- result{e, tok, err}
	}()
	synctest.Wait()
	return ch
}

func TestWaitingDequeueGetsEvalAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, newFakeClock())
		first := dequeueAsync(t.Context(), b, "service")
		second := dequeueAsync(t.Context(), b, "service", "batch")
		batchOnly := dequeueAsync(t.Context(), b, "batch")
		if n := b.Stats().Waiters; n != 3 {
			t.Fatalf("Waiters = %d, want 3", n)
		}
		start := time.Now()
		mustEnqueue(t, b, mkEval("s1", "A", 50, 1))
		r := <-first // the oldest waiter serving the type
		if r.err != nil || r.eval.ID != "s1" {
			t.Fatalf("first waiter got %+v", r)
		}
		if time.Since(start) != 0 {
			t.Fatal("delivery to a waiting Dequeue took time")
		}
		bat := mkEval("b1", "B", 50, 2)
		bat.Type = "batch"
		mustEnqueue(t, b, bat)
		if r := <-second; r.err != nil || r.eval.ID != "b1" {
			t.Fatalf("second waiter got %+v", r)
		}
		if err := b.Ack("s1", r.token); err != nil {
			t.Fatalf("Ack from waiter's token: %v", err)
		}
		select {
		case r := <-batchOnly:
			t.Fatalf("batch waiter got %+v with nothing left", r)
		default:
		}
		b.SetEnabled(false)
		if r := <-batchOnly; !errors.Is(r.err, evalbroker.ErrDisabled) {
			t.Fatalf("batch waiter after disable: %+v", r)
		}
	})
}

func TestNackHandsEvalToWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, newFakeClock())
		mustEnqueue(t, b, mkEval("a1", "A", 50, 1))
		tok := mustDequeue(t, b, "a1")
		ch := dequeueAsync(t.Context(), b, "service")
		if err := b.Nack("a1", tok); err != nil {
			t.Fatal(err)
		}
		if r := <-ch; r.err != nil || r.eval.ID != "a1" {
			t.Fatalf("waiter got %+v, want a1 again", r)
		}
	})
}

func TestDisableDropsEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		clk := newFakeClock()
		b := newBroker(t, clk, rec.wire)
		delayed := mkEval("d1", "D", 50, 1)
		delayed.WaitUntil = clk.Now().Add(time.Minute)
		mustEnqueue(t, b, mkEval("a1", "A", 50, 2), mkEval("a2", "A", 50, 3), mkEval("b1", "B", 50, 4), delayed)
		tok := mustDequeue(t, b, "a1")
		waiters := []<-chan result{dequeueAsync(t.Context(), b, "batch"), dequeueAsync(t.Context(), b, "system")}

		b.SetEnabled(false)
		for i, ch := range waiters {
			if r := <-ch; !errors.Is(r.err, evalbroker.ErrDisabled) {
				t.Fatalf("waiter %d: %+v, want ErrDisabled", i, r)
			}
		}
		if b.Enabled() {
			t.Fatal("Enabled after SetEnabled(false)")
		}
		if st := b.Stats(); st.Ready+st.Unacked+st.Blocked+st.Delayed+st.Waiters != 0 {
			t.Fatalf("Stats after disable = %+v, want empty", st)
		}
		if n := clk.Armed(); n != 0 {
			t.Fatalf("%d timers armed after disable", n)
		}
		if err := b.Enqueue(mkEval("x", "X", 50, 9)); !errors.Is(err, evalbroker.ErrDisabled) {
			t.Fatalf("Enqueue while disabled = %v", err)
		}
		if _, _, err := b.Dequeue(t.Context(), []string{"service"}); !errors.Is(err, evalbroker.ErrDisabled) {
			t.Fatalf("Dequeue while disabled = %v", err)
		}
		if err := b.Ack("a1", tok); !errors.Is(err, evalbroker.ErrDisabled) {
			t.Fatalf("Ack while disabled = %v", err)
		}

		// A new term starts empty; the old token is void.
		b.SetEnabled(true)
		clk.Advance(time.Hour)
		expectEmpty(t, b)
		if err := b.Ack("a1", tok); !errors.Is(err, evalbroker.ErrNotOutstanding) {
			t.Fatalf("Ack of old term = %v, want ErrNotOutstanding", err)
		}
		if cancelled, failed := rec.snapshot(); len(cancelled)+len(failed) != 0 {
			t.Fatalf("callbacks on disable: cancelled %v failed %v", cancelled, failed)
		}
	})
}

func TestCancelledDequeueReturnsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, newFakeClock())
		ctx, cancel := context.WithCancel(t.Context())
		ch := dequeueAsync(ctx, b, "service")
		cancel()
		if r := <-ch; !errors.Is(r.err, context.Canceled) || r.eval != nil {
			t.Fatalf("cancelled Dequeue = %+v", r)
		}
		if n := b.Stats().Waiters; n != 0 {
			t.Fatalf("Waiters = %d after cancel", n)
		}
		mustEnqueue(t, b, mkEval("a1", "A", 50, 1))
		mustDequeue(t, b, "a1")
	})
}

// TestCancelRacingDelivery cancels a Dequeue in the same instant an
// evaluation is handed to it: either the caller gets the evaluation, or it
// goes back to the queue; it is never lost.
func TestCancelRacingDelivery(t *testing.T) {
	for i := range 200 {
		synctest.Test(t, func(t *testing.T) {
			b := newBroker(t, newFakeClock())
			ctx, cancel := context.WithCancel(t.Context())
			ch := dequeueAsync(ctx, b, "service")
			cancel()
			mustEnqueue(t, b, mkEval("a1", "A", 50, 1))
			r := <-ch
			st := b.Stats()
			switch {
			case r.err == nil && r.eval.ID == "a1":
				if st.Unacked != 1 || st.Ready != 0 {
					t.Fatalf("run %d: got a1 but Stats = %+v", i, st)
				}
			case errors.Is(r.err, context.Canceled):
				if st.Unacked != 0 || st.Ready != 1 {
					t.Fatalf("run %d: cancelled but Stats = %+v", i, st)
				}
				mustDequeue(t, b, "a1")
			default:
				t.Fatalf("run %d: %+v", i, r)
			}
		})
	}
}
