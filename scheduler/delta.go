package scheduler

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/droverhq/drover/structs"
)

// A pass that costs what changed.
//
// A rollout's job is reconciled on every batch of health reports, and a
// full pass (Reconcile) classifies every one of the job's allocs each time,
// whatever changed: at 10,000 allocs that was most of the leader's CPU. A
// Memo keeps, between two passes of one job, what each alloc contributes
// to its group's pass (its index, its kind of update, what it counts for
// the rollout's budget, its zone) with per-group tallies and the ordered
// lists of old allocs waiting for replacement. ReconcileMemo brings the memo up to date
// with the allocs that differ from the last pass (stored allocs are never
// modified, so an alloc is unchanged when its pointer is) and, when every
// group of the job is in the plain case below, derives the plan from the
// tallies alone: what the pass costs is then the walk over the alloc
// pointers and the changed allocs, not a classification of each alloc.
//
// The plain case is a service job with a running deployment of its
// current version, whose groups roll by max_parallel, together, one at a
// time (group_order) or zone by zone once the deployment holds the zones
// (no canaries, max_surge, unhealthy_first, restart or regions), and whose
// allocs all run or start on live nodes, each at its own index, exactly
// count of them, with no transition, reschedule or disconnection pending. Anything else is reconciled by the full pass, with the memo
// still kept up to date. The plan is the full pass's, field for field:
// TestReconcileMemoMatchesFull compares the two on random histories.

// Len is the number of allocs the memo holds.
func (m *Memo) Len() int { return len(m.entries) }

// Passes reports how many plans came from the memo's tallies (not from
// the full pass).
func (m *Memo) Passes() int { return m.plain }

// Rebuilds reports how many times the memo was built from scratch.
func (m *Memo) Rebuilds() int { return m.rebuilds }

// Active reports whether the memo holds a job worth keeping it for: one
// whose last pass found a running deployment of its version.
func (m *Memo) Active() bool { return m != nil && m.job != nil }

// ReconcileMemo returns Reconcile(in), working from m for the allocs that
// did not change since the pass that last updated m, and updates m to in.
// in.Allocs must be in ID order with no two of one ID, as a store's job
// index returns them (the memo is merged with them in that order). A nil m
// is a full pass.
func ReconcileMemo(in Input, m *Memo) *Plan {
	if m == nil {
		return Reconcile(in)
	}
	r := newReconciler(in)
	if !r.memoJob() {
		m.reset()
		return Reconcile(in)
	}
	m.update(r)
	if !r.memoPlain(m) {
		return Reconcile(in)
	}
	m.plain++
	r.runMemo(m)
	return r.plan
}

// memoJob reports whether the job's pass can be kept in a memo: a service
// job with a running deployment of its version and none of the job-wide
// features the memo does not follow. It reads the deployment as run does
// (pickDeployment), which writes nothing when it returns true.
func (r *reconciler) memoJob() bool {
	j := r.job
	if j == nil || j.Stopped() || j.IsParent() || j.Type != structs.JobTypeService || j.Multiregion != nil {
		return false
	}
	d := r.in.Deployment
	if d == nil || d.ID == "" || d.Status != structs.DeploymentStatusRunning || d.Restart != nil ||
		d.JobVersion != j.Version || d.JobCreateIndex != j.CreateIndex {
		return false
	}
	r.pickDeployment()
	return r.deployment == d && !r.paused && !r.failed && r.restart == nil && r.restartDone == nil &&
		len(r.plan.DeploymentUpdates) == 0
}

