package state

import (
	"fmt"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// BenchmarkAllocWritesZones measures the writes of one new alloc's life
// in a deployment whose group rolls out by zones: its placement (a plan),
// a "running" report and its healthy verdict, each its own transaction;
// the zone figures move in the same transactions.
func BenchmarkAllocWritesZones(b *testing.B) { benchAllocWrites(b, true) }

// BenchmarkAllocWritesNoZones is the same without zones, for comparison.
func BenchmarkAllocWritesNoZones(b *testing.B) { benchAllocWrites(b, false) }

func benchAllocWrites(b *testing.B, zones bool) {
	s, err := New()
	if err != nil {
		b.Fatal(err)
	}
	job := statetest.Job("web", 1000)
	if _, err := s.RegisterJob(1, &structs.JobRegisterRequest{Job: job, Eval: statetest.Eval("e", job)}); err != nil {
		b.Fatal(err)
	}
	stored, _ := s.Snapshot().JobByID("default", "web")
	dep := statetest.Deployment(stored, 0)
	names := []string{"a", "b", "c"}
	if zones {
		for _, n := range names {
			dep.TaskGroups["web"].Zones = append(dep.TaskGroups["web"].Zones,
				&structs.ZoneState{Name: n, Size: 334, State: structs.ZoneStateRolling})
		}
	}
	if err := s.ApplyPlanResults(2, &structs.ApplyPlanResultsRequest{Deployment: dep, Job: stored, UpdatedAt: 1}); err != nil {
		b.Fatal(err)
	}
	nodes := make([]*structs.Node, len(names))
	for i, n := range names {
		nodes[i] = statetest.Node(n)
	}
	index := uint64(3)
	b.ResetTimer()
	for i := range b.N {
		a := statetest.Alloc(stored, nodes[i%len(nodes)], "e", dep.ID, i)
		a.ID = statetest.ID(fmt.Sprintf("bench/%d", i))
		a.Job = nil
		if zones {
			a.Zone = names[i%len(names)]
		}
		at := int64(index)
		if err := s.ApplyPlanResults(index, &structs.ApplyPlanResultsRequest{EvalID: "e", Job: stored,
			AllocsPlaced: []*structs.Allocation{a}, UpdatedAt: at}); err != nil {
			b.Fatal(err)
		}
		for k, rep := range []*structs.Allocation{
			{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning},
			health(a.ID, true, statetest.T0),
		} {
			if err := s.UpdateAllocsFromClient(index+1+uint64(k), &structs.AllocClientUpdateRequest{
				Allocs: []*structs.Allocation{rep}, UpdatedAt: at}); err != nil {
				b.Fatal(err)
			}
		}
		index += 3
	}
}
