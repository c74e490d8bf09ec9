package scheduler

import (
	"fmt"
	"maps"

	"github.com/droverhq/drover/structs"
)

// A node's usage, kept between passes.
//
// A lazy placer reads the allocs of each node a placement looks at (about
// ten per placement) and counts them in: in a 10,000-alloc rollout that
// was the largest part of a pass, most of those nodes unchanged since the
// last pass looked at them. A NodeTable keeps, for each node a placer
// loaded through a versioned loader, the node's live allocs and what they
// sum to, with the version the loader gave. A placer that finds the same
// version takes the sums instead of reading and counting the allocs; it
// still walks the cached list to set aside the allocs of its own job
// that its plan releases or moves, exactly as loadNode does.

// VersionedNodeAllocs reads one node's live allocs in two steps: version,
// returned at once, names the list read would return. Two calls that
// return equal non-nil versions must list the same allocs (the same
// pointers, in the same order); nil means the list cannot be named and is
// read every time. The allocs are listed in increasing ID order, and an
// alloc's ModifyIndex changes with every write of it, as a store's are
// (state.Snapshot.LiveAllocsByNodeVersion gives the version: the tree node
// they are kept under).
type VersionedNodeAllocs func(nodeID string) (version any, read func() ([]*structs.Allocation, error), err error)

// nodeUsage is what a node's live allocs sum to, read-only once made and
// shared by the placers that load the node at its version.
type nodeUsage struct {
	version any
	// kept says of each alloc listed (in the list's order) whether it
	// counts (not terminal, on the node) and what it counts for, by its
	// ID and ModifyIndex: a placer that takes the usage finds its own
	// job's allocs without looking at the allocs themselves (each a cache
	// miss), and the usage keeps no alloc alive once the store replaced
	// it (a table lives as long as the nodes do not change).
	kept []keptAlloc
	// ordered: the list was in strictly increasing ID order (recount).
	ordered bool
	used    structs.ComparableResources
	ports   portSet
	jobs    map[jobGroup]int
}

// usageOf returns node id's usage at the loader's version: the table's
// when it holds that version, else counted from the loader's list (and
// kept, when the version is not nil). A node kept at an older version is
// counted again from its kept sums: only the allocs whose ModifyIndex
// changed are counted out and in (a store writes an alloc with a new one
// each time, and never modifies one it holds).
func (t *NodeTable) usageOf(id string, load VersionedNodeAllocs) (*nodeUsage, error) {
	version, read, err := load(id)
	if err != nil {
		return nil, err
	}
	var kept *nodeUsage
	if version != nil {
		t.mu.Lock()
		kept = t.usage[id]
		t.mu.Unlock()
		if kept != nil && kept.version == version {
			return kept, nil
		}
	}
	listed, err := read()
	if err != nil {
		return nil, err
	}
	u := kept.recount(id, listed)
	if u == nil {
		u = countUsage(id, listed)
	}
	u.version = version
	if version != nil {
		t.mu.Lock()
		if t.usage == nil {
			t.usage = make(map[string]*nodeUsage, len(t.base))
		}
		t.usage[id] = u
		t.mu.Unlock()
	}
	return u, nil
}

// keptAlloc is what a kept usage remembers of a listed alloc: whether it
// counts and, when it does, what for (nodeState.add's figures).
type keptAlloc struct {
	counted bool
	id      string
	modify  uint64
	job     nsJob
	group   string
	res     structs.ComparableResources
	ports   []int
}

// keep returns what node id's kept usage remembers of a.
func keep(id string, a *structs.Allocation) keptAlloc {
	k := keptAlloc{counted: counts(id, a), id: a.ID, modify: a.ModifyIndex, job: nsJob{a.Namespace, a.JobID}, group: a.TaskGroup}
	if k.counted {
		k.res = a.AllocatedResources.Comparable()
		if a.AllocatedResources != nil {
			for _, p := range a.AllocatedResources.Shared.Ports {
				k.ports = append(k.ports, p.Value)
			}
		}
	}
	return k
}

// same reports whether a is the alloc k was kept from (the same write of
// it).
func (k *keptAlloc) same(a *structs.Allocation) bool {
	return k.id == a.ID && k.modify == a.ModifyIndex
}

// counts reports whether a node's usage counts a listed alloc.
func counts(id string, a *structs.Allocation) bool {
	return a != nil && !a.TerminalStatus() && a.NodeID == id
}

// countUsage counts node id's usage from its listed allocs.
func countUsage(id string, listed []*structs.Allocation) *nodeUsage {
	u := &nodeUsage{kept: make([]keptAlloc, 0, len(listed)), ordered: byIDOrder(listed)}
	var sum nodeState
	for _, a := range listed {
		if a == nil {
			continue
		}
		u.kept = append(u.kept, keep(id, a))
		if u.kept[len(u.kept)-1].counted {
			sum.add(a, 1)
		}
	}
	u.used, u.ports, u.jobs = sum.used, sum.ports, sum.jobs
	return u
}

