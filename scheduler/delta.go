package scheduler

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"time"

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

// Memo is what ReconcileMemo keeps of a job between passes. The zero
// value is empty; a Memo serves one job and is not safe for concurrent
// use.
type Memo struct {
	// The facts below hold for this job object (stored jobs are never
	// modified), deployment, set of lost nodes and nodes' zones; any
	// change of those rebuilds the memo.
	job   *structs.Job
	depID string
	nodes []*structs.Node
	// entries are the job's allocs as last given, in the order given (ID
	// order from the store), with their facts; spare is the other buffer.
	entries, spare []memoEntry
	groups         map[string]*groupTally
	// rebuilds, plain and facts count rebuilds, passes from the memo and
	// allocs read (facts worked out), for tests.
	rebuilds, plain, facts int
}

// memoEntry is an alloc and what it contributes to its group's pass.
type memoEntry struct {
	a *structs.Allocation
	f allocFact
}

// allocFact is one alloc's part in its group's pass, as classify and
// budgetInput would count it.
type allocFact struct {
	g   *groupTally
	idx int
	// plain: a live holder of the plain case; otherwise the group needs
	// the full pass while the alloc is there.
	plain      bool
	skipped    bool // stopped or evicted by the servers: not in the pass
	notServing bool
	kind       UpdateKind
	budget     budgetPart
	healthyAt  time.Time // DeploymentStatus.Timestamp of a healthy new alloc
	// zone is the alloc's zone in a group rolled by zones (zonePass.zone).
	zone string
}

// budgetPart is which of budgetInput's counts a plain alloc adds to.
type budgetPart uint8

const (
	partAvailable    budgetPart = iota // old, serving
	partUnknownOld                     // old, placed by an earlier deployment, not started
	partNewHealthy                     // new, healthy
	partNewUnhealthy                   // new, marked unhealthy
	partNewUnknown                     // new, health not yet known
)

// indexedAlloc is an alloc with its index.
type indexedAlloc struct {
	idx int
	a   *structs.Allocation
}

// orderedAllocs is a list of allocs in the full pass's order (index,
// then ID). Changes are gathered during a memo's update and merged in
// once at its end: one walk of the list, however many changed.
type orderedAllocs struct {
	list []indexedAlloc
	adds []indexedAlloc
	dels []indexedAlloc
}

func (o *orderedAllocs) add(x indexedAlloc)    { o.adds = append(o.adds, x) }
func (o *orderedAllocs) remove(x indexedAlloc) { o.dels = append(o.dels, x) }

// settle merges the gathered changes into the list.
func (o *orderedAllocs) settle() {
	if len(o.adds) == 0 && len(o.dels) == 0 {
		return
	}
	kept := o.list
	if len(o.dels) > 0 {
		// Each removed alloc is found by its place in the order, and
		// the list is closed up in one walk.
		gone := make([]int, 0, len(o.dels))
		for _, x := range o.dels {
			if i, ok := slices.BinarySearchFunc(o.list, x, compareIndexID); ok && o.list[i].a == x.a {
				gone = append(gone, i)
			}
		}
		slices.Sort(gone)
		w, g := 0, 0
		for i := range o.list {
			if g < len(gone) && gone[g] == i {
				for g < len(gone) && gone[g] == i {
					g++
				}
				continue
			}
			o.list[w] = o.list[i]
			w++
		}
		clear(o.list[w:])
		kept = o.list[:w]
		clear(o.dels)
		o.dels = o.dels[:0]
	}
	if len(o.adds) == 0 {
		o.list = kept
		return
	}
	slices.SortFunc(o.adds, compareIndexID)
	merged := make([]indexedAlloc, 0, len(kept)+len(o.adds))
	i, j := 0, 0
	for i < len(kept) && j < len(o.adds) {
		if compareIndexID(kept[i], o.adds[j]) <= 0 {
			merged = append(merged, kept[i])
			i++
		} else {
			merged = append(merged, o.adds[j])
			j++
		}
	}
	merged = append(append(merged, kept[i:]...), o.adds[j:]...)
	o.list, o.adds = merged, o.adds[:0]
}

// zoneTally is a zone's part of a zoned group: its old allocs waiting for
// replacement, in order, and its new allocs not healthy yet (in flight,
// zonePass.pick).
type zoneTally struct {
	destructive              orderedAllocs
	newUnknown, newUnhealthy int
}

// groupTally sums the facts of a group's allocs.
type groupTally struct {
	name string
	// holders counts the plain allocs, complex the others (not skipped).
	holders, complex int
	notServing       int
	ignore           int // plain allocs of kind UpdateNone
	parts            [partNewUnknown + 1]int
	// idxCount counts plain allocs per index; dups counts the indexes
	// held more than once.
	idxCount map[int]int
	dups     int
	// destructive are the plain allocs of kind UpdateDestructive, in the
	// full pass's order (index, then ID).
	destructive orderedAllocs
	// zones tallies a zoned group's plain allocs by zone.
	zones map[string]*zoneTally
	// lastHealthy is the latest healthyAt of the new healthy allocs, and
	// atLast how many have it; stale when one of those left.
	lastHealthy time.Time
	atLast      int
	stale       bool
}

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

