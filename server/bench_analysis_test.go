//go:build unix

package server

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// processCPU returns the process's user+system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportAllHealthy plays every client of every job: each alloc of a
// deployment without a health verdict is reported running and healthy.
func (h *harness) reportAllHealthy(ctx context.Context) {
	var index uint64
	yes := true
	for ctx.Err() == nil {
		res, idx, err := h.store().BlockingQuery(ctx, index, 0, func(ws memdb.WatchSet, s *state.Snapshot) (any, uint64, error) {
			all, err := s.Allocs()
			if err != nil {
				return nil, 0, err
			}
			i, err := s.Index(state.TableAllocs)
			return all, i, err
		})
		if err != nil || ctx.Err() != nil {
			return
		}
		index = idx
		var updates []*structs.Allocation
		for _, a := range res.([]*structs.Allocation) {
			if !a.TerminalStatus() && a.DeploymentID != "" && !a.IsHealthy() {
				updates = append(updates, &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
					DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &yes}})
			}
		}
		if len(updates) > 0 {
			if _, err := h.leader.UpdateAllocsFromClient(ctx, updates); err != nil && ctx.Err() == nil {
				h.t.Error(err)
				return
			}
		}
	}
}

// BenchmarkConcurrentRolloutsAnalysis rolls out a new version of 100 jobs
// at once (100 concurrent deployments, 4 allocs each, max_parallel 2: two
// batches), without analysis and with an each_batch analysis of one
// measurement per batch (200 runs, 200 measurements, a recorded value),
// on the in-memory Raft with clients that report health at once. It
// reports the process's CPU time per deployment (leader, scheduler,
// state machine and the simulated clients together) and the wall time of
// the whole rollout; the difference between the two sub-benchmarks is
// what analysis costs the leader.
func BenchmarkConcurrentRolloutsAnalysis(b *testing.B) {
	for _, withAnalysis := range []bool{false, true} {
		name := "none"
		if withAnalysis {
			name = "each_batch"
		}
		b.Run(name, func(b *testing.B) { benchConcurrentRollouts(b, 100, 4, 2, withAnalysis) })
	}
}

func benchConcurrentRollouts(b *testing.B, jobs, count, parallel int, withAnalysis bool) {
	var wall, cpu time.Duration
	measurements := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m := &fakeMeasurer{outcome: structs.AnalysisOutcomeSuccess}
		h := newHarness(b, func(c *Config) {
			c.Logger = hclog.NewNullLogger()
			c.NumWorkers = 2
			c.AnalysisMeasure = m.measure
		})
		h.start()
		for n := 0; n < 20; n++ {
			if _, _, err := h.leader.RegisterNode(h.ctx, testNode(fmt.Sprint(n), 64000, 65536)); err != nil {
				b.Fatal(err)
			}
		}
		rctx, stopReporter := context.WithCancel(h.ctx)
		done := make(chan struct{})
		go func() { defer close(done); h.reportAllHealthy(rctx) }()
		var v1s []*structs.Job
		for j := 0; j < jobs; j++ {
			v0 := testJob(fmt.Sprintf("job%03d", j), count, 10)
			v0.TaskGroups[0].Update.MaxParallel = parallel
			if _, err := h.leader.RegisterJob(h.ctx, v0); err != nil {
				b.Fatal(err)
			}
			v1 := v0.Copy()
			v1.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "2h"}
			if withAnalysis {
				v1.TaskGroups[0].Update.Analyses = []*structs.Analysis{eachBatch(1, time.Second)}
			}
			v1s = append(v1s, v1)
		}
		allDone := func(version uint64) func(s *state.Snapshot) bool {
			return func(s *state.Snapshot) bool {
				for _, v := range v1s {
					d := deploymentOf(s, v.ID, version)
					if d == nil || d.Status != structs.DeploymentStatusSuccessful {
						return false
					}
				}
				return true
			}
		}
		h.waitFor("every version 0 stable", allDone(0))
		h.idle()
		b.StartTimer()
		start, cpu0 := time.Now(), processCPU()
		for _, v1 := range v1s {
			if _, err := h.leader.RegisterJob(h.ctx, v1); err != nil {
				b.Fatal(err)
			}
		}
		h.waitFor("every version 1 rolled out", allDone(1))
		wall += time.Since(start)
		cpu += processCPU() - cpu0
		b.StopTimer()
		measurements += m.calls()
		stopReporter()
		<-done
		h.stop()
	}
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N*jobs), "cpu-ms/deployment")
	b.ReportMetric(wall.Seconds()*1e3/float64(b.N), "ms/rollout")
	b.ReportMetric(float64(measurements)/float64(b.N*jobs), "measurements/deployment")
}