// recount returns the usage of listed from u's (nil u: nil), counting out
// and in only the allocs written since (another ModifyIndex); nil when
// either list is not in strictly increasing ID order (the merge needs it;
// the store's node index gives it).
func (u *nodeUsage) recount(id string, listed []*structs.Allocation) *nodeUsage {
	if u == nil || !u.ordered {
		return nil
	}
	sum := nodeState{used: u.used, ports: u.ports, jobs: u.jobs, shared: true}
	out := &nodeUsage{kept: make([]keptAlloc, len(listed)), ordered: true}
	old := u.kept
	i := 0
	for k, a := range listed {
		if a == nil || k > 0 && listed[k-1].ID >= a.ID {
			return nil
		}
		for i < len(old) && old[i].id < a.ID {
			// Gone.
			if old[i].counted {
				sum.addKept(&old[i], -1)
			}
			i++
		}
		if i < len(old) && old[i].same(a) {
			// Unchanged.
			out.kept[k] = old[i]
			i++
			continue
		}
		if i < len(old) && old[i].id == a.ID {
			// Changed.
			if old[i].counted {
				sum.addKept(&old[i], -1)
			}
			i++
		}
		if out.kept[k] = keep(id, a); out.kept[k].counted {
			sum.add(a, 1)
		}
	}
	for ; i < len(old); i++ {
		if old[i].counted {
			sum.addKept(&old[i], -1)
		}
	}
	if sum.shared {
		// Nothing counted changed: the kept maps are shared as they are.
		sum.ports, sum.jobs = u.ports, u.jobs
	} else {
		// Groups no longer on the node are dropped, so that the counts of
		// a long-lived table do not keep every group that ever ran.
		maps.DeleteFunc(sum.jobs, func(_ jobGroup, n int) bool { return n == 0 })
	}
	out.used, out.ports, out.jobs = sum.used, sum.ports, sum.jobs
	return out
}

// byIDOrder reports whether allocs are in strictly increasing ID order,
// none nil.
func byIDOrder(allocs []*structs.Allocation) bool {
	for i, a := range allocs {
		if a == nil || i > 0 && allocs[i-1].ID >= a.ID {
			return false
		}
	}
	return true
}

// loadNodeVersioned is loadNode through the table's kept usage: the
// node's sums are taken whole, then each alloc of a known job that the
// placer holds an entry for is taken out and, when the entry has it live
// on this node, its entry counted in its place. The result is loadNode's.
func (p *Placer) loadNodeVersioned(ns *nodeState) {
	u, err := p.table.usageOf(ns.node.ID, p.loadVersioned)
	if err != nil {
		ns.loadErr = fmt.Errorf("%w: node %s: %w", ErrNodeAllocs, ns.node.ID, err)
		return
	}
	ns.used.CPU += u.used.CPU
	ns.used.MemoryMB += u.used.MemoryMB
	ns.used.DiskMB += u.used.DiskMB
	if ns.ports == nil && ns.jobs == nil {
		// Shared until the placer first changes them (nodeState.add).
		ns.ports, ns.jobs, ns.shared = u.ports, u.jobs, true
	} else {
		ns.ownMaps()
		for port, n := range u.ports {
			if ns.ports == nil {
				ns.ports = portSet{}
			}
			ns.ports[port] += n
		}
		for k, n := range u.jobs {
			if ns.jobs == nil {
				ns.jobs = map[jobGroup]int{}
			}
			ns.jobs[k] += n
		}
	}
	if len(p.allocs) == 0 {
		return
	}
	i := p.byID[ns.node.ID]
	for k := range u.kept {
		ka := &u.kept[k]
		if !ka.counted || !p.knownJob(ka.job) {
			continue
		}
		r, ok := p.allocs[ka.id]
		if !ok {
			continue
		}
		ns.addKept(ka, -1)
		if r.node == i {
			ns.add(r.alloc, 1)
		}
	}
}

// ownMaps gives the state its own copies of maps it shares with a
// table's kept usage.
func (ns *nodeState) ownMaps() {
	if ns.shared {
		ns.ports, ns.jobs, ns.shared = maps.Clone(ns.ports), maps.Clone(ns.jobs), false
	}
}

// NewPlacerLazyTableVersioned is NewPlacerLazyTable with a versioned
// loader: a node's usage is taken from the table when the node's allocs
// are at the version the table last counted. Every choice and metric is
// NewPlacerLazyTable's.
func NewPlacerLazyTableVersioned(t *NodeTable, namespace, jobID string, jobAllocs []*structs.Allocation, nodeAllocs VersionedNodeAllocs, seed uint64) *Placer {
	load := func(id string) ([]*structs.Allocation, error) {
		_, read, err := nodeAllocs(id)
		if err != nil {
			return nil, err
		}
		return read()
	}
	p := NewPlacerLazyTable(t, namespace, jobID, jobAllocs, load, seed)
	p.loadVersioned = nodeAllocs
	return p
}

// KeptUsage is what a node's live allocs sum to, as a NodeTable keeps it:
// read-only, for a caller that checks placements against the same counts
// (the leader's plan applier).
type KeptUsage struct{ u *nodeUsage }

// Usage returns node id's kept usage at the loader's version, counted (and
// kept, when the version is not nil) if the table holds another.
func (t *NodeTable) Usage(id string, load VersionedNodeAllocs) (KeptUsage, error) {
	u, err := t.usageOf(id, load)
	return KeptUsage{u}, err
}

// Used is the sum of the counted allocs' resources.
func (k KeptUsage) Used() structs.ComparableResources { return k.u.used }

// EachPort calls fn with each host port the counted allocs hold and how
// many of them hold it.
func (k KeptUsage) EachPort(fn func(port, holders int)) {
	for p, n := range k.u.ports {
		if n > 0 {
			fn(p, n)
		}
	}
}

// EachCounted calls fn with each counted alloc's ID (not terminal, on the
// node), its resources and its host ports (not to be modified), in ID
// order.
func (k KeptUsage) EachCounted(fn func(id string, res structs.ComparableResources, ports []int)) {
	for _, ka := range k.u.kept {
		if ka.counted {
			fn(ka.id, ka.res, ka.ports)
		}
	}
}
