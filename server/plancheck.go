package server

import (
	"github.com/droverhq/drover/scheduler"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// nodeUsage is one node's reservations as the applier checks them.
type nodeUsage struct {
	usable bool
	free   structs.ComparableResources
	ports  map[int]bool
	// counted holds what each counted alloc reserves, by ID.
	counted map[string]reservation
}

// reservation is what an alloc reserves on its node.
type reservation struct {
	res   structs.ComparableResources
	ports []int
}

func reservationOf(a *structs.Allocation) reservation {
	return reservation{res: a.AllocatedResources.Comparable(), ports: allocPorts(a)}
}

func (u *nodeUsage) add(a *structs.Allocation, sign int64) {
	u.addReservation(a.ID, reservationOf(a), sign)
}

func (u *nodeUsage) addReservation(id string, r reservation, sign int64) {
	u.free.CPU -= sign * r.res.CPU
	u.free.MemoryMB -= sign * r.res.MemoryMB
	u.free.DiskMB -= sign * r.res.DiskMB
	for _, p := range r.ports {
		u.ports[p] = sign > 0
	}
	if sign > 0 {
		u.counted[id] = r
	} else {
		delete(u.counted, id)
	}
}

// addKept counts in node id's live allocs, not terminal, less those
// left out (this plan's stops, the committing plan's), from the table's
// kept usage at snap's version of them: what the loop over
// LiveAllocsByNode counts, without reading or counting each alloc again
// when the node's allocs did not change since the table counted them.
func (u *nodeUsage) addKept(table *scheduler.NodeTable, snap *state.Snapshot, id string, leftOut func(allocID string) bool) error {
	k, err := table.Usage(id, snap.LiveAllocsByNodeVersion)
	if err != nil {
		return err
	}
	used := k.Used()
	u.free.CPU -= used.CPU
	u.free.MemoryMB -= used.MemoryMB
	u.free.DiskMB -= used.DiskMB
	var outPorts map[int]int
	k.EachCounted(func(aid string, res structs.ComparableResources, ports []int) {
		if !leftOut(aid) {
			u.counted[aid] = reservation{res: res, ports: ports}
			return
		}
		u.free.CPU += res.CPU
		u.free.MemoryMB += res.MemoryMB
		u.free.DiskMB += res.DiskMB
		for _, p := range ports {
			if outPorts == nil {
				outPorts = map[int]int{}
			}
			outPorts[p]++
		}
	})
	// A port is taken when an alloc counted in holds it.
	k.EachPort(func(p, holders int) {
		if holders > outPorts[p] {
			u.ports[p] = true
		}
	})
	return nil
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
//
// table, when not nil, is a scheduler's NodeTable whose kept node usage
// (named by the version of each node's allocs in snap) stands for reading
// and counting a node's allocs: the plan's stops are taken out of its
// sums. The result is the same.
func checkPlan(snap *state.Snapshot, p *planSubmission, prev *inflight, table *scheduler.NodeTable) ([]*structs.Allocation, []*structs.AllocStopUpdate, []string, error) {
	stopping := make(map[string]bool, len(p.stops))
	for _, s := range p.stops {
		stopping[s.AllocID] = true
	}
	nodes := map[string]*nodeUsage{}
	load := func(id string) (*nodeUsage, error) {
		if u := nodes[id]; u != nil {
			return u, nil
		}
		u := &nodeUsage{ports: map[int]bool{}, counted: map[string]reservation{}}
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
		if table != nil {
			if err := u.addKept(table, snap, id, func(aid string) bool { return stopping[aid] || prev != nil && prev.stopped[aid] }); err != nil {
				return nil, err
			}
		} else {
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
		}
		if prev != nil {
			for _, a := range prev.byNode[id] {
				if _, ok := u.counted[a.ID]; !ok && !stopping[a.ID] {
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
		var freed *reservation
		if rep != nil {
			if old, ok := u.counted[rep.AllocID]; ok {
				freed = &old
				u.addReservation(rep.AllocID, old, -1)
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
			u.addReservation(rep.AllocID, *freed, 1)
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
