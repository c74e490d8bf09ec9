package scheduler

import (
	"sort"

	"github.com/droverhq/drover/structs"
)

// reconcileSystem handles a system or sysbatch job: one alloc per eligible
// ready node. Their allocs are all named "job.group[0]", as Nomad's;
// rolling updates replace them in order of node name within the
// max_parallel budget, and canaries are not used.
//
// A sysbatch job runs once per node: an alloc that finished on its own
// (complete, or failed once its restart policy gave up) keeps its node
// served unless a later version changes the group destructively; it is
// neither rescheduled nor placed again. An alloc the servers stopped (job
// stop, drain, lost node, a destructive update) did not finish its run,
// so its node gets a new one when it is eligible again.
func (r *reconciler) reconcileSystem(byGroup map[string][]*structs.Allocation) {
	for _, tg := range r.job.TaskGroups {
		if tg == nil {
			continue
		}
		r.reconcileSystemGroup(tg, byGroup[tg.Name])
		delete(byGroup, tg.Name)
	}
}

func (r *reconciler) reconcileSystemGroup(tg *structs.TaskGroup, allocs []*structs.Allocation) {
	du := r.plan.desired(tg.Name)
	rolling := tg.Update.Rolling()
	served := map[string]*holder{}
	g := &groupPass{tg: tg}
	sysbatch := r.job.Type == structs.JobTypeSysBatch
	if sysbatch {
		// Nodes where the group's run is done, whatever order the allocs
		// come in: a live alloc beside a finished one is not needed.
		for _, a := range allocs {
			if a.DesiredStatus == structs.AllocDesiredStatusRun && a.ClientTerminalStatus() &&
				a.ClientStatus != structs.AllocClientStatusLost && r.updateKind(a) != UpdateDestructive && served[a.NodeID] == nil {
				served[a.NodeID] = &holder{alloc: a}
			}
		}
	}
	for _, a := range allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun || sysbatch && a.ClientTerminalStatus() {
			continue
		}
		if a.NotServing() {
			g.notServing++
		}
		node := r.nodes[a.NodeID]
		if a.ClientTerminalStatus() {
			// A finished alloc of this version keeps its node served.
			if a.ClientStatus != structs.AllocClientStatusLost && r.updateKind(a) == UpdateNone && served[a.NodeID] == nil {
				served[a.NodeID] = &holder{alloc: a}
			}
			continue
		}
		switch {
		case node == nil || node.Status == structs.NodeStatusDown:
			r.stop(a, structs.AllocLost, structs.AllocClientStatusLost)
			continue
		case a.DesiredTransition.ShouldMigrate():
			// The drainer marks a system alloc once the node's other
			// allocs are gone, or at its deadline.
			r.stop(a, structs.AllocMigrating, "")
			continue
		case served[a.NodeID] != nil && (served[a.NodeID].live || sysbatch):
			r.stop(a, structs.AllocNotNeeded, "")
			continue
		}
		if ok, _ := staticFeasible(r.job, tg, node); !ok {
			r.stop(a, structs.AllocNotNeeded, "")
			continue
		}
		h := &holder{alloc: a, live: true, kind: r.updateKind(a)}
		served[a.NodeID] = h
		g.holders = append(g.holders, h)
	}

	var missing []*Placement
	for _, n := range sortedNodes(r.in.Nodes) {
		if !n.Ready() || served[n.ID] != nil {
			continue
		}
		if ok, _ := staticFeasible(r.job, tg, n); ok {
			missing = append(missing, &Placement{NodeID: n.ID})
		}
	}
	count := len(g.holders) + len(missing)
	g.count = count

	var destructive, inplace []*holder
	for _, h := range g.holders {
		switch h.kind {
		case UpdateDestructive:
			destructive = append(destructive, h)
		case UpdateInPlace:
			inplace = append(inplace, h)
		default:
			du.Ignore++
		}
	}
	sort.SliceStable(destructive, func(i, j int) bool {
		a, b := destructive[i].alloc, destructive[j].alloc
		if a.NodeName != b.NodeName {
			return a.NodeName < b.NodeName
		}
		return a.NodeID < b.NodeID
	})
	budget := len(destructive)
	if rolling {
		batch := Budget(r.budgetInput(g, false))
		budget = min(budget, batch.Start)
		if len(destructive) > 0 {
			r.wakeForStagger(batch.Wake)
		}
	}
	for _, h := range inplace {
		r.inplace(h.alloc)
	}
	if rolling && (len(destructive)+len(inplace) > 0 || len(missing) > 0 && !r.hadRunning) {
		if r.deployment == nil || r.deployment.TaskGroups[tg.Name] == nil {
			r.wantState(tg, count, 0)
		}
	}
	for _, p := range missing {
		r.emit(tg, p)
		du.Place++
	}
	for _, h := range destructive[:budget] {
		r.emit(tg, &Placement{
			NodeID: h.alloc.NodeID, PreviousAlloc: h.alloc.ID, PreviousNode: h.alloc.NodeID,
			Replaces: h.alloc.ID, ReplaceDescription: structs.AllocUpdating, replaced: h.alloc,
		})
		du.DestructiveUpdate++
	}
	du.Ignore += uint64(len(destructive) - budget)
}

func sortedNodes(in []*structs.Node) []*structs.Node {
	out := make([]*structs.Node, 0, len(in))
	for _, n := range in {
		if n != nil {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}