// memoPlain reports whether every group of the job is in the plain case,
// so that runMemo gives the full pass's plan.
func (r *reconciler) memoPlain(m *Memo) bool {
	seen := 0
	for _, tg := range r.job.TaskGroups {
		if tg == nil {
			return false
		}
		u := tg.Update
		if u == nil || !u.Rolling() || u.Canary > 0 || u.SurgeFor(tg.Count) > 0 || u.UnhealthyFirst {
			return false
		}
		s := r.deployment.TaskGroups[tg.Name]
		if s == nil || s.DesiredCanaries > 0 && !s.Promoted || u.Zones != nil && len(s.Zones) == 0 {
			// Zones: the deployment holds the zones' order and states
			// (zonesFor), else this pass would work them out.
			return false
		}
		g := m.groups[tg.Name]
		if g == nil {
			if tg.Count != 0 {
				return false
			}
			continue
		}
		seen++
		if g.complex > 0 || g.dups > 0 || g.holders != tg.Count {
			return false
		}
	}
	// No alloc of a group the job no longer has.
	for _, g := range m.groups {
		if g.holders+g.complex > 0 && r.job.LookupTaskGroup(g.name) == nil {
			return false
		}
	}
	// Groups one at a time: the turn is read from the deployment's group
	// states alone once every group has one (groupGate).
	if order := r.job.GroupRolloutOrder(); order != nil {
		if !hasGroupStates(r.deployment) {
			return false
		}
		for _, name := range order {
			if r.deployment.TaskGroups[name] == nil {
				return false
			}
		}
		r.gate = r.groupGate(nil)
	}
	return true
}

// runMemo is run (reconcile.go) for a job whose groups are all in the
// plain case, from the memo's tallies.
func (r *reconciler) runMemo(m *Memo) {
	for _, tg := range r.job.TaskGroups {
		r.reconcileGroupMemo(tg, m.groups[tg.Name], m)
	}
	r.flushFollowups()
	r.flushStagger()
	r.finishDeployment()
}

// reconcileGroupMemo is reconcileGroup (group.go) for a group in the plain
// case: every alloc a live holder of its own index, kind UpdateNone or
// UpdateDestructive, and none of the group's other features at work.
func (r *reconciler) reconcileGroupMemo(tg *structs.TaskGroup, t *groupTally, m *Memo) {
	du := r.plan.desired(tg.Name)
	if t == nil {
		// A group of count 0 without allocs.
		r.markAllPlaced(tg.Name, r.gate == nil || r.gate[tg.Name])
		return
	}
	g := &groupPass{tg: tg, count: tg.Count}
	in := r.budgetBase(g, false, t.holders)
	in.Available = t.parts[partAvailable] + t.parts[partNewHealthy]
	in.Unknown = t.parts[partUnknownOld] + t.parts[partNewUnknown]
	in.Unhealthy = t.parts[partNewUnhealthy]
	in.NewAllocs = t.parts[partNewHealthy] + t.parts[partNewUnhealthy] + t.parts[partNewUnknown]
	in.NewHealthy = t.parts[partNewHealthy]
	in.LastHealthy = m.lastHealthyOf(t)
	in.NotServing = t.notServing
	batch := Budget(in)
	budget := batch.Start
	destructive := t.destructive.list
	if len(destructive) > 0 {
		r.wakeForStagger(batch.Wake)
	}
	var chosen []indexedAlloc
	zones := tg.Update.Zones
	if zones != nil {
		chosen = r.pickZonesMemo(tg, t, budget, in)
	} else {
		chosen = destructive[:min(budget, len(destructive))]
	}
	// Not this group's turn (group_order): nothing starts.
	waiting := r.gate != nil && !r.gate[tg.Name]
	if waiting {
		chosen = nil
	}
	du.Ignore += uint64(t.ignore)
	du.DestructiveUpdate += uint64(len(chosen))
	du.Ignore += uint64(len(destructive) - len(chosen))
	for _, x := range chosen {
		a := x.a
		p := &Placement{Index: x.idx, PreviousAlloc: a.ID, PreviousNode: a.NodeID,
			Replaces: a.ID, ReplaceDescription: r.updatingDescription(a), replaced: a}
		if zones != nil {
			// Pinned to the zone of the alloc it replaces
			// (zonePlacements).
			p.Zone, p.InZone = zoneOfMemo(r, a, zones), true
		}
		r.emit(tg, p)
	}
	r.markAllPlaced(tg.Name, !waiting && len(chosen) == len(destructive))
}

