package scheduler_test

import (
	"fmt"
	"testing"

	"github.com/droverhq/drover/scheduler"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// rolloutWorld is one pass of a big rollout: a 10,000-alloc job at
// version 0 on 1,000 nodes that also run 20,000 allocs of 20 other jobs,
// and version 1 of the job (a destructive change) replacing maxParallel
// allocs per pass. The same world is in a real store.
type rolloutWorld struct {
	nodes  []*structs.Node
	job    *structs.Job // version 1
	mine   []*structs.Allocation
	all    []*structs.Allocation
	byNode map[string][]*structs.Allocation
	snap   *state.Snapshot
}

// newRolloutWorld builds the world; with stopped > 0 the job also has
// that many allocs of the version before, which the servers stopped and
// whose clients finished (a previous rollout's, not yet collected), on
// the same nodes.
func newRolloutWorld(b *testing.B, maxParallel, stopped int) *rolloutWorld {
	b.Helper()
	const nodes, jobAllocs, others, otherJobs = 1000, 10_000, 20_000, 20
	w := &rolloutWorld{byNode: map[string][]*structs.Allocation{}}
	s, err := state.New()
	if err != nil {
		b.Fatal(err)
	}
	for i := range nodes {
		n := statetest.Node(fmt.Sprintf("node-%04d", i))
		w.nodes = append(w.nodes, n)
		if err := s.UpsertNode(uint64(1+i), n); err != nil {
			b.Fatal(err)
		}
	}
	old := statetest.Job("web", jobAllocs)
	for i := range jobAllocs {
		a := statetest.Alloc(old, w.nodes[i%nodes], "e", "", i)
		a.ClientStatus = structs.AllocClientStatusRunning
		w.mine = append(w.mine, a)
	}
	var rest []*structs.Allocation
	for k := range otherJobs {
		j := statetest.Job(fmt.Sprintf("other-%02d", k), others/otherJobs)
		for i := range others / otherJobs {
			a := statetest.Alloc(j, w.nodes[(i*otherJobs+k)%nodes], "e", "", i)
			a.ClientStatus = structs.AllocClientStatusRunning
			for _, t := range a.AllocatedResources.Tasks {
				t.Cpu.CpuShares, t.Memory.MemoryMB = 50, 150
			}
			rest = append(rest, a)
		}
	}
	for i := range stopped {
		a := statetest.Alloc(old, w.nodes[i%nodes], "e", "before", i)
		a.DesiredStatus, a.ClientStatus = structs.AllocDesiredStatusStop, structs.AllocClientStatusComplete
		rest = append(rest, a)
	}
	if err := s.UpsertAllocs(uint64(nodes+1), append(append([]*structs.Allocation{}, w.mine...), rest...), 1); err != nil {
		b.Fatal(err)
	}
	w.snap = s.Snapshot()
	// The placer sees the stored allocs, as the worker does.
	if w.mine, err = w.snap.AllocsByJob(structs.DefaultNamespace, "web"); err != nil {
		b.Fatal(err)
	}
	if w.all, err = w.snap.Allocs(); err != nil {
		b.Fatal(err)
	}
	for _, a := range w.all {
		w.byNode[a.NodeID] = append(w.byNode[a.NodeID], a)
	}
	w.job = old.Copy()
	w.job.Version = 1
	w.job.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
	w.job.TaskGroups[0].Update.MaxParallel = maxParallel
	return w
}

func (w *rolloutWorld) reconcile(allocs []*structs.Allocation) *scheduler.Plan {
	n := 0
	return scheduler.Reconcile(scheduler.Input{
		Job: w.job, Allocs: allocs, Nodes: w.nodes, Now: statetest.T0, EvalID: "eval",
		IDs: func() string { n++; return fmt.Sprint("new-", n) },
	})
}

func checkPlaced(b *testing.B, res *scheduler.PlaceResult, want int) {
	if len(res.Allocs) != want {
		b.Fatalf("placed %d of %d: %+v", len(res.Allocs), want, res.Failed)
	}
}

// BenchmarkRolloutPass times one pass of a rollout replacing 500 (and 50)
// allocs of a 10,000-alloc job on 1,000 nodes that hold 20,000 other
// allocs, with the eager placer (every alloc read and counted) and the lazy
// one (the job's allocs, and each node's when a placement looks at it).
//
//	placer: placement only, allocs in memory
//	store:  what a worker pass does from a store snapshot: read allocs,
//	        reconcile, build the placer, place
func BenchmarkRolloutPass(b *testing.B) {
	for _, mp := range []int{500, 50} {
		w := newRolloutWorld(b, mp, 0)
		plan := w.reconcile(w.mine)
		if len(plan.Place) != mp {
			b.Fatalf("plan places %d, want %d", len(plan.Place), mp)
		}
		load := func(id string) ([]*structs.Allocation, error) { return w.byNode[id], nil }
		b.Run(fmt.Sprintf("replace=%d/placer/eager", mp), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				checkPlaced(b, scheduler.NewPlacer(w.nodes, w.all, uint64(i)).Place(w.job, plan, statetest.T0), mp)
			}
		})
		b.Run(fmt.Sprintf("replace=%d/placer/lazy", mp), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				checkPlaced(b, scheduler.NewPlacerLazy(w.nodes, w.mine, load, uint64(i)).Place(w.job, plan, statetest.T0), mp)
			}
		})
		b.Run(fmt.Sprintf("replace=%d/store/eager", mp), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				all, err := w.snap.Allocs()
				if err != nil {
					b.Fatal(err)
				}
				var mine []*structs.Allocation
				for _, a := range all {
					if a.JobID == "web" && a.Namespace == structs.DefaultNamespace {
						mine = append(mine, a)
					}
				}
				p := w.reconcile(mine)
				checkPlaced(b, scheduler.NewPlacer(w.nodes, all, uint64(i)).Place(w.job, p, statetest.T0), mp)
			}
		})
		b.Run(fmt.Sprintf("replace=%d/store/lazy", mp), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				mine, err := w.snap.AllocsByJob(structs.DefaultNamespace, "web")
				if err != nil {
					b.Fatal(err)
				}
				p := w.reconcile(mine)
				checkPlaced(b, scheduler.NewPlacerLazy(w.nodes, mine, w.snap.AllocsByNode, uint64(i)).Place(w.job, p, statetest.T0), mp)
			}
		})
	}
}

