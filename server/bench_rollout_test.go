package server

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// healthReporter plays every client: each alloc that appears without a
// health verdict is reported running and healthy at once.
func (h *harness) healthReporter(ctx context.Context, jobID string) {
	var index uint64
	yes := true
	for ctx.Err() == nil {
		res, idx, err := h.store().BlockingQuery(ctx, index, 0, func(ws memdb.WatchSet, s *state.Snapshot) (any, uint64, error) {
			all, err := s.AllocsByJob(structs.DefaultNamespace, jobID)
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
				updates = append(updates, &structs.Allocation{
					ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
					DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &yes},
				})
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

// BenchmarkRollout replaces every alloc of a 1,000-alloc job on 100 nodes
// with max_parallel 100, with clients that report health at once: the
// time is the path eval → plan → commit → health → watcher → eval, ten
// batches over, on the in-memory Raft.
func BenchmarkRollout(b *testing.B) { benchRollout(b, 100, 1000, 100) }

// BenchmarkRolloutLarge is BenchmarkRollout at the simulator's full
// rollout size: 10,000 allocs on 1,000 nodes, max_parallel 500.
func BenchmarkRolloutLarge(b *testing.B) { benchRollout(b, 1000, 10000, 500) }

func benchRollout(b *testing.B, nodes, count, parallel int) {
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		h := newHarness(b, func(c *Config) { c.Logger = hclog.NewNullLogger(); c.NumWorkers = 2 })
		h.start()
		for n := 0; n < nodes; n++ {
			if _, _, err := h.leader.RegisterNode(h.ctx, testNode(fmt.Sprint(n), 16000, 65536)); err != nil {
				b.Fatal(err)
			}
		}
		rctx, stopReporter := context.WithCancel(h.ctx)
		done := make(chan struct{})
		go func() { defer close(done); h.healthReporter(rctx, "big") }()
		v1 := testJob("big", count, 10)
		v1.TaskGroups[0].Update.MaxParallel = parallel
		if _, err := h.leader.RegisterJob(h.ctx, v1); err != nil {
			b.Fatal(err)
		}
		h.waitFor("version 0 stable", func(s *state.Snapshot) bool {
			d := deploymentOf(s, "big", 0)
			return d != nil && d.Status == structs.DeploymentStatusSuccessful
		})
		v2 := v1.Copy()
		v2.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "2h"}
		b.StartTimer()
		start := time.Now()
		if _, err := h.leader.RegisterJob(h.ctx, v2); err != nil {
			b.Fatal(err)
		}
		h.waitFor("version 1 rolled out", func(s *state.Snapshot) bool {
			d := deploymentOf(s, "big", 1)
			return d != nil && d.Status == structs.DeploymentStatusSuccessful
		})
		total += time.Since(start)
		b.StopTimer()
		stopReporter()
		<-done
		h.stop()
	}
	b.ReportMetric(total.Seconds()/float64(b.N)/float64(count/parallel)*1e3, "ms/batch")
}
