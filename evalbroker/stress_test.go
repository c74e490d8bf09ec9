package evalbroker_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/droverhq/drover/evalbroker"
	"github.com/droverhq/drover/structs"
)

// TestConcurrentWorkers runs producers and workers against one broker on
// the system clock and checks the invariants: never two evaluations of one
// job out at once, and every evaluation ends exactly once (acked, cancelled
// as superseded, or failed).
func TestConcurrentWorkers(t *testing.T) {
	const (
		producers = 4
		perProd   = 300
		workers   = 8
		jobs      = 16
		total     = producers * perProd
	)
	var (
		mu       sync.Mutex
		outcome  = make(map[string]string, total)
		inFlight = make(map[string]string, jobs)
		problems []string
		allDone  = make(chan struct{})
	)
	end := func(ids []string, how string) {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			if prev, ok := outcome[id]; ok {
				problems = append(problems, fmt.Sprintf("%s ended twice: %s then %s", id, prev, how))
			}
			outcome[id] = how
		}
		if len(outcome) == total {
			close(allDone)
		}
	}
	cfg := evalbroker.DefaultConfig()
	cfg.InitialNackDelay = 0
	cfg.SubsequentNackDelay = 0
	cfg.OnCancel = func(evals []*structs.Evaluation) {
		ids := make([]string, len(evals))
		for i, e := range evals {
			ids[i] = e.ID
		}
		end(ids, "cancelled")
	}
	cfg.OnFailed = func(e *structs.Evaluation) { end([]string{e.ID}, "failed") }
	b, err := evalbroker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.SetEnabled(true)

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var index atomic.Uint64
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range perProd {
				e := mkEval(fmt.Sprintf("p%d-%d", p, i), fmt.Sprintf("job%d", (p*perProd+i)%jobs), 50+i%3, index.Add(1))
				if err := b.Enqueue(e); err != nil {
					t.Errorf("Enqueue: %v", err)
					return
				}
			}
		})
	}
	var workersWG sync.WaitGroup
	for w := range workers {
		workersWG.Go(func() {
			for n := 0; ; n++ {
				e, tok, err := b.Dequeue(ctx, []string{"service"})
				if err != nil {
					if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("Dequeue: %v", err)
					}
					return
				}
				mu.Lock()
				if other, busy := inFlight[e.JobID]; busy {
					problems = append(problems, fmt.Sprintf("%s and %s of %s out together", other, e.ID, e.JobID))
				}
				inFlight[e.JobID] = e.ID
				mu.Unlock()
				runtime.Gosched() // widen the window in which a second delivery would show
				nack := (n+w)%7 == 0
				mu.Lock()
				delete(inFlight, e.JobID)
				mu.Unlock()
				if nack {
					err = b.Nack(e.ID, tok)
				} else {
					err = b.Ack(e.ID, tok)
					end([]string{e.ID}, "acked")
				}
				if err != nil {
					t.Errorf("ack/nack %s: %v", e.ID, err)
				}
			}
		})
	}
	wg.Wait()
	select {
	case <-allDone:
	case <-ctx.Done():
		mu.Lock()
		done := len(outcome)
		mu.Unlock()
		t.Fatalf("only %d of %d evaluations ended; stats %+v", done, total, b.Stats())
	}
	cancel()
	workersWG.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	counts := map[string]int{}
	for _, how := range outcome {
		counts[how]++
	}
	t.Logf("outcomes: %v", counts)
	if st := b.Stats(); st.Ready+st.Unacked+st.Blocked+st.Delayed != 0 {
		t.Errorf("broker not empty at the end: %+v", st)
	}
}
