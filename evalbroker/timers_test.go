package evalbroker_test

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/evalbroker"
)

func TestNackDelays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newFakeClock()
		b := newBroker(t, clk, func(c *evalbroker.Config) {
			c.InitialNackDelay = time.Second
			c.SubsequentNackDelay = 20 * time.Second
			c.DeliveryLimit = 5
		})
		mustEnqueue(t, b, mkEval("a1", "A", 50, 1))
		tok := mustDequeue(t, b, "a1")
		if err := b.Nack("a1", tok); err != nil {
			t.Fatalf("Nack: %v", err)
		}
		if st := b.Stats(); st.Delayed != 1 || st.Ready != 0 || st.Unacked != 0 {
			t.Fatalf("Stats after nack = %+v, want 1 delayed", st)
		}
		// The job stays busy while its evaluation waits to be retried.
		mustEnqueue(t, b, mkEval("a2", "A", 50, 2))
		if st := b.Stats(); st.Blocked != 1 {
			t.Fatalf("Stats = %+v, want a2 blocked behind a1", st)
		}
		clk.Advance(time.Second - time.Nanosecond)
		expectEmpty(t, b)
		clk.Advance(time.Nanosecond)
		tok2 := mustDequeue(t, b, "a1")
		if tok2 == tok {
			t.Fatal("redelivery reused the old token")
		}
		if err := b.Ack("a1", tok); !errors.Is(err, evalbroker.ErrTokenMismatch) {
			t.Fatalf("Ack with old token = %v, want ErrTokenMismatch", err)
		}
		if err := b.Nack("a1", tok2); err != nil {
			t.Fatalf("Nack: %v", err)
		}
		clk.Advance(20*time.Second - time.Nanosecond)
		expectEmpty(t, b)
		clk.Advance(time.Nanosecond)
		tok3 := mustDequeue(t, b, "a1")
		if err := b.Ack("a1", tok3); err != nil {
			t.Fatalf("Ack: %v", err)
		}
		mustDequeue(t, b, "a2")
	})
}

func TestDeliveryLimitReportsFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		b := newBroker(t, newFakeClock(), rec.wire, func(c *evalbroker.Config) { c.DeliveryLimit = 2 })
		mustEnqueue(t, b, mkEval("a1", "A", 50, 1), mkEval("a2", "A", 50, 2))
		for i := range 2 {
			tok := mustDequeue(t, b, "a1")
			if _, failed := rec.snapshot(); len(failed) != 0 {
				t.Fatalf("failed after %d deliveries: %v", i, failed)
			}
			if err := b.Nack("a1", tok); err != nil {
				t.Fatalf("Nack %d: %v", i, err)
			}
		}
		if _, failed := rec.snapshot(); !slices.Equal(failed, []string{"a1"}) {
			t.Fatalf("failed = %v, want [a1]", failed)
		}
		if _, ok := b.Outstanding("a1"); ok {
			t.Fatal("failed evaluation still outstanding")
		}
		// The failed evaluation released its job.
		mustDequeue(t, b, "a2")
		expectEmpty(t, b)
	})
}

func TestVisibilityTimeoutNacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		clk := newFakeClock()
		b := newBroker(t, clk, rec.wire, func(c *evalbroker.Config) {
			c.VisibilityTimeout = 5 * time.Second
			c.DeliveryLimit = 2
		})
		mustEnqueue(t, b, mkEval("a1", "A", 50, 1))
		tok := mustDequeue(t, b, "a1")
		clk.Advance(5*time.Second - time.Nanosecond)
		if _, ok := b.Outstanding("a1"); !ok {
			t.Fatal("timed out early")
		}
		clk.Advance(time.Nanosecond)
		if _, ok := b.Outstanding("a1"); ok {
			t.Fatal("still outstanding after the visibility timeout")
		}
		if err := b.Ack("a1", tok); !errors.Is(err, evalbroker.ErrNotOutstanding) {
			t.Fatalf("late Ack = %v, want ErrNotOutstanding", err)
		}
		// Second delivery; a reset pushes the deadline out.
		tok = mustDequeue(t, b, "a1")
		clk.Advance(4 * time.Second)
		if err := b.OutstandingReset("a1", tok); err != nil {
			t.Fatalf("OutstandingReset: %v", err)
		}
		clk.Advance(4 * time.Second)
		if _, ok := b.Outstanding("a1"); !ok {
			t.Fatal("reset did not extend the visibility timeout")
		}
		clk.Advance(time.Second)
		if _, failed := rec.snapshot(); !slices.Equal(failed, []string{"a1"}) {
			t.Fatalf("failed = %v, want [a1] after the last delivery timed out", failed)
		}
		if st := b.Stats(); st.Ready+st.Unacked+st.Blocked+st.Delayed != 0 {
			t.Fatalf("Stats = %+v, want empty", st)
		}
		if n := clk.Armed(); n != 0 {
			t.Fatalf("%d timers still armed", n)
		}
	})
}

func TestAckStopsVisibilityTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newFakeClock()
		b := newBroker(t, clk)
		mustEnqueue(t, b, mkEval("a1", "A", 50, 1))
		tok := mustDequeue(t, b, "a1")
		if n := clk.Armed(); n != 1 {
			t.Fatalf("%d timers armed while unacked, want 1", n)
		}
		if err := b.Ack("a1", tok); err != nil {
			t.Fatal(err)
		}
		if n := clk.Armed(); n != 0 {
			t.Fatalf("%d timers armed after ack, want 0", n)
		}
	})
}

func TestDelayedEvalsReadyAtWaitUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newFakeClock()
		b := newBroker(t, clk)
		start := clk.Now()
		later := mkEval("later", "A", 90, 1)
		later.WaitUntil = start.Add(10 * time.Second)
		sooner := mkEval("sooner", "B", 50, 2)
		sooner.WaitUntil = start.Add(3 * time.Second)
		byWait := mkEval("by-wait", "C", 50, 3)
		byWait.Wait = 7 * time.Second
		past := mkEval("past", "D", 10, 4)
		past.WaitUntil = start.Add(-time.Minute)
		mustEnqueue(t, b, later, sooner, byWait, past)
		if st := b.Stats(); st.Delayed != 3 || st.Ready != 1 {
			t.Fatalf("Stats = %+v, want 3 delayed, 1 ready", st)
		}
		if n := clk.Armed(); n != 1 {
			t.Fatalf("%d timers armed for the delay queue, want 1", n)
		}
		mustDequeue(t, b, "past")
		steps := []struct {
			at   time.Duration
			want string
		}{{3 * time.Second, "sooner"}, {7 * time.Second, "by-wait"}, {10 * time.Second, "later"}}
		for _, s := range steps {
			clk.Advance(start.Add(s.at - time.Nanosecond).Sub(clk.Now()))
			expectEmpty(t, b)
			clk.Advance(time.Nanosecond)
			mustDequeue(t, b, s.want)
		}
		if st := b.Stats(); st.Delayed != 0 {
			t.Fatalf("Stats = %+v, want nothing delayed", st)
		}
	})
}

func TestDelayedEvalWaitsForItsJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newFakeClock()
		b := newBroker(t, clk)
		mustEnqueue(t, b, mkEval("a1", "A", 50, 1))
		tok := mustDequeue(t, b, "a1")
		d := mkEval("a2", "A", 50, 2)
		d.WaitUntil = clk.Now().Add(10 * time.Second) // before a1's visibility timeout
		mustEnqueue(t, b, d)
		clk.Advance(10 * time.Second)
		expectEmpty(t, b)
		if st := b.Stats(); st.Blocked != 1 || st.Delayed != 0 {
			t.Fatalf("Stats = %+v, want a2 blocked behind a1", st)
		}
		if err := b.Ack("a1", tok); err != nil {
			t.Fatal(err)
		}
		mustDequeue(t, b, "a2")
	})
}

func TestPauseNackTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newFakeClock()
		b := newBroker(t, clk, func(c *evalbroker.Config) { c.VisibilityTimeout = 5 * time.Second })
		mustEnqueue(t, b, mkEval("a1", "A", 50, 1))
		tok := mustDequeue(t, b, "a1")
		if err := b.PauseNackTimeout("a1", tok); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Hour)
		if _, ok := b.Outstanding("a1"); !ok {
			t.Fatal("timed out while paused")
		}
		if err := b.ResumeNackTimeout("a1", tok); err != nil {
			t.Fatal(err)
		}
		clk.Advance(5 * time.Second)
		if _, ok := b.Outstanding("a1"); ok {
			t.Fatal("not timed out 5s after resume")
		}
		if err := b.PauseNackTimeout("a1", tok); !errors.Is(err, evalbroker.ErrNotOutstanding) {
			t.Fatalf("PauseNackTimeout after timeout = %v, want ErrNotOutstanding", err)
		}
	})
}

// TestTimeoutClockApart: with a TimeoutClock of its own, the visibility
// timeout ignores the schedule's clock and follows the other.
func TestTimeoutClockApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sched, worker := newFakeClock(), newFakeClock()
		b := newBroker(t, sched, func(c *evalbroker.Config) {
			c.VisibilityTimeout = 5 * time.Second
			c.TimeoutClock = worker
		})
		mustEnqueue(t, b, mkEval("a1", "A", 50, 1))
		tok := mustDequeue(t, b, "a1")
		sched.Advance(time.Hour)
		if _, ok := b.Outstanding("a1"); !ok {
			t.Fatal("the schedule's clock timed the worker out")
		}
		worker.Advance(5 * time.Second)
		if _, ok := b.Outstanding("a1"); ok {
			t.Fatal("still outstanding after the worker's clock passed the timeout")
		}
		if err := b.Ack("a1", tok); !errors.Is(err, evalbroker.ErrNotOutstanding) {
			t.Fatalf("late Ack = %v, want ErrNotOutstanding", err)
		}
	})
}
