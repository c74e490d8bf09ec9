package evalbroker_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/droverhq/drover/evalbroker"
	"github.com/droverhq/drover/structs"
)

func benchBroker(b *testing.B) *evalbroker.Broker {
	b.Helper()
	br, err := evalbroker.New(evalbroker.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	br.SetEnabled(true)
	return br
}

func benchEvals(n, jobs int) []*structs.Evaluation {
	evals := make([]*structs.Evaluation, n)
	for i := range evals {
		evals[i] = mkEval("e"+strconv.Itoa(i), "job"+strconv.Itoa(i%jobs), 50, uint64(i+1))
	}
	return evals
}

// BenchmarkEnqueueDequeueAck measures one evaluation's full trip through the
// broker on one goroutine, with a backlog of 1000 ready evaluations.
func BenchmarkEnqueueDequeueAck(b *testing.B) {
	br := benchBroker(b)
	evals := benchEvals(b.N+1000, b.N+1000) // one job each: nothing waits
	for _, e := range evals[:1000] {
		if err := br.Enqueue(e); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	types := []string{"service"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := br.Enqueue(evals[1000+i]); err != nil {
			b.Fatal(err)
		}
		e, tok, err := br.Dequeue(ctx, types)
		if err != nil {
			b.Fatal(err)
		}
		if err := br.Ack(e.ID, tok); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "evals/s")
}

// BenchmarkWorkersHandoff measures throughput with 8 workers in Dequeue
// while one producer enqueues evaluations of distinct jobs: a waiting worker
// is handed each evaluation directly, and acks it.
func BenchmarkWorkersHandoff(b *testing.B) {
	const workers = 8
	br := benchBroker(b)
	evals := benchEvals(b.N, b.N)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var acked sync.WaitGroup
	acked.Add(b.N)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				e, tok, err := br.Dequeue(ctx, []string{"service"})
				if err != nil {
					return
				}
				if err := br.Ack(e.ID, tok); err != nil {
					b.Error(err)
				}
				acked.Done()
			}
		})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for _, e := range evals {
		if err := br.Enqueue(e); err != nil {
			b.Fatal(err)
		}
	}
	acked.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "evals/s")
	cancel()
	wg.Wait()
}
