package server

import (
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// nodeUsage is one node's reservations as the applier checks them.
type nodeUsage struct {
	usable  bool
	free    structs.ComparableResources
	ports   map[int]bool
	counted map[string]*structs.Allocation
}

func (u *nodeUsage) add(a *structs.Allocation, sign int64) {
	c := a.AllocatedResources.Comparable()
	u.free.CPU -= sign * c.CPU
	u.free.MemoryMB -= sign * c.MemoryMB
	u.free.DiskMB -= sign * c.DiskMB
	for _, p := range allocPorts(a) {
		u.ports[p] = sign > 0
	}
	if sign > 0 {
		u.counted[a.ID] = a
	} else {
		delete(u.counted, a.ID)
	}
}

func allocPorts(a *structs.Allocation) []int {
	if a.AllocatedResources == nil {
		return nil
	}
	out := make([]int, 0, len(a.AllocatedResources.Shared.Ports))
	for _, p := range a.AllocatedResources.Shared.Ports {
		out = append(out, p.Value)
	}
	return out
}

// checkPlan re-checks every placement against snap: the node exists and
// is ready and eligible, and the alloc fits in what is left of it given
// the node's live allocs, minus those this plan stops, plus those it has
// already accepted, with its ports free. prev, when set, is a plan still
// committing: its placements count as live and its stops as done. It
// returns the accepted placements, every stop to apply (the plan's own
// plus those replaced by accepted placements) and the IDs of rejected
// placements.
func checkPlan(snap *state.Snapshot, p *planSubmission, prev *inflight) ([]*structs.Allocation, []*structs.AllocStopUpdate, []string, error) {
	stopping := make(map[string]bool, len(p.stops))
	for _, s := range p.stops {
		stopping[s.AllocID] = true
	}
	nodes := map[string]*nodeUsage{}
	load := func(id string) (*nodeUsage, error) {
		if u := nodes[id]; u != nil {
			return u, nil
		}
		u := &nodeUsage{ports: map[int]bool{}, counted: map[string]*structs.Allocation{}}
		nodes[id] = u
		n, err := snap.NodeByID(id)
		if err != nil {
			return nil, err
		}
		if n == nil || !n.Ready() {
			return u, nil
		}
		u.usable = true
		u.free = n.Capacity()
		allocs, err := snap.LiveAllocsByNode(id)
		if err != nil {
			return nil, err
		}
		for _, a := range allocs {
			if a.TerminalStatus() || stopping[a.ID] || prev != nil && prev.stopped[a.ID] {
				continue
			}
			u.add(a, 1)
		}
		if prev != nil {
			for _, a := range prev.byNode[id] {
				if u.counted[a.ID] == nil && !stopping[a.ID] {
					u.add(a, 1)
				}
			}
		}
		return u, nil
	}
	stops := append([]*structs.AllocStopUpdate(nil), p.stops...)
	var accepted []*structs.Allocation
	var rejected []string
	for _, a := range p.placed {
		u, err := load(a.NodeID)
		if err != nil {
			return nil, nil, nil, err
		}
		if !u.usable {
			rejected = append(rejected, a.ID)
			continue
		}
		rep := p.replaces[a.ID]
		var freed *structs.Allocation
		if rep != nil {
			if old := u.counted[rep.AllocID]; old != nil {
				freed = old
				u.add(old, -1)
			}
		}
		if fits(u, a) {
			u.add(a, 1)
			accepted = append(accepted, a)
			if rep != nil {
				stops = append(stops, rep)
			}
			continue
		}
		if freed != nil {
			u.add(freed, 1)
		}
		rejected = append(rejected, a.ID)
	}
	return accepted, stops, rejected, nil
}

func fits(u *nodeUsage, a *structs.Allocation) bool {
	if ok, _ := a.AllocatedResources.Comparable().Fits(u.free); !ok {
		return false
	}
	for _, p := range allocPorts(a) {
		if u.ports[p] {
			return false
		}
	}
	return true
}
