package server

import (
	"fmt"
	"testing"

	"github.com/droverhq/drover/scheduler"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// BenchmarkPassMidRollout times what a worker's pass reads and reconciles
// halfway through a rollout of a 10,000-alloc job on 1,000 nodes: 5,000
// old allocs stopped, 5,000 replacements healthy, 5,000 old ones still
// running. "all" reads every alloc of the job, "desired-run" leaves out
// the stopped ones (as the worker does).
func BenchmarkPassMidRollout(b *testing.B) {
	const count, nodes = 10_000, 1000
	s, err := state.New()
	if err != nil {
		b.Fatal(err)
	}
	var ns []*structs.Node
	for i := range nodes {
		n := statetest.Node(fmt.Sprintf("node-%04d", i))
		ns = append(ns, n)
		if err := s.UpsertNode(uint64(1+i), n); err != nil {
			b.Fatal(err)
		}
	}
	old := statetest.Job("web", count)
	old.CreateIndex = 1
	job := old.Copy()
	job.Version = 1
	job.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
	job.TaskGroups[0].Update.MaxParallel = 500
	dep := statetest.Deployment(job, 0)
	yes := true
	var allocs []*structs.Allocation
	for i := range count {
		a := statetest.Alloc(old, ns[i%nodes], "e", "", i)
		a.ClientStatus = structs.AllocClientStatusRunning
		if i < count/2 {
			a.DesiredStatus = structs.AllocDesiredStatusStop
			n := statetest.Alloc(job, ns[(i+1)%nodes], "e2", dep.ID, i)
			n.ID = statetest.ID(fmt.Sprint("new-", i))
			n.ClientStatus = structs.AllocClientStatusRunning
			n.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &yes}
			allocs = append(allocs, n)
		}
		allocs = append(allocs, a)
	}
	if err := s.UpsertAllocs(uint64(nodes+1), allocs, 1); err != nil {
		b.Fatal(err)
	}
	snap := s.Snapshot()
	reconcile := func(b *testing.B, in scheduler.Input) {
		n := 0
		in.Job, in.Deployment, in.Nodes, in.Now, in.EvalID = job, dep, ns, statetest.T0, "eval"
		in.IDs = func() string { n++; return fmt.Sprint("p", n) }
		if p := scheduler.Reconcile(in); len(p.Place) != 500 {
			b.Fatalf("plan places %d, want 500", len(p.Place))
		}
	}
	b.Run("all", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			all, err := jobAllocs(snap.AllocsByJob, structs.DefaultNamespace, "web")
			if err != nil {
				b.Fatal(err)
			}
			reconcile(b, scheduler.Input{Allocs: all})
		}
	})
	b.Run("desired-run", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			run, err := jobAllocs(snap.AllocsByJobDesiredRun, structs.DefaultNamespace, "web")
			if err != nil {
				b.Fatal(err)
			}
			stopped, err := stoppedRunVersion(snap, job, run)
			if err != nil {
				b.Fatal(err)
			}
			reconcile(b, scheduler.Input{Allocs: run, StoppedRunVersion: stopped})
		}
	})
}
