package scheduler

import (
	"testing"

	"github.com/droverhq/drover/structs"
)

// distinct_property, as Nomad's: at most value allocations per value of
// the property, counting the job's (job constraint) or the group's (group
// constraint) live allocations and those placed in the same plan; a node
// without the property is filtered.
func TestPlaceDistinctProperty(t *testing.T) {
	racks := []string{"r1", "r1", "r2", "r2", "r3", ""}
	ns := nodes(6, func(i int, n *structs.Node) {
		if racks[i] != "" {
			n.Meta = map[string]string{"rack": racks[i]}
		}
	})
	rackOf := map[string]string{}
	for i, n := range ns {
		rackOf[n.ID] = racks[i]
	}
	byRack := func(allocs []*structs.Allocation) map[string]int {
		m := map[string]int{}
		for _, a := range allocs {
			m[rackOf[a.NodeID]]++
		}
		return m
	}
	for _, c := range []struct {
		name       string
		count      int
		level      string // "job", "group" or "task"
		limit      string
		wantPlaced int
		wantMax    int
	}{
		{"one per rack, group", 5, "group", "", 3, 1},
		{"two per rack, job", 7, "job", "2", 6, 2},
		{"one per rack, task", 2, "task", "1", 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, plan := placeJob(c.count, func(j *structs.Job) {
				con := []*structs.Constraint{{Operand: "distinct_property", LTarget: "${meta.rack}", RTarget: c.limit}}
				switch c.level {
				case "job":
					j.Constraints = con
				case "group":
					j.TaskGroups[0].Constraints = con
				default:
					j.TaskGroups[0].Tasks[0].Constraints = con
				}
			})
			res := NewPlacer(ns, nil, 7).Place(j, plan, baseTime)
			if len(res.Allocs) != c.wantPlaced {
				t.Fatalf("placed %d, want %d", len(res.Allocs), c.wantPlaced)
			}
			for rack, n := range byRack(res.Allocs) {
				if rack == "" || n > c.wantMax {
					t.Fatalf("rack %q has %d allocs: %v", rack, n, byRack(res.Allocs))
				}
			}
			if c.wantPlaced < c.count {
				m := res.Failed["web"]
				if m == nil || m.ConstraintFiltered["distinct_property ${meta.rack}"] == 0 || m.ConstraintFiltered["missing property ${meta.rack}"] == 0 {
					t.Fatalf("metric %+v", m)
				}
			}
		})
	}

	// Live allocs count: a rack holding one is full.
	j, plan := placeJob(1, func(j *structs.Job) {
		j.TaskGroups[0].Constraints = []*structs.Constraint{{Operand: "distinct_property", LTarget: "${meta.rack}"}}
	})
	var live []*structs.Allocation
	for _, n := range ns[:1] { // rack r1
		live = append(live, &structs.Allocation{ID: "live-" + n.ID, NodeID: n.ID, JobID: j.ID, Namespace: j.Namespace,
			TaskGroup: "web", Job: j, DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
			AllocatedResources: &structs.AllocatedResources{}})
	}
	res := NewPlacer(ns, live, 7).Place(j, plan, baseTime)
	if len(res.Allocs) != 1 || rackOf[res.Allocs[0].NodeID] == "r1" || rackOf[res.Allocs[0].NodeID] == "" {
		t.Fatalf("placed on %v", byRack(res.Allocs))
	}
}
