package state

import (
	"fmt"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// BenchmarkAllocsByDeploymentRollout reads the allocations of a
// deployment halfway through a rollout: a job with 10,000 allocs of its
// old version and 10,000 of the new one in the deployment (the shape a
// deployment watcher pass reads).
func BenchmarkAllocsByDeploymentRollout(b *testing.B) {
	s, err := New()
	if err != nil {
		b.Fatal(err)
	}
	job := statetest.Job("web", 20_000)
	if _, err := s.RegisterJob(1, &structs.JobRegisterRequest{Job: job, Eval: statetest.Eval("e", job)}); err != nil {
		b.Fatal(err)
	}
	stored, _ := s.Snapshot().JobByID("default", "web")
	old := statetest.Deployment(stored, 0)
	old.ID = statetest.ID("old")
	cur := statetest.Deployment(stored, 0)
	for i, dep := range []*structs.Deployment{old, cur} {
		if err := s.update(uint64(2+i), func(t *WriteTxn) error { return s.UpsertDeploymentTxn(t, dep, 0) }); err != nil {
			b.Fatal(err)
		}
	}
	n := statetest.Node("a")
	var allocs []*structs.Allocation
	for k := range 20_000 {
		dep := old.ID
		if k%2 == 1 {
			dep = cur.ID
		}
		a := statetest.Alloc(stored, n, "e", dep, k)
		a.ID = statetest.ID(fmt.Sprint(k))
		allocs = append(allocs, a)
	}
	if err := s.UpsertAllocs(4, allocs, 1); err != nil {
		b.Fatal(err)
	}
	snap := s.Snapshot()
	b.ResetTimer()
	for range b.N {
		got, err := snap.AllocsByDeployment(cur.ID)
		if err != nil || len(got) != 10_000 {
			b.Fatalf("%d allocs, %v", len(got), err)
		}
	}
}
