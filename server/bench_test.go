package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/state"
)

// BenchmarkRegisterToPlaced measures a service job of 5,000 mock allocs
// on 1,000 nodes, from RegisterJob to every alloc committed: eval feeding,
// one worker's reconcile and placement, the plan applier's check, the
// log entry's encoding and the FSM's apply. Raft is the in-memory fake
// (no network, no disk), so this is the scheduling path's own cost.
func BenchmarkRegisterToPlaced(b *testing.B) {
	for _, size := range []struct{ nodes, allocs int }{{100, 500}, {1000, 5000}} {
		b.Run(fmt.Sprintf("nodes=%d/allocs=%d", size.nodes, size.allocs), func(b *testing.B) {
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				h := newHarness(b, func(c *Config) { c.Logger = hclog.NewNullLogger(); c.NumWorkers = 4 })
				h.start()
				for n := 0; n < size.nodes; n++ {
					if _, _, err := h.leader.RegisterNode(h.ctx, testNode(fmt.Sprint(n), 8000, 16384)); err != nil {
						b.Fatal(err)
					}
				}
				job := testJob("big", size.allocs, 100)
				b.StartTimer()
				start := time.Now()
				if _, err := h.leader.RegisterJob(h.ctx, job); err != nil {
					b.Fatal(err)
				}
				h.waitFor("every alloc placed", func(s *state.Snapshot) bool {
					idx, _ := s.Index(state.TableAllocs)
					if idx == 0 {
						return false
					}
					return len(allocsOf(s, "big")) == size.allocs
				})
				total += time.Since(start)
				b.StopTimer()
				h.stop()
			}
			b.ReportMetric(float64(size.allocs*b.N)/total.Seconds(), "placements/s")
		})
	}
}

// BenchmarkManyJobs registers 50 jobs of 100 allocs at once on 1,000
// nodes: many plans in flight, serialised by the plan applier.
func BenchmarkManyJobs(b *testing.B) {
	const jobs, per, nodes = 50, 100, 1000
	var total time.Duration
	var rejected, plans uint64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		h := newHarness(b, func(c *Config) { c.Logger = hclog.NewNullLogger(); c.NumWorkers = 4 })
		h.start()
		for n := 0; n < nodes; n++ {
			if _, _, err := h.leader.RegisterNode(h.ctx, testNode(fmt.Sprint(n), 8000, 16384)); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		start := time.Now()
		for j := 0; j < jobs; j++ {
			if _, err := h.leader.RegisterJob(h.ctx, testJob(fmt.Sprint("job", j), per, 100)); err != nil {
				b.Fatal(err)
			}
		}
		h.waitFor("every alloc placed", func(s *state.Snapshot) bool {
			all, _ := s.Allocs()
			return len(all) == jobs*per
		})
		total += time.Since(start)
		b.StopTimer()
		h.stop()
		st := h.leader.Stats()
		rejected += st.PlacementsRejected
		plans += st.PlansApplied
	}
	b.ReportMetric(float64(jobs*per*b.N)/total.Seconds(), "placements/s")
	b.ReportMetric(float64(rejected)/float64(b.N), "rejected/op")
	b.ReportMetric(float64(plans)/float64(b.N), "plans/op")
}
