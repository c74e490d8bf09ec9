package scheduler

import (
	"sort"
	"time"

	"github.com/droverhq/drover/structs"
)

// holder is something that occupies one of a group's indexes: an existing
// alloc (running, or finished but still counting, as a completed batch
// alloc), or a replacement placed in this pass.
type holder struct {
	index int
	alloc *structs.Allocation
	// place is a replacement for alloc (lost, migrating, rescheduled).
	place *Placement
	// live: alloc runs and may be stopped when scaling down.
	live bool
	// down: a failed alloc of an older version, held to be replaced; it
	// serves nothing.
	down bool
	kind UpdateKind
	// migrate marks a replacement counted as a migration, not a placement.
	migrate bool
}

// groupPass is the working set of one group's reconciliation.
type groupPass struct {
	tg        *structs.TaskGroup
	holders   []*holder
	canaries  []*holder
	followups []pendingFollowup
	// surged maps an index to the alloc of the current spec that holds it
	// while an old alloc still runs there (max_surge); nil when the group
	// has no surge.
	surged map[int]*structs.Allocation
	// aside are old allocs running beside their surge replacement: they
	// serve, hold no index, and stop once the replacement is healthy.
	aside []*structs.Allocation
	// count is the number of allocs the group's width and thresholds are
	// resolved against.
	count int
	// notServing counts the group's allocs, of any version, that serve
	// nothing as the pass starts (structs.Allocation.NotServing).
	notServing int
	// successors and moving are the group's migrations (migrate.go):
	// what holds each index, and the marked allocs that serve beside
	// their replacement until it is healthy.
	successors map[successorKey]*structs.Allocation
	moving     []moving
	// slab and slabHint back hold (passwork.go).
	slab     []holder
	slabHint int
}

type pendingFollowup struct {
	alloc *structs.Allocation
	at    time.Time
	// trigger is the follow-up evaluation's TriggeredBy; "" for a delayed
	// reschedule.
	trigger string
}

