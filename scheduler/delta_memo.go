package scheduler

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/droverhq/drover/structs"
)

// The memo of a job's passes (delta.go): what it keeps of each alloc and
// of each group, and how the allocs whose pointer changed since the last
// pass bring it up to date.

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
