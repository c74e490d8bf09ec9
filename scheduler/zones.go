package scheduler

import (
	"slices"

	"github.com/droverhq/drover/structs"
)

// Zones (website/rollouts.md, "Zones"): a group whose update block has
// zones rolls zone by zone (or every zone at once, each within its own
// width); no batch mixes zones, each zone's width is cut by its disruption
// budget less the failures it has had, and a replacement lands in the
// zone of the alloc it replaces. The zones' order, sizes and states are
// decided when the group's deployment state is created (here) and moved on
// by the deployment watcher; this pass only rolls the zones it finds
// "rolling".

// zonePass is one group's zones in a pass.
type zonePass struct {
	z *structs.ZoneStrategy
	// states are the group's zones in rollout order, from its deployment
	// state, or new ones for a deployment this pass creates.
	states []*structs.ZoneState
	// fresh is set when states were made by this pass.
	fresh bool
	// of caches the zone of each alloc.
	of map[*structs.Allocation]string
}

// zonesFor returns the group's zone pass, nil when the group has no zones
// or does not roll.
func (r *reconciler) zonesFor(g *groupPass, state *structs.DeploymentState, destructive []*holder) *zonePass {
	u := g.tg.Update
	if u == nil || u.Zones == nil || !u.Rolling() {
		return nil
	}
	zp := &zonePass{z: u.Zones, of: map[*structs.Allocation]string{}}
	if state != nil && len(state.Zones) > 0 {
		zp.states = state.Zones
		return zp
	}
	if len(destructive) == 0 {
		// A first version (or nothing to replace): no zone order applies.
		return zp
	}
	sizes := map[string]int{}
	for _, h := range g.holders {
		if h.live {
			sizes[zp.zone(r, h.alloc)]++
		}
	}
	order := zoneOrder(u.Zones, sizes)
	zp.fresh = true
	for i, name := range order {
		st := structs.ZoneStateWaiting
		if i == 0 || !u.Zones.ByZone() {
			st = structs.ZoneStateRolling
		}
		zp.states = append(zp.states, &structs.ZoneState{Name: name, Size: sizes[name], State: st})
	}
	return zp
}

// zone returns an alloc's zone: the one stamped at placement, else its
// node's.
func (zp *zonePass) zone(r *reconciler, a *structs.Allocation) string {
	if z, ok := zp.of[a]; ok {
		return z
	}
	z := a.Zone
	if z == "" {
		z = structs.ZoneOf(r.nodes[a.NodeID], zp.z.Attribute)
	}
	zp.of[a] = z
	return z
}

// zoneOrder orders the zones with allocs: those an explicit order names
// first, in its order; then the others fewest allocs first, ties by name
// (Google's order); the zone "" (nodes without the attribute) last.
func zoneOrder(z *structs.ZoneStrategy, sizes map[string]int) []string {
	var out []string
	named := map[string]bool{}
	for _, n := range z.Order {
		if _, ok := sizes[n]; ok && !named[n] && n != "" {
			named[n] = true
			out = append(out, n)
		}
	}
	var rest []string
	for n := range sizes {
		if !named[n] && n != "" {
			rest = append(rest, n)
		}
	}
	slices.SortFunc(rest, func(a, b string) int {
		if sizes[a] != sizes[b] {
			return sizes[a] - sizes[b]
		}
		if a < b {
			return -1
		}
		return 1
	})
	out = append(out, rest...)
	if _, ok := sizes[""]; ok {
		out = append(out, "")
	}
	return out
}

// pick chooses this pass's replacements among the group's old allocs
// (destructive, failed ones first), within limit (the group's budget) and
// each rolling zone's width: min(max_parallel, budget − failures) less the
// zone's allocs in flight. In zone_by_zone mode the rolling zones share
// limit, earlier zones first; in concurrent mode each zone has its own
// width, and limit counts once per rolling zone. Zones not in the list
// (their allocs appeared after the deployment started) roll last, once
// every listed zone is done.
func (zp *zonePass) pick(r *reconciler, g *groupPass, destructive []*holder, limit int, in BudgetInput) []*holder {
	if len(zp.states) == 0 {
		return destructive[:min(limit, len(destructive))]
	}
	mp := in.MaxParallel
	byZone := map[string][]*holder{}
	for _, h := range destructive {
		z := zp.zone(r, h.alloc)
		byZone[z] = append(byZone[z], h)
	}
	inflight := map[string]int{}
	dep := r.deploymentID()
	for _, h := range g.holders {
		a := h.alloc
		if h.place != nil && h.place.PreviousAlloc != "" {
			// A replacement this pass places (a reschedule, a lost or
			// moving alloc's) is in flight in its zone from now on.
			inflight[zp.zone(r, a)]++
			continue
		}
		if !h.live || h.down || dep == "" || a.DeploymentID != dep || a.IsHealthy() {
			continue
		}
		if a.IsUnhealthy() && !in.ToleratesFailures {
			continue
		}
		inflight[zp.zone(r, a)]++
	}
	listed := map[string]bool{}
	allDone := true
	rolling := 0
	for _, s := range zp.states {
		listed[s.Name] = true
		if s.State != structs.ZoneStateDone {
			allDone = false
		}
		if s.State == structs.ZoneStateRolling {
			rolling++
		}
	}
	if !zp.z.ByZone() {
		limit *= max(1, rolling)
	}
	var out []*holder
	take := func(name string, failed, size int) {
		width := mp
		if b, ok := zp.z.BudgetFor(size); ok {
			width = min(width, b-failed)
		}
		n := min(len(byZone[name]), width-inflight[name], limit)
		if n <= 0 {
			return
		}
		out = append(out, byZone[name][:n]...)
		limit -= n
	}
	for _, s := range zp.states {
		if s.State == structs.ZoneStateRolling {
			take(s.Name, s.Failed, s.Size)
		}
	}
	if allDone {
		var extra []string
		for name := range byZone {
			if !listed[name] {
				extra = append(extra, name)
			}
		}
		slices.Sort(extra)
		for _, name := range extra {
			take(name, 0, len(byZone[name]))
		}
	}
	return out
}

// zonePlacements pins each replacement of a zoned group to the zone of the
// alloc it continues (C.4): a replacement waits rather than leave it.
func (zp *zonePass) zonePlacements(r *reconciler, g *groupPass, places []*Placement, allocs []*structs.Allocation) {
	if zp == nil {
		return
	}
	var byID map[string]*structs.Allocation
	for _, p := range places {
		if p.PreviousAlloc == "" || p.Migrate {
			continue
		}
		if byID == nil {
			byID = make(map[string]*structs.Allocation, len(allocs))
			for _, a := range allocs {
				byID[a.ID] = a
			}
		}
		if a := byID[p.PreviousAlloc]; a != nil {
			p.Zone, p.InZone = zp.zone(r, a), true
		}
	}
}
