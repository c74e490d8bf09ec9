package scheduler

import (
	"github.com/droverhq/drover/structs"
)

// nodeState is one node's usage as the placer sees it: what is reserved by
// live allocs (and by placements made so far), which host ports are taken,
// and how many allocs of each job and group run there.
type nodeState struct {
	node     *structs.Node
	capacity structs.ComparableResources
	used     structs.ComparableResources
	// reserved are the node's reserved host ports, shared (read-only)
	// by every placer's copy of a NodeTable's state; ports are those the
	// counted allocs hold, made on the first.
	reserved portSet
	ports    portSet
	minPort  int
	maxPort  int
	// jobs counts live allocs per job ID and per job ID + group.
	jobs map[jobGroup]int
	// shared: ports and jobs are a table's kept usage (nodeusage.go),
	// copied before the first change.
	shared bool
	// loaded is set once the node's live allocs are counted in; until
	// then (a lazy placer, see lazy.go) the fields above hold the node's
	// reservations only.
	loaded bool
	// loadErr, when set, makes the node unusable: its allocs could not
	// be read.
	loadErr error
}

func newNodeState(n *structs.Node) *nodeState {
	ns := &nodeState{
		node: n, capacity: n.Capacity(),
		minPort: structs.DefaultMinDynamicPort, maxPort: structs.DefaultMaxDynamicPort,
	}
	if r := n.NodeResources; r != nil && r.MinDynamicPort > 0 && r.MaxDynamicPort >= r.MinDynamicPort {
		ns.minPort, ns.maxPort = r.MinDynamicPort, r.MaxDynamicPort
	}
	if r := n.ReservedResources; r != nil && r.Networks.ReservedHostPorts != "" {
		ns.reserved = portSet{}
		parsePortSpec(r.Networks.ReservedHostPorts, ns.reserved)
	}
	return ns
}

// hostIP is the node's address for port mappings, read when a placement
// maps ports (not for every node of every pass).
func (ns *nodeState) hostIP() string { return ns.node.Attributes["unique.network.ip-address"] }

// jobGroup keys a node's live alloc counts: one job's group, or with
// whole set, the whole job. A struct key costs no string building per
// counted alloc.
type jobGroup struct {
	job, group string
	whole      bool
}

func groupKey(job, group string) jobGroup { return jobGroup{job: job, group: group} }

func jobKey(job string) jobGroup { return jobGroup{job: job, whole: true} }

// add counts an alloc's reservation on the node; sign -1 removes it.
func (ns *nodeState) add(a *structs.Allocation, sign int) {
	ns.ownMaps()
	c := a.AllocatedResources.Comparable()
	ns.used.CPU += int64(sign) * c.CPU
	ns.used.MemoryMB += int64(sign) * c.MemoryMB
	ns.used.DiskMB += int64(sign) * c.DiskMB
	if a.AllocatedResources != nil {
		for _, p := range a.AllocatedResources.Shared.Ports {
			if sign > 0 {
				if ns.ports == nil {
					ns.ports = portSet{}
				}
				ns.ports.take(p.Value)
			} else if ns.ports != nil {
				ns.ports.free(p.Value)
			}
		}
	}
	if ns.jobs == nil {
		ns.jobs = map[jobGroup]int{}
	}
	ns.jobs[jobKey(a.JobID)] += sign
	ns.jobs[groupKey(a.JobID, a.TaskGroup)] += sign
}

// addKept is add for an alloc a kept usage remembers (keep).
func (ns *nodeState) addKept(k *keptAlloc, sign int) {
	ns.ownMaps()
	ns.used.CPU += int64(sign) * k.res.CPU
	ns.used.MemoryMB += int64(sign) * k.res.MemoryMB
	ns.used.DiskMB += int64(sign) * k.res.DiskMB
	for _, p := range k.ports {
		if sign > 0 {
			if ns.ports == nil {
				ns.ports = portSet{}
			}
			ns.ports.take(p)
		} else if ns.ports != nil {
			ns.ports.free(p)
		}
	}
	if ns.jobs == nil {
		ns.jobs = map[jobGroup]int{}
	}
	ns.jobs[jobKey(k.job.id)] += sign
	ns.jobs[groupKey(k.job.id, k.group)] += sign
}

// portTaken reports whether the node reserves host port p or a counted
// alloc holds it.
func (ns *nodeState) portTaken(p int) bool { return ns.reserved.has(p) || ns.ports.has(p) }

// free returns what is left on the node.
func (ns *nodeState) free() structs.ComparableResources {
	return structs.ComparableResources{
		CPU:      ns.capacity.CPU - ns.used.CPU,
		MemoryMB: ns.capacity.MemoryMB - ns.used.MemoryMB,
		DiskMB:   ns.capacity.DiskMB - ns.used.DiskMB,
	}
}