// BenchmarkRolloutPassAfterRollout times the store pass of
// BenchmarkRolloutPass (replacing 50) when the job also holds the 10,000
// stopped allocs of its previous rollout: reading every alloc of the job
// and of each node (all), or only those the servers did not stop (live),
// as a worker does.
func BenchmarkRolloutPassAfterRollout(b *testing.B) {
	const mp = 50
	w := newRolloutWorld(b, mp, 10_000)
	for _, v := range []struct {
		name   string
		job    func(ns, id string) ([]*structs.Allocation, error)
		node   func(id string) ([]*structs.Allocation, error)
		allocs int
	}{
		{"all", w.snap.AllocsByJob, w.snap.AllocsByNode, 20_000},
		{"live", w.snap.LiveAllocsByJob, w.snap.LiveAllocsByNode, 10_000},
	} {
		b.Run("read="+v.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				mine, err := v.job(structs.DefaultNamespace, "web")
				if err != nil {
					b.Fatal(err)
				}
				if len(mine) != v.allocs {
					b.Fatalf("read %d allocs of the job, want %d", len(mine), v.allocs)
				}
				p := w.reconcile(mine)
				checkPlaced(b, scheduler.NewPlacerLazy(w.nodes, mine, v.node, uint64(i)).Place(w.job, p, statetest.T0), mp)
			}
		})
	}
}

