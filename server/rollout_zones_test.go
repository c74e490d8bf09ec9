package server

import (
	"slices"
	"testing"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// A zone-by-zone rollout on the leader: the scheduler writes the zones at
// the deployment's start, the store keeps their figures, the watcher moves
// them on (zone b only once a is done), and the deployment succeeds with
// every zone done. No replacement of zone b is placed before zone a is
// done.
func TestZonesOnTheLeader(t *testing.T) {
	h := newHarness(t)
	h.start()
	// Two nodes per zone, each with room for one alloc more than it
	// holds.
	for _, n := range []struct{ name, zone string }{{"a1", "a"}, {"a2", "a"}, {"b1", "b"}, {"b2", "b"}} {
		node := testNode(n.name, 250, 4096)
		node.Meta = map[string]string{"zone": n.zone}
		_, _, err := h.leader.RegisterNode(h.ctx, node)
		must(t, err)
	}
	v0 := testJob("web", 4, 100)
	_, err := h.leader.RegisterJob(h.ctx, v0)
	must(t, err)
	h.waitFor("four v0 allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 4 })
	h.markHealthy(allocsOf(h.store().Snapshot(), "web"))
	h.waitFor("v0 stable", func(s *state.Snapshot) bool {
		j, _ := s.JobByIDAndVersion(structs.DefaultNamespace, "web", 0)
		return j != nil && j.Stable
	})
	zoneOfNode := func(s *state.Snapshot, id string) string {
		n, _ := s.NodeByID(id)
		return structs.ZoneOf(n, "${meta.zone}")
	}
	sizes := map[string]int{}
	for _, a := range allocsOf(h.store().Snapshot(), "web") {
		sizes[zoneOfNode(h.store().Snapshot(), a.NodeID)]++
	}

	v1 := v0.Copy()
	v1.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "2h"}
	v1.TaskGroups[0].Update.Zones = &structs.ZoneStrategy{Attribute: "${meta.zone}", Mode: structs.ZoneModeByZone}
	_, err = h.leader.RegisterJob(h.ctx, v1)
	must(t, err)

	var d *structs.Deployment
	h.waitFor("v1's deployment", func(s *state.Snapshot) bool {
		d = deploymentOf(s, "web", 1)
		return d != nil
	})
	zones := d.TaskGroups["web"].Zones
	if len(zones) == 0 {
		t.Fatalf("the deployment has no zones: %+v", d.TaskGroups["web"])
	}
	var order []string
	for _, z := range zones {
		order = append(order, z.Name)
		if z.Size != sizes[z.Name] {
			t.Fatalf("zone %s of size %d, want %d (v0 allocs %v)", z.Name, z.Size, sizes[z.Name], sizes)
		}
	}
	first := order[0]

	// Healthy as they come, until the deployment ends; the first zone's
	// replacements all come before any of the other's.
	var placed []string // zones of the v1 allocs, in placement order
	seen := map[string]bool{}
	for range 20 {
		var s *state.Snapshot
		h.waitFor("a new v1 alloc or the deployment's end", func(snap *state.Snapshot) bool {
			s = snap
			if !deploymentOf(snap, "web", 1).Active() {
				return true
			}
			for _, a := range byVersion(allocsOf(snap, "web"), 1) {
				if a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil {
					return true
				}
			}
			return false
		})
		if d = deploymentOf(s, "web", 1); !d.Active() {
			break
		}
		news := byVersion(allocsOf(s, "web"), 1)
		slices.SortFunc(news, func(a, b *structs.Allocation) int { return int(a.CreateIndex) - int(b.CreateIndex) })
		for _, a := range news {
			if !seen[a.ID] {
				seen[a.ID] = true
				if a.Zone != zoneOfNode(s, a.NodeID) {
					t.Fatalf("alloc %s stamped zone %q on a node of zone %q", a.ID, a.Zone, zoneOfNode(s, a.NodeID))
				}
				placed = append(placed, a.Zone)
				if a.Zone != first {
					for _, z := range d.TaskGroups["web"].Zones {
						if z.Name == first && z.State != structs.ZoneStateDone {
							t.Fatalf("a replacement in zone %s while zone %s is %s", a.Zone, first, z.State)
						}
					}
				}
			}
		}
		markNewHealthy(h)
	}
	if d.Status != structs.DeploymentStatusSuccessful {
		var zs []structs.ZoneState
		for _, z := range d.TaskGroups["web"].Zones {
			zs = append(zs, *z)
		}
		t.Fatalf("deployment %s %q; group %+v zones %+v; placed %v\n%s", d.Status, d.StatusDescription, *d.TaskGroups["web"], zs, placed, h.dump())
	}
	for _, z := range d.TaskGroups["web"].Zones {
		if z.State != structs.ZoneStateDone || z.Healthy != z.Size || z.InFlight != 0 || z.DoneAt.IsZero() {
			t.Fatalf("zone at the end %+v", *z)
		}
	}
	if len(placed) != 4 {
		t.Fatalf("v1 allocs placed in zones %v", placed)
	}
	t.Logf("zones %v, placements by zone %v", order, placed)
}