// reset empties the memo.
func (m *Memo) reset() {
	m.job, m.depID, m.nodes = nil, "", nil
	m.entries, m.spare, m.groups = nil, nil, nil
}

// update brings the memo to r's input: from scratch when the job, the
// deployment or a node's liveness or zone changed, otherwise by the
// allocs whose pointer changed.
func (m *Memo) update(r *reconciler) {
	if m.job != r.in.Job || m.depID != r.deployment.ID || !sameLiveness(m.nodes, r.in.Nodes) || !sameZones(r.job, m.nodes, r.in.Nodes) {
		m.job, m.depID = r.in.Job, r.deployment.ID
		// New buffers: the old ones would keep the allocs they point to.
		m.entries, m.spare = nil, nil
		m.groups = map[string]*groupTally{}
		m.rebuilds++
	}
	m.nodes = append(m.nodes[:0], r.in.Nodes...)
	// Merge the allocs given with the entries, both in ID order: an
	// alloc with the entry's pointer is unchanged, and only the others
	// are read.
	old, next := m.entries, m.spare[:0]
	j := 0
	for _, a := range r.in.Allocs {
		if a == nil {
			continue
		}
		for j < len(old) && old[j].a != a && old[j].a.ID < a.ID {
			// Gone since the last pass.
			m.remove(old[j].f, old[j].a)
			j++
		}
		if j < len(old) && old[j].a == a {
			next = append(next, old[j])
			j++
			continue
		}
		if j < len(old) && old[j].a.ID == a.ID {
			// Changed.
			m.remove(old[j].f, old[j].a)
			j++
		}
		e := memoEntry{a: a, f: r.fact(m, a)}
		m.add(e.f, a)
		next = append(next, e)
	}
	for ; j < len(old); j++ {
		m.remove(old[j].f, old[j].a)
	}
	clear(old)
	m.entries, m.spare = next, old[:0]
	for _, g := range m.groups {
		g.destructive.settle()
		for _, z := range g.zones {
			z.destructive.settle()
		}
	}
}

