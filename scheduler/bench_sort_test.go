package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/droverhq/drover/structs"
)

// BenchmarkReconcileRollingMidway reconciles a 10,000-alloc group halfway
// through a rollout, as a worker sees it: 5,000 old allocs stopped, 5,000
// replacements healthy and 5,000 old ones still running, in the store's
// order (random IDs).
func BenchmarkReconcileRollingMidway(b *testing.B) {
	const count = 10000
	ns := benchCluster(1000)
	old := benchJob(count)
	nj := old.Copy()
	nj.Version = 1
	nj.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
	nj.TaskGroups[0].Update.MaxParallel = 500
	d := &structs.Deployment{ID: "d1", JobID: nj.ID, JobVersion: 1, Status: structs.DeploymentStatusRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: count}}}
	rng := rand.New(rand.NewPCG(1, 2))
	yes := true
	var allocs []*structs.Allocation
	add := func(i int, job *structs.Job, desired, deployment string) {
		allocs = append(allocs, &structs.Allocation{
			ID: fmt.Sprintf("%016x", rng.Uint64()), Name: structs.AllocName(nj.ID, "web", i), JobID: nj.ID, Job: job,
			TaskGroup: "web", NodeID: ns[i%len(ns)].ID, DesiredStatus: desired, ClientStatus: "running",
			DeploymentID: deployment, DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &yes},
		})
	}
	for i := 0; i < count; i++ {
		if i < count/2 {
			add(i, old, structs.AllocDesiredStatusStop, "")
			add(i, nj, structs.AllocDesiredStatusRun, d.ID)
		} else {
			add(i, old, structs.AllocDesiredStatusRun, "")
		}
	}
	rng.Shuffle(len(allocs), func(i, j int) { allocs[i], allocs[j] = allocs[j], allocs[i] })
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		p := Reconcile(Input{Job: nj, Allocs: allocs, Deployment: d, Nodes: ns, Now: baseTime,
			IDs: func() string { n++; return fmt.Sprint("n", n) }})
		if len(p.Place) != 500 {
			b.Fatalf("placed %d", len(p.Place))
		}
	}
}
