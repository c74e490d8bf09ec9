package evalbroker_test

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/droverhq/drover/evalbroker"
	"github.com/droverhq/drover/structs"
)

func TestNewRejectsBadConfig(t *testing.T) {
	for name, mod := range map[string]func(*evalbroker.Config){
		"zero visibility": func(c *evalbroker.Config) { c.VisibilityTimeout = 0 },
		"zero limit":      func(c *evalbroker.Config) { c.DeliveryLimit = 0 },
		"negative delay":  func(c *evalbroker.Config) { c.InitialNackDelay = -1 },
	} {
		cfg := evalbroker.DefaultConfig()
		mod(&cfg)
		if _, err := evalbroker.New(cfg); !errors.Is(err, evalbroker.ErrInvalidConfig) {
			t.Errorf("%s: New error = %v, want ErrInvalidConfig", name, err)
		}
	}
}

func TestPriorityThenCreateIndexThenFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, newFakeClock())
		mustEnqueue(t, b,
			mkEval("low-late", "j1", 50, 30),
			mkEval("high", "j2", 90, 40),
			mkEval("low-early", "j3", 50, 10),
			mkEval("mid", "j4", 70, 5),
			mkEval("low-early-2nd", "j5", 50, 10),
		)
		if got := b.Stats().Ready; got != 5 {
			t.Fatalf("Ready = %d, want 5", got)
		}
		for _, want := range []string{"high", "mid", "low-early", "low-early-2nd", "low-late"} {
			mustDequeue(t, b, want)
		}
		expectEmpty(t, b)
	})
}

func TestDequeueServesOnlyItsTypes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, newFakeClock())
		svc := mkEval("svc", "j1", 50, 1)
		bat := mkEval("bat", "j2", 40, 2)
		bat.Type = "batch"
		sys := mkEval("sys", "j3", 80, 3)
		sys.Type = "system"
		mustEnqueue(t, b, svc, bat, sys)
		mustDequeue(t, b, "bat", "batch")
		expectEmpty(t, b, "batch")
		mustDequeue(t, b, "sys", "service", "system")
		mustDequeue(t, b, "svc", "service", "system")
		if _, _, err := b.Dequeue(t.Context(), nil); !errors.Is(err, evalbroker.ErrNoSchedulerTypes) {
			t.Fatalf("Dequeue(nil types) = %v, want ErrNoSchedulerTypes", err)
		}
	})
}

func TestOneEvalPerJobInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, newFakeClock())
		mustEnqueue(t, b, mkEval("a1", "A", 50, 1), mkEval("a2", "A", 50, 2), mkEval("b1", "B", 50, 3))
		st := b.Stats()
		if st.Ready != 2 || st.Blocked != 1 {
			t.Fatalf("Stats = %+v, want 2 ready, 1 blocked", st)
		}
		tokA1 := mustDequeue(t, b, "a1")
		mustDequeue(t, b, "b1")
		expectEmpty(t, b) // a2 waits for a1
		if err := b.Ack("a1", tokA1); err != nil {
			t.Fatalf("Ack a1: %v", err)
		}
		mustDequeue(t, b, "a2")

		// Same job ID in another namespace is another job.
		other := mkEval("a-other-ns", "A", 50, 4)
		other.Namespace = "prod"
		mustEnqueue(t, b, other)
		mustDequeue(t, b, "a-other-ns")
	})
}

func TestWaitingEvalsCollapseToNewest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		b := newBroker(t, newFakeClock(), rec.wire)
		mustEnqueue(t, b, mkEval("a10", "A", 50, 10))
		tok := mustDequeue(t, b, "a10")
		mustEnqueue(t, b,
			mkEval("a12", "A", 50, 12),
			mkEval("a13", "A", 50, 13), // replaces a12
			mkEval("a11", "A", 50, 11), // older than a13: dropped at once
		)
		if st := b.Stats(); st.Blocked != 1 || st.Ready != 0 {
			t.Fatalf("Stats = %+v, want 1 blocked, 0 ready", st)
		}
		cancelled, _ := rec.snapshot()
		if want := []string{"a12", "a11"}; !slices.Equal(cancelled, want) {
			t.Fatalf("cancelled = %v, want %v", cancelled, want)
		}
		if err := b.Ack("a10", tok); err != nil {
			t.Fatalf("Ack: %v", err)
		}
		mustDequeue(t, b, "a13")
		expectEmpty(t, b)

		// A dropped evaluation may be enqueued again later (it is no
		// longer tracked), while a tracked one is not duplicated.
		mustEnqueue(t, b, mkEval("a13", "A", 50, 13))
		if st := b.Stats(); st.Unacked != 1 || st.Blocked != 0 {
			t.Fatalf("Stats after duplicate enqueue = %+v", st)
		}
	})
}

func TestAckAndNackCheckTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, newFakeClock())
		mustEnqueue(t, b, mkEval("e1", "A", 50, 1))
		if err := b.Ack("e1", "nope"); !errors.Is(err, evalbroker.ErrNotOutstanding) {
			t.Fatalf("Ack before dequeue = %v, want ErrNotOutstanding", err)
		}
		tok := mustDequeue(t, b, "e1")
		if got, ok := b.Outstanding("e1"); !ok || got != tok {
			t.Fatalf("Outstanding = %q, %v; want %q, true", got, ok, tok)
		}
		if err := b.Ack("e1", "wrong"); !errors.Is(err, evalbroker.ErrTokenMismatch) {
			t.Fatalf("Ack wrong token = %v, want ErrTokenMismatch", err)
		}
		if err := b.Nack("e1", "wrong"); !errors.Is(err, evalbroker.ErrTokenMismatch) {
			t.Fatalf("Nack wrong token = %v, want ErrTokenMismatch", err)
		}
		if err := b.Ack("missing", tok); !errors.Is(err, evalbroker.ErrNotOutstanding) {
			t.Fatalf("Ack unknown = %v, want ErrNotOutstanding", err)
		}
		if err := b.Ack("e1", tok); err != nil {
			t.Fatalf("Ack: %v", err)
		}
		if err := b.Ack("e1", tok); !errors.Is(err, evalbroker.ErrNotOutstanding) {
			t.Fatalf("second Ack = %v, want ErrNotOutstanding", err)
		}
		if st := b.Stats(); st.Unacked != 0 || st.Ready != 0 {
			t.Fatalf("Stats after ack = %+v", st)
		}
	})
}

func TestEnqueueRejectsInvalid(t *testing.T) {
	b := newBroker(t, newFakeClock())
	noType := mkEval("x", "A", 50, 1)
	noType.Type = ""
	done := mkEval("y", "A", 50, 1)
	done.Status = structs.EvalStatusComplete
	for _, e := range []*structs.Evaluation{nil, mkEval("", "A", 50, 1), noType, done} {
		if err := b.Enqueue(e); !errors.Is(err, evalbroker.ErrInvalidEval) {
			t.Errorf("Enqueue(%+v) = %v, want ErrInvalidEval", e, err)
		}
	}
	// An evaluation without a job is not serialised.
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, newFakeClock())
		mustEnqueue(t, b, mkEval("n1", "", 50, 1), mkEval("n2", "", 50, 2))
		mustDequeue(t, b, "n1")
		mustDequeue(t, b, "n2")
	})
}

func TestRestore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		cfg := evalbroker.DefaultConfig()
		cfg.Clock = newFakeClock()
		rec.wire(&cfg)
		b, err := evalbroker.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		evals := []*structs.Evaluation{
			mkEval("a3", "A", 50, 3),
			mkEval("a1", "A", 50, 1),
			mkEval("a2", "A", 50, 2),
			mkEval("b1", "B", 60, 4),
		}
		done := mkEval("c1", "C", 50, 5)
		done.Status = structs.EvalStatusComplete
		blocked := mkEval("d1", "D", 50, 6)
		blocked.Status = structs.EvalStatusBlocked
		evals = append(evals, done, blocked, nil)
		if err := b.Restore(evals); !errors.Is(err, evalbroker.ErrDisabled) {
			t.Fatalf("Restore while disabled = %v, want ErrDisabled", err)
		}
		b.SetEnabled(true)
		if err := b.Restore(evals); !errors.Is(err, evalbroker.ErrInvalidEval) {
			t.Fatalf("Restore = %v, want ErrInvalidEval for the nil entry", err)
		}
		cancelled, _ := rec.snapshot()
		if want := []string{"a2"}; !slices.Equal(cancelled, want) {
			t.Fatalf("cancelled = %v, want %v", cancelled, want)
		}
		mustDequeue(t, b, "b1")
		tok := mustDequeue(t, b, "a1")
		expectEmpty(t, b)
		if err := b.Ack("a1", tok); err != nil {
			t.Fatal(err)
		}
		mustDequeue(t, b, "a3")
		expectEmpty(t, b)
	})
}