// BenchmarkRolloutPassMemo times a worker's pass (read the job's allocs
// from a snapshot, reconcile, place) when one batch's reports arrive, the
// rollout running under its deployment: between two passes, reports
// rewrite the given number of the job's 10,000 allocs. full reconciles
// every alloc (Reconcile); memo reads those that changed
// (ReconcileMemo, its memo kept from the job's previous pass); leader is
// memo with the nodes from one NodeTable that the passes share, as the
// leader's workers run them. Each
// iteration is one pass (or only its read and reconciliation); the passes
// alternate between two snapshots that differ by the batch. cpu-ms/op is the process's CPU per pass, the
// collector's included.
//
// mp is the rollout's max_parallel, the placements of each pass: 50, or
// 10 as the simulator's rollout passes place (a pass every few reports),
// or 500 as a change of stage places a whole zone or group.
func BenchmarkRolloutPassMemo(b *testing.B) {
	for _, c := range []struct{ mp, batch int }{{50, 50}, {50, 500}, {10, 10}, {500, 10}} {
		mp, batch := c.mp, c.batch
		w := newRolloutWorld(b, mp, 0)
		d := &structs.Deployment{ID: "d1", Namespace: structs.DefaultNamespace, JobID: "web", JobVersion: w.job.Version,
			JobCreateIndex: w.job.CreateIndex, Status: structs.DeploymentStatusRunning,
			TaskGroups: map[string]*structs.DeploymentState{w.job.TaskGroups[0].Name: {DesiredTotal: 10_000}}}
		s, err := state.New()
		if err != nil {
			b.Fatal(err)
		}
		for i, n := range w.nodes {
			if err := s.UpsertNode(uint64(1+i), n); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.UpsertAllocs(2000, w.mine, 1); err != nil {
			b.Fatal(err)
		}
		s1 := s.Snapshot()
		mine, err := s1.LiveAllocsByJob(structs.DefaultNamespace, "web")
		if err != nil {
			b.Fatal(err)
		}
		var reports []*structs.Allocation
		for _, a := range mine[:batch] {
			c := a.Copy()
			c.ClientDescription = "reported"
			reports = append(reports, c)
		}
		if err := s.UpsertAllocs(2001, reports, 1); err != nil {
			b.Fatal(err)
		}
		snaps := []*state.Snapshot{s1, s.Snapshot()}
		for _, c := range []struct {
			mode  string
			place bool
		}{{"full", true}, {"memo", true}, {"leader", true}, {"full", false}, {"memo", false}} {
			mode, what := c.mode, "pass"
			if !c.place {
				what = "read+reconcile"
			}
			name := fmt.Sprintf("batch=%d/%s/%s", batch, what, mode)
			if mp != 50 {
				name = fmt.Sprintf("mp=%d/", mp) + name
			}
			b.Run(name, func(b *testing.B) {
				m := &scheduler.Memo{}
				// The leader's passes share one NodeTable while the nodes
				// do not change.
				table := scheduler.NewNodeTable(w.nodes)
				pass := func(i int) {
					snap := snaps[i%2]
					mine, err := snap.LiveAllocsByJob(structs.DefaultNamespace, "web")
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					in := scheduler.Input{Job: w.job, Allocs: mine, Deployment: d, Nodes: w.nodes, Now: statetest.T0, EvalID: "eval",
						IDs: func() string { n++; return fmt.Sprint("new-", n) }}
					var p *scheduler.Plan
					if mode == "leader" {
						in.Table = table
					}
					if mode == "full" {
						p = scheduler.Reconcile(in)
					} else {
						p = scheduler.ReconcileMemo(in, m)
					}
					if !c.place {
						if len(p.Place) != mp {
							b.Fatalf("plan places %d, want %d", len(p.Place), mp)
						}
						return
					}
					placer := scheduler.NewPlacerLazyJob(w.nodes, structs.DefaultNamespace, "web", mine, snap.LiveAllocsByNode, uint64(i))
					if mode == "leader" {
						// As the leader's worker: the table keeps each
						// node's usage by the store's version of its allocs.
						placer = scheduler.NewPlacerLazyTableVersioned(table, structs.DefaultNamespace, "web", mine, snap.LiveAllocsByNodeVersion, uint64(i))
					}
					checkPlaced(b, placer.Place(w.job, p, statetest.T0), mp)
				}
				// The job's previous pass, which built the memo.
				pass(1)
				b.ReportAllocs()
				b.ResetTimer()
				cpu := processCPU()
				for i := 0; i < b.N; i++ {
					pass(i)
				}
				b.ReportMetric((processCPU()-cpu)*1000/float64(b.N), "cpu-ms/op")
				if mode == "memo" && b.N > 2 && m.Rebuilds() != 1 {
					b.Fatalf("memo rebuilt %d times", m.Rebuilds())
				}
			})
		}
	}
}
