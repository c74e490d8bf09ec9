package state

import (
	"fmt"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// BenchmarkClientUpdates100k applies clients' running reports, 256 per
// entry, to a job of 100,000 allocations over 5,000 nodes: the write the
// servers make most while a large placement starts.
func BenchmarkClientUpdates100k(b *testing.B) {
	s, placed := store100k(b)
	index := uint64(len(placed)/5000 + 3)
	const perEntry = 256
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		batch := make([]*structs.Allocation, 0, perEntry)
		for k := range perEntry {
			a := placed[(i*perEntry+k)%len(placed)]
			batch = append(batch, &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
				TaskStates: map[string]*structs.TaskState{"server": {State: structs.TaskStateRunning, StartedAt: statetest.T0,
					Events: []*structs.TaskEvent{{Type: structs.TaskStarted, Time: int64(i)}}}}})
		}
		index++
		if err := s.UpdateAllocsFromClient(index, &structs.AllocClientUpdateRequest{Allocs: batch, UpdatedAt: int64(index)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perEntry), "ns/alloc")
}

// BenchmarkAllocsByNode100k reads the allocations of one node after
// another in a store of 100,000 allocations over 5,000 nodes, as the plan
// applier checks a plan's nodes.
func BenchmarkAllocsByNode100k(b *testing.B) {
	s, _ := store100k(b)
	snap := s.Snapshot()
	nodes := make([]string, 5000)
	for k := range nodes {
		nodes[k] = statetest.Node(fmt.Sprint(k)).ID
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		l, err := snap.AllocsByNode(nodes[i%len(nodes)])
		if err != nil || len(l) != 20 {
			b.Fatalf("%d allocs, %v", len(l), err)
		}
	}
}

// store100k returns a store holding a job of 100,000 allocations placed
// over 5,000 nodes, and the allocations.
func store100k(b *testing.B) (*Store, []*structs.Allocation) {
	s, err := New()
	if err != nil {
		b.Fatal(err)
	}
	job := statetest.Job("web", 100_000)
	if _, err := s.RegisterJob(1, &structs.JobRegisterRequest{Job: job, Eval: statetest.Eval("e", job)}); err != nil {
		b.Fatal(err)
	}
	stored, _ := s.Snapshot().JobByID("default", "web")
	dep := statetest.Deployment(stored, 0)
	if err := s.ApplyPlanResults(2, &structs.ApplyPlanResultsRequest{Deployment: dep, Job: stored, UpdatedAt: 1}); err != nil {
		b.Fatal(err)
	}
	placed := make([]*structs.Allocation, 0, 100_000)
	for k := range 100_000 {
		a := statetest.Alloc(stored, statetest.Node(fmt.Sprint(k%5000)), "e", dep.ID, k)
		a.ID = statetest.ID(fmt.Sprintf("alloc/%d", k))
		a.Job = nil
		placed = append(placed, a)
	}
	index := uint64(3)
	for i := 0; i < len(placed); i += 5000 {
		if err := s.ApplyPlanResults(index, &structs.ApplyPlanResultsRequest{EvalID: "e", Job: stored,
			AllocsPlaced: placed[i : i+5000], UpdatedAt: 2}); err != nil {
			b.Fatal(err)
		}
		index++
	}
	return s, placed
}
