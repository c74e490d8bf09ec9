package evalbroker_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/evalbroker"
	"github.com/droverhq/drover/structs"
)

// Example shows the leader's use of a Broker: enable it on gaining
// leadership, restore the pending evaluations from state, and let workers
// dequeue and ack.
func Example() {
	cfg := evalbroker.DefaultConfig()
	cfg.OnCancel = func(evals []*structs.Evaluation) {
		// The leader writes these as cancelled through Raft.
		for _, e := range evals {
			fmt.Println("superseded:", e.ID)
		}
	}
	cfg.OnFailed = func(e *structs.Evaluation) {
		// The leader writes this one as failed and may add a follow-up.
		fmt.Println("failed:", e.ID)
	}
	broker, err := evalbroker.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	broker.SetEnabled(true)        // leadership gained
	defer broker.SetEnabled(false) // leadership lost

	pending := []*structs.Evaluation{
		{ID: "e1", JobID: "web", Type: "service", Priority: 50, Status: "pending", CreateIndex: 7},
		{ID: "e2", JobID: "web", Type: "service", Priority: 50, Status: "pending", CreateIndex: 9},
		{ID: "e3", JobID: "web", Type: "service", Priority: 50, Status: "pending", CreateIndex: 8},
	}
	if err := broker.Restore(pending); err != nil {
		fmt.Println(err)
		return
	}

	// A worker's loop.
	for range 2 {
		eval, token, err := broker.Dequeue(context.Background(), []string{"service", "batch"})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("scheduling:", eval.ID)
		if err := broker.Ack(eval.ID, token); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// superseded: e3
	// scheduling: e1
	// scheduling: e2
}

// TestSystemClockDelay runs a delayed evaluation on the system clock inside
// a synctest bubble, where time.Sleep passes no real time.
func TestSystemClockDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, evalbroker.SystemClock{})
		e := mkEval("later", "A", 50, 1)
		e.WaitUntil = time.Now().Add(time.Minute)
		mustEnqueue(t, b, e)
		ch := dequeueAsync(t.Context(), b, "service")
		time.Sleep(time.Minute - time.Nanosecond)
		synctest.Wait()
		select {
		case r := <-ch:
			t.Fatalf("got %+v before WaitUntil", r)
		default:
		}
		time.Sleep(time.Nanosecond)
		if r := <-ch; r.err != nil || r.eval.ID != "later" {
			t.Fatalf("got %+v, want later", r)
		}
		b.SetEnabled(false) // stops the visibility timer
	})
}
