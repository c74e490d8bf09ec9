package scheduler

import (
	"testing"

	"github.com/droverhq/drover/structs"
)

// The scheduler configuration's algorithm: binpack places on the node the
// allocation fills most, spread on the one it fills least.
func TestSpreadAlgorithmPrefersTheEmptierNode(t *testing.T) {
	ns := nodes(2, func(i int, n *structs.Node) {
		if i == 1 {
			n.NodeResources.Cpu.CpuShares, n.NodeResources.Memory.MemoryMB = 40000, 81920
		}
	})
	for _, c := range []struct {
		spread bool
		want   string
	}{{false, "n0"}, {true, "n1"}} {
		j, plan := placeJob(1, nil)
		p := NewPlacer(ns, nil, 1)
		p.Spread = c.spread
		res := p.Place(j, plan, baseTime)
		if len(res.Allocs) != 1 || res.Allocs[0].NodeID != c.want {
			t.Errorf("spread=%v: placed %+v, want on %s", c.spread, perNode(res.Allocs), c.want)
		}
	}
}

// With memory oversubscription off, a task's memory_max is left out of
// what the allocation is given, as Nomad's.
func TestNoMemoryOversubscriptionDropsMemoryMax(t *testing.T) {
	for _, off := range []bool{false, true} {
		j, plan := placeJob(1, func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Resources.MemoryMaxMB = 1024 })
		p := NewPlacer(nodes(1, nil), nil, 1)
		p.NoMemoryOversubscription = off
		res := p.Place(j, plan, baseTime)
		if len(res.Allocs) != 1 {
			t.Fatalf("placed %d", len(res.Allocs))
		}
		got := res.Allocs[0].AllocatedResources.Tasks[j.TaskGroups[0].Tasks[0].Name].Memory
		want := int64(1024)
		if off {
			want = 0
		}
		if got.MemoryMaxMB != want || got.MemoryMB != 256 {
			t.Errorf("oversubscription off=%v: memory %+v, want max %d", off, got, want)
		}
	}
}