// reconcileGroup handles one group of a service or batch job.
func (r *reconciler) reconcileGroup(tg *structs.TaskGroup, allocs []*structs.Allocation) {
	du := r.plan.desired(tg.Name)
	batch := r.job.Type == structs.JobTypeBatch
	rolling := !batch && tg.Update.Rolling()
	g := &groupPass{tg: tg, count: tg.Count, slabHint: len(allocs)}
	if rolling && tg.Update.SurgeFor(tg.Count) > 0 {
		g.surged = r.surgedIndexes(allocs)
	}
	g.successors = r.migrationSuccessors(allocs) // migrate.go
	skip := r.disconnectPass(g, allocs)          // disconnect.go
	idx := r.groupIndexes(tg.Name, allocs)
	for i, a := range allocs {
		if a.NotServing() {
			g.notServing++
		}
		if !skip[a] {
			r.classify(g, a, allocIndex(idx, i, a))
		}
	}
	r.queueFollowups(g.followups)

	state := r.groupState(tg.Name)
	promoted := state != nil && state.Promoted
	revert := r.job.RevertOf != nil

	// After promotion a canary takes over its index: the old alloc there
	// stops without a replacement, and the canary counts toward count.
	if promoted && len(g.canaries) > 0 {
		taken := map[int]bool{}
		for _, c := range g.canaries {
			taken[c.index] = true
		}
		kept := g.holders[:0]
		for _, h := range g.holders {
			if h.live && h.kind == UpdateDestructive && taken[h.index] {
				r.stop(h.alloc, structs.AllocNotNeeded, "")
				continue
			}
			kept = append(kept, h)
		}
		g.holders = append(kept, g.canaries...)
		g.canaries = nil
	}

	r.settleRestarted(g) // restart.go
	r.scaleDown(g)
	r.settleAside(g)
	// Not this group's turn (group_order): nothing starts.
	waiting := r.gate != nil && !r.gate[tg.Name]
	// Not this region's turn (multiregion.go): nothing of the version
	// starts either.
	held := waiting || r.pending

	var destructive, inplace []*holder
	for _, h := range g.holders {
		if !h.live {
			continue
		}
		if h.down {
			// Failed allocs go first: replacing them takes no capacity.
			destructive = append([]*holder{h}, destructive...)
			continue
		}
		switch h.kind {
		case UpdateDestructive:
			destructive = append(destructive, h)
		case UpdateInPlace:
			inplace = append(inplace, h)
		case UpdateRestart:
			// Restarted in place, within the batch as a replacement.
			destructive = append(destructive, h)
		default:
			du.Ignore++
		}
	}

	// Canaries: needed while a destructive change waits for promotion.
	desiredCanaries := 0
	if rolling && len(destructive) > 0 && tg.Update.Canary > 0 && !promoted && !revert && !waiting {
		desiredCanaries = tg.Update.Canary
	}
	var newCanaries []*Placement
	if desiredCanaries > len(g.canaries) && !r.paused && !r.failed {
		for _, idx := range canaryIndexes(desiredCanaries-len(g.canaries), g.canaries, destructive) {
			newCanaries = append(newCanaries, &Placement{Index: idx, Canary: true})
		}
	}
	canarying := desiredCanaries > 0 || state != nil && state.DesiredCanaries > 0 && !state.Promoted

	// Missing allocs: first placement and scale up.
	var missing []*Placement
	if !r.paused && !r.failed && !canarying {
		for _, idx := range freeIndexes(tg.Count-len(g.holders), g) {
			missing = append(missing, &Placement{Index: idx})
		}
	}

	// Destructive replacements within the budget.
	budget, surge := len(destructive), 0
	var first []*holder
	zp := r.zonesFor(g, state, destructive)
	var chosen []*holder
	if rolling {
		in := r.budgetInput(g, canarying)
		if tg.Update.UnhealthyFirst {
			// Broken old allocs go first, all at once, whatever the
			// width (Azure's unhealthy-first); the healthy ones wait for
			// the next pass.
			destructive, first = splitBroken(destructive)
			if len(first) > 0 && (in.Blocked || in.LimitUnhealthy && in.NotServing > in.MaxUnhealthy) {
				destructive, first = append(first, destructive...), nil
			}
		}
		batch := Budget(in)
		budget, surge = batch.Start, batch.Surge
		if len(first) > 0 {
			budget = 0
		}
		if len(destructive) > 0 {
			r.wakeForStagger(batch.Wake)
		}
		if zp != nil {
			chosen = zp.pick(r, g, destructive, budget, in)
		}
	}
	if zp == nil || !rolling {
		chosen = destructive[:min(budget, len(destructive))]
	}
	if held {
		destructive, first, chosen = append(first, destructive...), nil, nil
	}
	var replace []*Placement
	var restarts []*holder
	for _, h := range first {
		if h.kind == UpdateRestart {
			restarts = append(restarts, h)
			continue
		}
		replace = append(replace, replacePlacement(h, false))
	}
	surged := 0
	for _, h := range chosen {
		if h.kind == UpdateRestart {
			restarts = append(restarts, h)
			continue
		}
		s := surge > 0 && !h.down
		if s {
			surge--
			surged++
		}
		p := replacePlacement(h, s)
		if p.Replaces != "" {
			p.ReplaceDescription = r.updatingDescription(h.alloc)
		}
		replace = append(replace, p)
	}
	destructive = append(first, destructive...)
	if zp != nil {
		places := replace
		for _, h := range g.holders {
			if h.place != nil {
				places = append(places, h.place)
			}
		}
		zp.zonePlacements(r, g, places, allocs)
	}
	du.DestructiveUpdate += uint64(len(replace))
	du.Ignore += uint64(len(destructive) - len(replace) - len(restarts))
	heldInplace := 0
	if held {
		du.Ignore += uint64(len(inplace))
		if r.pending {
			// Held for the region's turn, they still make this
			// version's deployment, which the regions' rollout starts.
			heldInplace = len(inplace)
		}
		inplace = nil
	}
	for _, h := range inplace {
		r.inplace(h.alloc)
	}

	// Join this version's deployment when the group changes.
	changes := len(inplace) + len(destructive) + heldInplace
	placing := len(missing) + len(newCanaries) + r.heldPlacements(tg, g, canarying)
	if rolling && (changes > 0 || placing > 0 && !r.hadRunning) {
		if r.deployment == nil || r.deployment.TaskGroups[tg.Name] == nil {
			s := r.wantState(tg, tg.Count, desiredCanaries)
			if zp != nil && zp.fresh {
				s.Zones = zp.states
			}
			if changes == 0 {
				// The group's first version places everything at once
				// (C.9): none of its checkpoints applies.
				s.CheckpointsReached = len(tg.Update.Checkpoints)
			}
		}
	}

	r.restartTotal(tg) // restart.go

	// Emit placements: replacements, canaries, new allocs, destructive.
	for _, h := range g.holders {
		if h.place != nil {
			r.emit(tg, h.place)
			if h.migrate {
				du.Migrate++
			} else {
				du.Place++
			}
		}
	}
	for _, c := range g.canaries {
		if c.place != nil {
			r.emit(tg, c.place)
			du.Place++
		}
	}
	for _, p := range newCanaries {
		r.emit(tg, p)
		du.Canary++
	}
	for _, p := range missing {
		r.emit(tg, p)
		du.Place++
	}
	for _, p := range replace {
		r.emit(tg, p)
	}
	for _, h := range restarts {
		r.restartInPlace(h.alloc)
	}
	r.settleMoving(g)
	if rolling {
		// Once nothing budgeted is left, a healthy verdict needs no pass.
		r.markAllPlaced(tg.Name, !canarying && !held && len(replace)+len(restarts) == len(destructive) &&
			surged == 0 && len(g.aside) == 0 && len(g.moving) == 0)
	}
}