// zoneOfMemo is zonePass.zone: the zone stamped on the alloc, else its
// node's.
func zoneOfMemo(r *reconciler, a *structs.Allocation, z *structs.ZoneStrategy) string {
	if a.Zone != "" {
		return a.Zone
	}
	return structs.ZoneOf(r.nodes[a.NodeID], z.Attribute)
}

// pickZonesMemo is zonePass.pick (zones.go) from a group's zone tallies:
// each rolling zone's old allocs within its width (max_parallel, or its
// disruption budget less its failures) less its new allocs in flight, and
// within limit, the group's budget (once per rolling zone when zones roll
// concurrently); once every listed zone is done, the zones that appeared
// since, by name.
func (r *reconciler) pickZonesMemo(tg *structs.TaskGroup, t *groupTally, limit int, in BudgetInput) []indexedAlloc {
	zs := tg.Update.Zones
	states := r.deployment.TaskGroups[tg.Name].Zones
	inflight := func(z *zoneTally) int {
		n := z.newUnknown
		if in.ToleratesFailures {
			n += z.newUnhealthy
		}
		return n
	}
	listed := map[string]bool{}
	allDone := true
	rolling := 0
	for _, s := range states {
		listed[s.Name] = true
		if s.State != structs.ZoneStateDone {
			allDone = false
		}
		if s.State == structs.ZoneStateRolling {
			rolling++
		}
	}
	if !zs.ByZone() {
		limit *= max(1, rolling)
	}
	var out []indexedAlloc
	take := func(name string, failed, size int) {
		z := t.zones[name]
		if z == nil {
			return
		}
		width := in.MaxParallel
		if b, ok := zs.BudgetFor(size); ok {
			width = min(width, b-failed)
		}
		n := min(len(z.destructive.list), width-inflight(z), limit)
		if n <= 0 {
			return
		}
		out = append(out, z.destructive.list[:n]...)
		limit -= n
	}
	for _, s := range states {
		if s.State == structs.ZoneStateRolling {
			take(s.Name, s.Failed, s.Size)
		}
	}
	if allDone {
		var extra []string
		for name, z := range t.zones {
			if !listed[name] && len(z.destructive.list) > 0 {
				extra = append(extra, name)
			}
		}
		slices.Sort(extra)
		for _, name := range extra {
			take(name, 0, len(t.zones[name].destructive.list))
		}
	}
	return out
}

// AllocsWith returns the allocs the memo was last updated with, in their
// (ID) order, less those whose ID is in drop, plus add (allocs of the
// job, each with its ID in drop when it replaces one): what the job's
// allocs are now when drop names every alloc written since. It reads the
// IDs of only the allocs around each change.
func (m *Memo) AllocsWith(drop []string, add []*structs.Allocation) []*structs.Allocation {
	at := func(id string) int {
		return sort.Search(len(m.entries), func(i int) bool { return m.entries[i].a.ID >= id })
	}
	gone := make([]int, 0, len(drop))
	for _, id := range drop {
		if i := at(id); i < len(m.entries) && m.entries[i].a.ID == id {
			gone = append(gone, i)
		}
	}
	slices.Sort(gone)
	type insert struct {
		pos int
		a   *structs.Allocation
	}
	ins := make([]insert, 0, len(add))
	for _, a := range add {
		if a != nil {
			ins = append(ins, insert{at(a.ID), a})
		}
	}
	slices.SortFunc(ins, func(x, y insert) int {
		if c := cmp.Compare(x.pos, y.pos); c != 0 {
			return c
		}
		return strings.Compare(x.a.ID, y.a.ID)
	})
	out := make([]*structs.Allocation, 0, len(m.entries)+len(ins))
	g, k := 0, 0
	for i, e := range m.entries {
		for ; k < len(ins) && ins[k].pos == i; k++ {
			out = append(out, ins[k].a)
		}
		if g < len(gone) && gone[g] == i {
			for g < len(gone) && gone[g] == i {
				g++
			}
			continue
		}
		out = append(out, e.a)
	}
	for ; k < len(ins); k++ {
		out = append(out, ins[k].a)
	}
	return out
}
