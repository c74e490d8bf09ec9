package scheduler

import "github.com/droverhq/drover/structs"

// ReasonMissingHostVolumes is the AllocationMetric.ConstraintFiltered key
// of nodes without a host volume the group asks for, as Nomad's.
const ReasonMissingHostVolumes = "missing compatible host volumes"

// hostVolumesOK reports whether the node offers every host volume the
// group asks for, for the allocation of the given index (a per_alloc
// volume's source ends in "[index]"): a volume the node offers read-only
// serves only a read-only request, as Nomad's host volume checker.
func hostVolumesOK(tg *structs.TaskGroup, index int, n *structs.Node) bool {
	for _, v := range tg.Volumes {
		if v == nil || v.Type != structs.VolumeTypeHost {
			continue
		}
		hv := n.HostVolumes[v.SourceFor(index)]
		if hv == nil || hv.ReadOnly && !v.ReadOnly {
			return false
		}
	}
	return true
}

// hasPerAllocVolume reports whether the group's feasibility on a node
// depends on the allocation's index.
func hasPerAllocVolume(tg *structs.TaskGroup) bool {
	for _, v := range tg.Volumes {
		if v != nil && v.PerAlloc {
			return true
		}
	}
	return false
}