// markAllPlaced records the group's AllPlaced: in the state of a
// deployment created (or joined) in this pass, or, when the running
// deployment of this version holds another value, as an update of it
// (finishDeployment).
func (r *reconciler) markAllPlaced(group string, placed bool) {
	if s := r.newStates[group]; s != nil {
		s.AllPlaced = placed
		return
	}
	d := r.deployment
	if d == nil || d.Status != structs.DeploymentStatusRunning {
		return
	}
	if s := d.TaskGroups[group]; s != nil && s.AllPlaced != placed {
		if r.allPlaced == nil {
			r.allPlaced = map[string]bool{}
		}
		r.allPlaced[group] = placed
	}
}

// replacePlacement replaces h's alloc by the new version: destructively
// (the old alloc stops in the same plan), or by surge (it keeps running
// until the replacement is healthy).
func replacePlacement(h *holder, surge bool) *Placement {
	p := &Placement{Index: h.index, PreviousAlloc: h.alloc.ID, PreviousNode: h.alloc.NodeID, Surge: surge}
	if !surge {
		p.Replaces, p.ReplaceDescription, p.replaced = h.alloc.ID, structs.AllocUpdating, h.alloc
	}
	return p
}

// splitBroken splits the old allocs to replace into those that serve and
// those that are failed or marked unhealthy, keeping their order.
func splitBroken(hs []*holder) (serving, broken []*holder) {
	for _, h := range hs {
		if h.down || h.alloc.IsUnhealthy() {
			broken = append(broken, h)
		} else {
			serving = append(serving, h)
		}
	}
	return serving, broken
}

// surgedIndexes finds, in a group with max_surge, the indexes held by an
// alloc that already has the job's spec (not a canary, not replaced yet,
// neither complete nor lost): an old alloc at such an index runs beside
// its surge replacement, and is set aside rather than held (classify).
func (r *reconciler) surgedIndexes(allocs []*structs.Allocation) map[int]*structs.Allocation {
	m := map[int]*structs.Allocation{}
	for _, a := range allocs {
		if a.DesiredStatus != structs.AllocDesiredStatusRun || a.NextAllocation != "" || a.IsCanary() || a.DesiredTransition.ShouldMigrate() ||
			a.ClientStatus == structs.AllocClientStatusComplete || a.ClientStatus == structs.AllocClientStatusLost {
			continue
		}
		if idx := a.Index(); idx >= 0 && r.updateKind(a) != UpdateDestructive {
			m[idx] = a
		}
	}
	return m
}

// settleAside stops each old alloc set aside for surge whose replacement
// is healthy, or whose index the group no longer holds (scaled down); the
// others keep running.
func (r *reconciler) settleAside(g *groupPass) {
	if len(g.aside) == 0 {
		return
	}
	held := newIndexSet(len(g.holders))
	for _, h := range g.holders {
		held.add(h.index)
	}
	kept := g.aside[:0]
	for _, a := range g.aside {
		idx := a.Index()
		if n := g.surged[idx]; !held.has(idx) || n != nil && n.IsHealthy() && !n.TerminalStatus() {
			r.stop(a, r.updatingDescription(a), "")
			continue
		}
		kept = append(kept, a)
	}
	g.aside = kept
}

