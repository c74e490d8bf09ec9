package scheduler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/droverhq/drover/structs"
)

// TestPlaceHonoursNodePool: a job of pool X lands only on X's nodes, a job
// without a pool only on the default pool's, and a job of "all" anywhere.
func TestPlaceHonoursNodePool(t *testing.T) {
	ns := nodes(6, func(i int, n *structs.Node) {
		switch i % 3 {
		case 0:
			n.NodePool = "gpu"
		case 1:
			n.NodePool = "" // a node that names none is in default
		}
	})
	pools := map[string]string{}
	for _, n := range ns {
		pools[n.ID] = nodePool(n)
	}
	for _, c := range []struct {
		pool string
		want map[string]bool // the pools the allocs may land in
	}{
		{"gpu", map[string]bool{"gpu": true}},
		{"", map[string]bool{"default": true}},
		{"default", map[string]bool{"default": true}},
		{"all", map[string]bool{"gpu": true, "default": true}},
	} {
		j, plan := placeJob(12, func(j *structs.Job) { j.NodePool = c.pool })
		res := NewPlacer(ns, nil, 1).Place(j, plan, baseTime)
		if len(res.Allocs) != 12 {
			t.Fatalf("pool %q: placed %d, want 12 (failed: %+v)", c.pool, len(res.Allocs), res.Failed)
		}
		seen := map[string]bool{}
		for _, a := range res.Allocs {
			p := pools[a.NodeID]
			if !c.want[p] {
				t.Errorf("pool %q: alloc on node %s of pool %q", c.pool, a.NodeID, p)
			}
			seen[p] = true
		}
		if len(seen) != len(c.want) {
			t.Errorf("pool %q: allocs in pools %v, want every one of %v", c.pool, seen, c.want)
		}
	}
	// A pool without nodes places nothing.
	j, plan := placeJob(2, func(j *structs.Job) { j.NodePool = "empty" })
	if res := NewPlacer(ns, nil, 1).Place(j, plan, baseTime); len(res.Allocs) != 0 {
		t.Errorf("pool with no nodes: placed %d", len(res.Allocs))
	}
}

// TestSystemJobHonoursNodePool: a system job runs on every node of its
// pool and on no other.
func TestSystemJobHonoursNodePool(t *testing.T) {
	ns := nodes(5, func(i int, n *structs.Node) {
		if i%2 == 0 {
			n.NodePool = "edge"
		}
	})
	for _, c := range []struct {
		pool string
		want []string
	}{
		{"edge", []string{"n0", "n2", "n4"}},
		{"default", []string{"n1", "n3"}},
		{"all", []string{"n0", "n1", "n2", "n3", "n4"}},
	} {
		j := baseJob()
		j.Type = structs.JobTypeSystem
		j.NodePool = c.pool
		n := 0
		plan := Reconcile(Input{Job: j, Nodes: ns, Now: baseTime, IDs: func() string { n++; return fmt.Sprint("id", n) }})
		res := NewPlacer(ns, nil, 1).Place(j, plan, baseTime)
		var got []string
		for _, a := range res.Allocs {
			got = append(got, a.NodeID)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("pool %q: placed on %v, want %v", c.pool, got, c.want)
		}
	}
}
