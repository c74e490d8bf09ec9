package scheduler

import "github.com/droverhq/drover/structs"

// sticky returns the node a replacement goes back to when its group's
// ephemeral disk is sticky or migrates, as Nomad's preferred node: the node
// of the alloc it continues, when that node is ready, in the job's pool (and
// zone) and fits; -1 otherwise, with m untouched (m is a placement's
// fresh metric), and the placement searches
// as any other. A surge replacement runs beside the alloc it replaces, whose
// data it cannot take over: it searches.
func (p *Placer) sticky(job *structs.Job, g *groupCtx, pl Placement, m *structs.AllocationMetric) int {
	if pl.PreviousNode == "" || pl.Surge || !stickyDisk(g.tg) {
		return -1
	}
	if _, ok := p.byID[pl.PreviousNode]; !ok {
		return -1
	}
	try := structs.AllocationMetric{NodesInPool: m.NodesInPool}
	pl.NodeID = pl.PreviousNode
	i := p.pinned(job, g, pl, &try)
	if i >= 0 {
		*m = try
	}
	return i
}

// stickyDisk reports whether the group's ephemeral disk follows its
// allocations from one version to the next (sticky, or migrate, which
// implies it).
func stickyDisk(tg *structs.TaskGroup) bool {
	d := tg.EphemeralDisk
	return d != nil && (d.Sticky || d.Migrate)
}
