package scheduler

import (
	"fmt"
	"testing"

	"github.com/droverhq/drover/structs"
)

// stickyWorld is a job of count allocs of version 0 on the first count of
// 20 nodes (one each), and version 1 of it changed destructively, its disk
// as sticky says.
func stickyWorld(count int, sticky bool, mod func(nj *structs.Job, ns []*structs.Node)) (*structs.Job, []*structs.Node, []*structs.Allocation) {
	ns := nodes(20, nil)
	old := baseJob()
	old.TaskGroups[0].Count = count
	old.TaskGroups[0].EphemeralDisk.Sticky = sticky
	var allocs []*structs.Allocation
	for i := range count {
		allocs = append(allocs, &structs.Allocation{
			ID: fmt.Sprintf("old%d", i), Name: fmt.Sprintf("example.web[%d]", i), NodeID: ns[i].ID,
			JobID: "example", Job: old, TaskGroup: "web", DesiredStatus: "run", ClientStatus: "running",
			AllocatedResources: &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
				"main": {Cpu: structs.AllocatedCpuResources{CpuShares: 100}, Memory: structs.AllocatedMemoryResources{MemoryMB: 300}},
			}},
		})
	}
	nj := old.Copy()
	nj.Version = 1
	nj.TaskGroups[0].Tasks[0].Env = map[string]string{"A": "2"}
	nj.TaskGroups[0].Update.MaxParallel = count
	if mod != nil {
		mod(nj, ns)
	}
	return nj, ns, allocs
}

// placeSticky reconciles and places version 1 with the eager placer and
// with a table's lazy one, and returns each one's allocs by the alloc
// they replace.
func placeSticky(t *testing.T, nj *structs.Job, ns []*structs.Node, allocs []*structs.Allocation) []map[string]*structs.Allocation {
	t.Helper()
	n := 0
	plan := Reconcile(Input{Job: nj, Allocs: allocs, Nodes: ns, Now: baseTime,
		IDs: func() string { n++; return fmt.Sprint("new", n) }})
	if len(plan.Place) != len(allocs) {
		t.Fatalf("plan places %d, want %d: %s", len(plan.Place), len(allocs), plan)
	}
	byNode := func(id string) ([]*structs.Allocation, error) {
		var out []*structs.Allocation
		for _, a := range allocs {
			if a.NodeID == id {
				out = append(out, a)
			}
		}
		return out, nil
	}
	placers := []*Placer{
		NewPlacer(ns, allocs, 1),
		NewPlacerLazyTable(NewNodeTable(ns), "", "example", allocs, byNode, 1),
	}
	var out []map[string]*structs.Allocation
	for _, p := range placers {
		res := p.Place(nj, plan, baseTime)
		if len(res.Allocs) != len(allocs) {
			t.Fatalf("placed %d of %d (failed %+v)", len(res.Allocs), len(allocs), res.Failed)
		}
		m := map[string]*structs.Allocation{}
		for _, a := range res.Allocs {
			m[a.PreviousAllocation] = a
		}
		out = append(out, m)
	}
	return out
}