// sameLiveness reports whether every alloc's node is lost (missing or
// down) in b exactly when it is in a.
func sameLiveness(a, b []*structs.Node) bool {
	if len(a) == len(b) {
		same := true
		for i := range a {
			if a[i] != b[i] {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	up := func(ns []*structs.Node) map[string]bool {
		m := make(map[string]bool, len(ns))
		for _, n := range ns {
			if n != nil {
				m[n.ID] = n.Status != structs.NodeStatusDown
			}
		}
		return m
	}
	ua, ub := up(a), up(b)
	if len(ua) != len(ub) {
		return false
	}
	for id, v := range ua {
		if w, ok := ub[id]; !ok || w != v {
			return false
		}
	}
	return true
}

// sameZones reports whether every node is in the same zone in b as in a,
// for each zone attribute of the job's groups (a fact holds the zone of
// an alloc read from its node).
func sameZones(job *structs.Job, a, b []*structs.Node) bool {
	var attrs []string
	for _, tg := range job.TaskGroups {
		if tg != nil && tg.Update != nil && tg.Update.Zones != nil && !slices.Contains(attrs, tg.Update.Zones.Attribute) {
			attrs = append(attrs, tg.Update.Zones.Attribute)
		}
	}
	if len(attrs) == 0 || slices.Equal(a, b) {
		return true
	}
	zonesOf := func(ns []*structs.Node) map[string]string {
		m := make(map[string]string, len(ns))
		for _, n := range ns {
			if n != nil {
				for _, attr := range attrs {
					m[n.ID+"\x00"+attr] = structs.ZoneOf(n, attr)
				}
			}
		}
		return m
	}
	za, zb := zonesOf(a), zonesOf(b)
	if len(za) != len(zb) {
		return false
	}
	for k, v := range za {
		if w, ok := zb[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// tally returns the group's tally, creating it.
func (m *Memo) tally(group string) *groupTally {
	g := m.groups[group]
	if g == nil {
		g = &groupTally{name: group, idxCount: map[int]int{}}
		m.groups[group] = g
	}
	return g
}

// fact works out what a contributes to its group's pass, as classify
// (group.go) and budgetInput (budget_input.go) would in the plain case;
// anything else is not plain.
func (r *reconciler) fact(m *Memo, a *structs.Allocation) allocFact {
	m.facts++
	f := allocFact{g: m.tally(a.TaskGroup), idx: -1}
	switch a.DesiredStatus {
	case structs.AllocDesiredStatusStop, structs.AllocDesiredStatusEvict:
		f.skipped = true
		return f
	}
	f.notServing = a.NotServing()
	if a.DesiredStatus != structs.AllocDesiredStatusRun || a.IsCanary() || len(a.AllocStates) > 0 ||
		a.ClientStatus != structs.AllocClientStatusPending && a.ClientStatus != structs.AllocClientStatusRunning ||
		a.DesiredTransition.ShouldMigrate() || a.DesiredTransition.ShouldForceReschedule() || a.DesiredTransition.ShouldReschedule() ||
		r.nodeLost(a) {
		return f
	}
	if f.idx = a.Index(); f.idx < 0 {
		return f
	}
	switch f.kind = r.updateKind(a); f.kind {
	case UpdateNone, UpdateDestructive:
	default:
		return f
	}
	f.plain = true
	if tg := r.job.LookupTaskGroup(a.TaskGroup); tg != nil && tg.Update != nil && tg.Update.Zones != nil {
		if f.zone = a.Zone; f.zone == "" {
			f.zone = structs.ZoneOf(r.nodes[a.NodeID], tg.Update.Zones.Attribute)
		}
	}
	dep := r.deployment.ID
	switch {
	case a.DeploymentID != dep && inFlightElsewhere(a):
		f.budget = partUnknownOld
	case a.DeploymentID != dep:
		f.budget = partAvailable
	case a.IsHealthy():
		f.budget = partNewHealthy
		f.healthyAt = a.DeploymentStatus.Timestamp
	case a.IsUnhealthy():
		f.budget = partNewUnhealthy
	default:
		f.budget = partNewUnknown
	}
	return f
}

// add counts a fact in its group.
func (m *Memo) add(f allocFact, a *structs.Allocation) {
	g := f.g
	if f.skipped {
		return
	}
	if f.notServing {
		g.notServing++
	}
	if !f.plain {
		g.complex++
		return
	}
	g.holders++
	g.parts[f.budget]++
	if g.idxCount[f.idx]++; g.idxCount[f.idx] == 2 {
		g.dups++
	}
	z := g.zone(f.zone)
	switch f.kind {
	case UpdateNone:
		g.ignore++
	case UpdateDestructive:
		g.destructive.add(indexedAlloc{f.idx, a})
		z.destructive.add(indexedAlloc{f.idx, a})
	}
	switch f.budget {
	case partNewUnknown:
		z.newUnknown++
	case partNewUnhealthy:
		z.newUnhealthy++
	}
	if f.budget == partNewHealthy && !g.stale {
		g.noteHealthy(f.healthyAt)
	}
}

// remove takes a fact out of its group.
func (m *Memo) remove(f allocFact, a *structs.Allocation) {
	g := f.g
	if f.skipped {
		return
	}
	if f.notServing {
		g.notServing--
	}
	if !f.plain {
		g.complex--
		return
	}
	g.holders--
	g.parts[f.budget]--
	if g.idxCount[f.idx]--; g.idxCount[f.idx] == 1 {
		g.dups--
	} else if g.idxCount[f.idx] == 0 {
		delete(g.idxCount, f.idx)
	}
	z := g.zone(f.zone)
	switch f.kind {
	case UpdateNone:
		g.ignore--
	case UpdateDestructive:
		g.destructive.remove(indexedAlloc{f.idx, a})
		z.destructive.remove(indexedAlloc{f.idx, a})
	}
	switch f.budget {
	case partNewUnknown:
		z.newUnknown--
	case partNewUnhealthy:
		z.newUnhealthy--
	}
	if f.budget == partNewHealthy && !g.stale && f.healthyAt.Equal(g.lastHealthy) {
		if g.atLast--; g.atLast == 0 {
			g.stale = true
		}
	}
}

// zone returns the tally of one of the group's zones, creating it.
func (g *groupTally) zone(name string) *zoneTally {
	if g.zones == nil {
		g.zones = map[string]*zoneTally{}
	}
	z := g.zones[name]
	if z == nil {
		z = &zoneTally{}
		g.zones[name] = z
	}
	return z
}

// compareIndexID orders allocs as sortAllocs does within a group when IDs
// are unique: by index, then ID.
func compareIndexID(x, y indexedAlloc) int {
	if c := cmp.Compare(x.idx, y.idx); c != 0 {
		return c
	}
	return strings.Compare(x.a.ID, y.a.ID)
}

// noteHealthy counts a new healthy alloc's health time in the latest.
func (g *groupTally) noteHealthy(at time.Time) {
	switch {
	case g.atLast == 0 || at.After(g.lastHealthy):
		g.lastHealthy, g.atLast = at, 1
	case at.Equal(g.lastHealthy):
		g.atLast++
	}
}

// lastHealthyOf returns the latest health time of the group's new healthy
// allocs (budgetInput's LastHealthy), recounting it when the latest one
// left.
func (m *Memo) lastHealthyOf(g *groupTally) time.Time {
	if g.stale {
		g.lastHealthy, g.atLast, g.stale = time.Time{}, 0, false
		for _, e := range m.entries {
			if e.f.g == g && e.f.plain && e.f.budget == partNewHealthy {
				g.noteHealthy(e.f.healthyAt)
			}
		}
	}
	if g.atLast == 0 || !g.lastHealthy.After(time.Time{}) {
		return time.Time{}
	}
	return g.lastHealthy
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
