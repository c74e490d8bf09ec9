package evalbroker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/evalbroker"
	"github.com/droverhq/drover/structs"
)

// OnDequeue learns how long each evaluation was ready before a worker
// took it, measured on the broker's clock; one handed at once to a
// waiting worker waited 0.
func TestOnDequeueMeasuresTheReadyWait(t *testing.T) {
	clk := newFakeClock()
	var mu sync.Mutex
	waits := map[string]time.Duration{}
	b := newBroker(t, clk, func(c *evalbroker.Config) {
		c.OnDequeue = func(e *structs.Evaluation, waited time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			waits[e.ID] = waited
		}
	})
	mustEnqueue(t, b, mkEval("e1", "web", 50, 1))
	clk.Advance(3 * time.Second)
	mustDequeue(t, b, "e1", structs.JobTypeService)

	got := make(chan string, 1)
	go func() {
		e, _, err := b.Dequeue(context.Background(), []string{structs.JobTypeService})
		if err != nil {
			t.Error(err)
		}
		got <- e.ID
	}()
	// Wait for the Dequeue to be waiting, then enqueue.
	for deadline := time.Now().Add(10 * time.Second); b.Stats().Waiters == 0; {
		if time.Now().After(deadline) {
			t.Fatal("Dequeue never waited")
		}
		time.Sleep(time.Millisecond)
	}
	mustEnqueue(t, b, mkEval("e2", "api", 50, 2))
	if id := <-got; id != "e2" {
		t.Fatalf("dequeued %s", id)
	}
	mu.Lock()
	defer mu.Unlock()
	if waits["e1"] != 3*time.Second || waits["e2"] != 0 || len(waits) != 2 {
		t.Fatalf("waits %v", waits)
	}
}