// classify sorts one alloc into the pass: ignored, held, a canary, set
// aside beside its surge replacement, or replaced now.
func (r *reconciler) classify(g *groupPass, a *structs.Allocation, idx int) {
	if a.DesiredStatus != structs.AllocDesiredStatusRun {
		return
	}
	tg := g.tg
	if n := g.surged[idx]; n != nil && n != a && !a.IsCanary() && !a.DesiredTransition.ShouldMigrate() && r.updateKind(a) == UpdateDestructive {
		// An old alloc beside its surge replacement: it serves until the
		// replacement is healthy; failed, it needs nothing more.
		if !a.ClientTerminalStatus() {
			g.aside = append(g.aside, a)
		}
		return
	}
	canary := a.IsCanary() && a.DeploymentID != "" && a.DeploymentID == r.deploymentID()
	if a.IsCanary() && !canary && r.unpromotedCanaryOfCancelled(a) || canary && r.failed && !r.promoted(tg.Name) {
		if !a.TerminalStatus() {
			r.stop(a, structs.AllocCanaryNotPromoted, "")
		}
		return
	}
	add := func(h holder) {
		if canary {
			g.canaries = append(g.canaries, g.hold(h))
		} else {
			g.holders = append(g.holders, g.hold(h))
		}
	}
	if idx < 0 {
		// A name without an index cannot hold a slot: surplus.
		if !a.TerminalStatus() {
			r.stop(a, structs.AllocNotNeeded, "")
		}
		return
	}
	replacement := func(desc string, replaces bool) *Placement {
		p := &Placement{Index: idx, Canary: canary, PreviousAlloc: a.ID, PreviousNode: a.NodeID}
		if replaces {
			p.Replaces, p.ReplaceDescription = a.ID, desc
		}
		return p
	}
	reschedule := func(force bool) (handled bool) {
		if r.failed && a.DeploymentID == r.deploymentID() {
			return false
		}
		when, at, delay := rescheduleDecision(a, tg.ReschedulePolicy, r.in.Now, force)
		switch when {
		case rescheduleNow:
			p := replacement(structs.AllocRescheduled, true)
			p.Reschedule = true
			p.RescheduleTracker = nextTracker(a, r.in.Now, delay)
			add(holder{index: idx, alloc: a, place: p})
			return true
		case rescheduleLater:
			if a.FollowupEvalID == "" {
				g.followups = append(g.followups, pendingFollowup{alloc: a, at: at})
			}
		}
		return false
	}

	if a.ClientTerminalStatus() {
		if a.NextAllocation != "" {
			return
		}
		switch a.ClientStatus {
		case structs.AllocClientStatusComplete:
			if r.job.Type == structs.JobTypeBatch {
				add(holder{index: idx, alloc: a})
			}
		case structs.AllocClientStatusLost:
			if until, wait := r.lostWaitsForClientStop(tg, a); wait {
				// Its client may still run it (stop_on_client_after):
				// the index waits for it.
				if a.FollowupEvalID == "" {
					g.followups = append(g.followups, pendingFollowup{alloc: a, at: until, trigger: structs.EvalTriggerMaxDisconnectTimeout})
				}
				add(holder{index: idx, alloc: a})
				return
			}
			r.stop(a, structs.AllocLost, structs.AllocClientStatusLost)
			add(holder{index: idx, alloc: a, place: replacement("", false)})
		case structs.AllocClientStatusFailed:
			if reschedule(a.DesiredTransition.ShouldForceReschedule()) {
				return
			}
			// A failed alloc of an older version that is not rescheduled
			// is replaced by the new version like a running one (as
			// Nomad's destructive update of it), so a new version — an
			// auto-revert above all — restores the group's count.
			if r.job.Type != structs.JobTypeBatch && !canary && r.updateKind(a) != UpdateNone {
				add(holder{index: idx, alloc: a, live: true, kind: UpdateDestructive, down: true})
				return
			}
			add(holder{index: idx, alloc: a})
		}
		return
	}
	switch {
	case r.nodeLost(a):
		r.stop(a, structs.AllocLost, structs.AllocClientStatusLost)
		add(holder{index: idx, alloc: a, place: replacement("", false)})
		return
	case a.DesiredTransition.ShouldMigrate():
		r.migrate(g, a, idx, canary, add) // migrate.go
		return
	case a.DesiredTransition.ShouldForceReschedule() || a.DesiredTransition.ShouldReschedule():
		if reschedule(a.DesiredTransition.ShouldForceReschedule()) {
			return
		}
	}
	kind := UpdateNone
	if !canary {
		kind = r.updateKind(a)
	}
	add(holder{index: idx, alloc: a, live: true, kind: kind})
}

