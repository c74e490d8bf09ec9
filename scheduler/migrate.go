package scheduler

import "github.com/droverhq/drover/structs"

// Migrations (website/jobspec/migrate.md, website/commands/node-drain.md):
// the leader's drainer marks the allocs of a draining node
// DesiredTransition.Migrate, a few at a time per group (migrate.max_parallel,
// across every draining node). Here a marked alloc on a draining node moves
// create before destroy, as a surge replacement does: its replacement is
// placed elsewhere first and the old alloc keeps serving until the
// replacement is healthy, then stops. Once the node's drain deadline has
// passed (at once for a forced drain) a marked alloc stops in the plan that
// places its replacement, and one whose replacement already runs stops at
// once. A marked alloc on a node that is not draining (Nomad's alloc stop,
// or a drain cancelled meanwhile) stops and is replaced in one plan, as in
// Nomad. Replacements are not pinned to their zone: a drain moves allocs
// out.

// moving is a marked alloc that keeps serving beside its replacement.
type moving struct {
	alloc *structs.Allocation
	// next continues alloc at its index (an alloc of an earlier pass);
	// nil when this pass places the replacement.
	next *structs.Allocation
}

// successorKey names an index of a group, canaries apart: a canary shares
// the index of the alloc it will replace without continuing it.
type successorKey struct {
	index  int
	canary bool
}

// migrationSuccessors maps each index of the group to an alloc that holds
// it and is not itself moving: the replacement of a marked alloc at that
// index, once placed. Failed allocs count (their reschedule continues
// them); nil when no alloc of the group is marked.
func (r *reconciler) migrationSuccessors(allocs []*structs.Allocation) map[successorKey]*structs.Allocation {
	marked := false
	for _, a := range allocs {
		if a.DesiredTransition.ShouldMigrate() {
			marked = true
			break
		}
	}
	if !marked {
		return nil
	}
	out := map[successorKey]*structs.Allocation{}
	for _, a := range allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun || a.DesiredTransition.ShouldMigrate() {
			continue
		}
		if a.ClientTerminalStatus() && a.ClientStatus != structs.AllocClientStatusFailed {
			continue
		}
		idx := a.Index()
		if idx < 0 {
			continue
		}
		k := successorKey{idx, r.isCurrentCanary(a)}
		if cur := out[k]; cur == nil || cur.ClientTerminalStatus() {
			out[k] = a
		}
	}
	return out
}

// isCurrentCanary reports whether a is a canary of the current deployment.
func (r *reconciler) isCurrentCanary(a *structs.Allocation) bool {
	return a.IsCanary() && a.DeploymentID != "" && a.DeploymentID == r.deploymentID()
}

// stopsAtOnce reports whether a marked alloc stops without waiting for
// its replacement's health: its node is gone, not draining, or past its
// drain deadline (a forced drain is at once).
func (r *reconciler) stopsAtOnce(a *structs.Allocation) bool {
	n := r.nodes[a.NodeID]
	return n == nil || n.DrainStrategy == nil || n.DrainStrategy.Deadlined(r.in.Now)
}

// migrate classifies a live alloc marked for migration at index idx; add
// holds an index for the group.
func (r *reconciler) migrate(g *groupPass, a *structs.Allocation, idx int, canary bool, add func(holder)) {
	next := g.successors[successorKey{idx, canary}]
	deadlined := r.stopsAtOnce(a)
	p := &Placement{Index: idx, Canary: canary, PreviousAlloc: a.ID, PreviousNode: a.NodeID, Migrate: true}
	switch {
	case next != nil && deadlined:
		r.stop(a, structs.AllocMigrating, "")
	case next != nil:
		g.moving = append(g.moving, moving{alloc: a, next: next})
	case deadlined:
		p.Replaces, p.ReplaceDescription, p.replaced = a.ID, structs.AllocMigrating, a
		add(holder{index: idx, alloc: a, place: p, migrate: true})
	default:
		add(holder{index: idx, alloc: a, place: p, migrate: true})
		g.moving = append(g.moving, moving{alloc: a})
	}
}

// settleMoving stops each moving alloc whose replacement is healthy (and
// not itself replaced in this plan), or whose index the group no longer
// holds (scaled down); the others keep serving.
func (r *reconciler) settleMoving(g *groupPass) {
	if len(g.moving) == 0 {
		return
	}
	held := make(map[int]bool, len(g.holders)+len(g.canaries))
	for _, hs := range [][]*holder{g.holders, g.canaries} {
		for _, h := range hs {
			held[h.index] = true
		}
	}
	gone := map[string]bool{}
	for _, s := range r.plan.Stop {
		gone[s.Alloc.ID] = true
	}
	for _, p := range r.plan.Place {
		if p.Replaces != "" {
			gone[p.Replaces] = true
		}
	}
	kept := g.moving[:0]
	for _, m := range g.moving {
		switch {
		case !held[m.alloc.Index()]:
			r.stop(m.alloc, structs.AllocNotNeeded, "")
			continue
		case m.next != nil && m.next.IsHealthy() && !m.next.TerminalStatus() && !gone[m.next.ID]:
			r.stop(m.alloc, structs.AllocMigrating, "")
			continue
		}
		kept = append(kept, m)
	}
	g.moving = kept
}