// A replacement of a group whose ephemeral disk is sticky (or migrates)
// goes back to the node of the alloc it replaces when that node may take
// it, as Nomad's preferred node; otherwise it is placed as any other.
func TestPlaceStickyReturnsToThePreviousNode(t *testing.T) {
	nj, ns, allocs := stickyWorld(8, true, nil)
	for _, m := range placeSticky(t, nj, ns, allocs) {
		for _, old := range allocs {
			a := m[old.ID]
			if a == nil || a.NodeID != old.NodeID {
				t.Fatalf("replacement of %s on %v, want its node %s", old.ID, a, old.NodeID)
			}
			if a.Metrics == nil || a.Metrics.NodesEvaluated != 1 {
				t.Fatalf("metric %+v, want the one node evaluated", a.Metrics)
			}
		}
	}

	// migrate implies sticky.
	nj, ns, allocs = stickyWorld(8, false, func(nj *structs.Job, _ []*structs.Node) {
		nj.TaskGroups[0].EphemeralDisk.Migrate = true
	})
	for _, m := range placeSticky(t, nj, ns, allocs) {
		for _, old := range allocs {
			if m[old.ID].NodeID != old.NodeID {
				t.Fatalf("migrate: replacement of %s on %s, want %s", old.ID, m[old.ID].NodeID, old.NodeID)
			}
		}
	}

	// Without sticky the placer chooses among the nodes (the free ones
	// rank first by anti-affinity): some replacement moves.
	nj, ns, allocs = stickyWorld(8, false, nil)
	for _, m := range placeSticky(t, nj, ns, allocs) {
		moved := 0
		for _, old := range allocs {
			if m[old.ID].NodeID != old.NodeID {
				moved++
			}
		}
		if moved == 0 {
			t.Fatal("without sticky every replacement stayed on its node: the test shows nothing")
		}
	}
}

func TestPlaceStickyLeavesANodeThatCannotTakeIt(t *testing.T) {
	cases := []struct {
		name string
		mod  func(nj *structs.Job, ns []*structs.Node)
	}{
		{"draining", func(_ *structs.Job, ns []*structs.Node) { ns[0].Drain = true }},
		{"ineligible", func(_ *structs.Job, ns []*structs.Node) {
			ns[0].SchedulingEligibility = structs.NodeSchedulingIneligible
		}},
		{"down", func(_ *structs.Job, ns []*structs.Node) { ns[0].Status = structs.NodeStatusDown }},
		{"another datacenter now", func(nj *structs.Job, ns []*structs.Node) { ns[0].Datacenter = "dc9" }},
		{"constraint", func(nj *structs.Job, ns []*structs.Node) {
			nj.Constraints = append(nj.Constraints, &structs.Constraint{LTarget: "${node.unique.id}", RTarget: ns[0].ID, Operand: "!="})
		}},
		{"does not fit", func(nj *structs.Job, ns []*structs.Node) {
			ns[0].NodeResources.Memory.MemoryMB = 400
			nj.TaskGroups[0].Tasks[0].Resources.MemoryMB = 500
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nj, ns, allocs := stickyWorld(2, true, c.mod)
			for _, m := range placeSticky(t, nj, ns, allocs) {
				if got := m["old0"].NodeID; got == "n0" {
					t.Fatal("placed back on n0")
				}
				if got := m["old1"].NodeID; got != "n1" {
					t.Fatalf("old1's replacement on %s, want n1", got)
				}
				if mt := m["old0"].Metrics; mt.NodesEvaluated < 2 {
					t.Fatalf("old0's metric %+v: the miss on n0 should leave no trace, the search should evaluate nodes", mt)
				}
			}
		})
	}
}

// A surge replacement starts while the alloc it replaces runs on: it
// cannot take over its data, and is placed as any other.
func TestPlaceStickySurgeSearches(t *testing.T) {
	nj, ns, allocs := stickyWorld(8, true, func(nj *structs.Job, _ []*structs.Node) {
		nj.TaskGroups[0].Update.MaxSurge = structs.Count(8)
	})
	n := 0
	plan := Reconcile(Input{Job: nj, Allocs: allocs, Nodes: ns, Now: baseTime,
		IDs: func() string { n++; return fmt.Sprint("new", n) }})
	surges := 0
	for _, pl := range plan.Place {
		if pl.Surge {
			surges++
		}
	}
	if surges == 0 {
		t.Fatalf("no surge placement: %s", plan)
	}
	res := NewPlacer(ns, allocs, 1).Place(nj, plan, baseTime)
	for _, a := range res.Allocs {
		if a.Metrics.NodesEvaluated < 2 {
			t.Fatalf("surge replacement %s evaluated %d nodes: it went back without a search", a.ID, a.Metrics.NodesEvaluated)
		}
	}
}