// scaleDown stops or drops holders beyond the group's count: second holders
// of one index first, then the highest indexes. Finished allocs that still
// count (completed batch allocs) are never candidates.
func (r *reconciler) scaleDown(g *groupPass) {
	excess := len(g.holders) - g.tg.Count
	if excess <= 0 && !hasDuplicates(g.holders) {
		return
	}
	seen := map[int]bool{}
	dup := map[*holder]bool{}
	for _, h := range g.holders {
		if seen[h.index] {
			dup[h] = true
		}
		seen[h.index] = true
	}
	cands := make([]*holder, 0, len(g.holders))
	for _, h := range g.holders {
		if h.live || h.place != nil {
			cands = append(cands, h)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if dup[cands[i]] != dup[cands[j]] {
			return dup[cands[i]]
		}
		return cands[i].index > cands[j].index
	})
	drop := map[*holder]bool{}
	for _, h := range cands {
		if excess <= 0 && !dup[h] {
			break
		}
		drop[h] = true
		excess--
		switch {
		case h.live:
			r.stop(h.alloc, structs.AllocNotNeeded, "")
		case h.place != nil && h.place.Replaces != "" && !h.alloc.ClientTerminalStatus():
			r.stop(h.alloc, structs.AllocNotNeeded, "")
		}
	}
	kept := g.holders[:0]
	for _, h := range g.holders {
		if !drop[h] {
			kept = append(kept, h)
		}
	}
	g.holders = kept
}

func hasDuplicates(hs []*holder) bool {
	seen := newIndexSet(len(hs))
	for _, h := range hs {
		if seen.add(h.index) {
			return true
		}
	}
	return false
}

// canaryIndexes names n new canaries: the indexes of the allocs they will
// replace, lowest first, skipping indexes that already have a canary.
func canaryIndexes(n int, canaries, destructive []*holder) []int {
	used := map[int]bool{}
	for _, c := range canaries {
		used[c.index] = true
	}
	var out []int
	for _, h := range destructive {
		if len(out) == n {
			return out
		}
		if !used[h.index] {
			used[h.index] = true
			out = append(out, h.index)
		}
	}
	for i := 0; len(out) < n; i++ {
		if !used[i] {
			used[i] = true
			out = append(out, i)
		}
	}
	return out
}

// freeIndexes returns the n lowest indexes no holder or canary uses.
func freeIndexes(n int, g *groupPass) []int {
	if n <= 0 {
		return nil
	}
	used := newIndexSet(len(g.holders) + len(g.canaries))
	for _, h := range g.holders {
		used.add(h.index)
	}
	for _, h := range g.canaries {
		used.add(h.index)
	}
	out := make([]int, 0, n)
	for i := 0; len(out) < n; i++ {
		if !used.has(i) {
			out = append(out, i)
		}
	}
	return out
}

// emit mints the placement's ID and name and appends it to the plan.
func (r *reconciler) emit(tg *structs.TaskGroup, p *Placement) {
	p.AllocID = r.in.IDs()
	p.TaskGroup = tg.Name
	p.Name = structs.AllocName(r.job.ID, tg.Name, p.Index)
	r.plan.Place = append(r.plan.Place, *p)
}

func (r *reconciler) deploymentID() string {
	if r.deployment == nil {
		return ""
	}
	return r.deployment.ID
}

func (r *reconciler) promoted(group string) bool {
	s := r.groupState(group)
	return s != nil && s.Promoted
}

// unpromotedCanaryOfCancelled reports whether a is a canary of the input
// deployment that was not promoted and is no longer current.
func (r *reconciler) unpromotedCanaryOfCancelled(a *structs.Allocation) bool {
	d := r.in.Deployment
	if d == nil || a.DeploymentID != d.ID || r.deployment == d {
		return false
	}
	s := d.TaskGroups[a.TaskGroup]
	return s == nil || !s.Promoted
}
