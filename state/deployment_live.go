package state

import (
	"fmt"
	"maps"
	"strings"

	"github.com/droverhq/drover/structs"
)

// Live figures of deployments. Every write of the allocs table goes
// through putAlloc or deleteAlloc, which know the allocation's old and
// new versions: the difference of their shares (see
// structs.AllocDeploymentShare) is added to a per-transaction delta of
// each deployment concerned, and the next flush (flushDeployments, called
// by the writes that also move Nomad's counters, and by Commit for the
// rest) applies it to the active deployments, one copy and one write per
// deployment. The figures of a group's zones (ZoneState.Healthy and
// InFlight, for a group that rolls out by zones) are kept the same way,
// by each allocation's Zone. A write that changes no share (a client reporting "running"
// again, a desired transition) leaves the deployment row alone, so that
// whoever watches it is not woken.

// liveDelta is what the allocation writes of a transaction have added to
// one deployment's live figures and not yet written.
type liveDelta struct {
	groups map[string]*groupLive
	// zones is the change of zones' Healthy and InFlight, by group and
	// alloc zone (zoneDeltas). Allocs of groups without zones count here
	// too (the flush, which reads the deployment, drops them).
	zones zoneDeltas
	// added and removed are the highest health indexes of the shares
	// added and removed.
	added, removed uint64
	// unhealthy is the change of each group's UnhealthyAllocIDs: +1 for
	// an alloc marked unhealthy, -1 for one no longer (or deleted).
	unhealthy map[string]map[string]int
}

// groupLive is the change of one group's live figures.
type groupLive struct{ healthy, canaries, unhealthy int }

// zoneKey names a zone of a group.
type zoneKey struct{ group, zone string }

// zoneLive is the change of one zone's live figures (ZoneState.Healthy
// and InFlight).
type zoneLive struct{ healthy, inFlight int }

// zoneDeltas holds the zone changes of a transaction's writes to one
// deployment. A transaction touches few zones of a deployment (most one
// or two), so they are kept in a list, the first two inline (no
// allocation on the path of a single alloc write), searched in order; an
// index is built once the list grows long (zones of one node each).
type zoneDeltas struct {
	list  []zoneDelta
	buf   [2]zoneDelta
	index map[zoneKey]int
}

type zoneDelta struct {
	k zoneKey
	d zoneLive
}

// zoneIndexAt is the list length from which zoneDeltas keeps an index.
const zoneIndexAt = 16

// at returns the change of zone k, added as zero if new. The pointer is
// valid until the next call.
func (z *zoneDeltas) at(k zoneKey) *zoneLive {
	if z.index != nil {
		if i, ok := z.index[k]; ok {
			return &z.list[i].d
		}
	} else {
		for i := range z.list {
			if z.list[i].k == k {
				return &z.list[i].d
			}
		}
	}
	if z.list == nil {
		z.list = z.buf[:0]
	}
	z.list = append(z.list, zoneDelta{k: k})
	switch n := len(z.list); {
	case z.index != nil:
		z.index[k] = n - 1
	case n >= zoneIndexAt:
		z.index = make(map[zoneKey]int, 2*n)
		for i, e := range z.list {
			z.index[e.k] = i
		}
	}
	return &z.list[len(z.list)-1].d
}

// add adds (sign 1) or removes (sign -1) share s of alloc id.
func (l *liveDelta) add(s structs.AllocDeploymentShare, sign int, id string) {
	if s.Healthy || s.InFlight {
		z := l.zones.at(zoneKey{s.Group, s.Zone})
		if s.Healthy {
			z.healthy += sign
		} else {
			z.inFlight += sign
		}
	}
	if !s.Healthy && !s.Unhealthy {
		return
	}
	g := l.groups[s.Group]
	if g == nil {
		g = &groupLive{}
		l.groups[s.Group] = g
	}
	if s.Healthy {
		g.healthy += sign
		if s.Canary {
			g.canaries += sign
		}
		if sign > 0 {
			l.added = max(l.added, s.HealthIndex)
		} else {
			l.removed = max(l.removed, s.HealthIndex)
		}
	}
	if s.Unhealthy {
		g.unhealthy += sign
		if l.unhealthy == nil {
			l.unhealthy = map[string]map[string]int{}
		}
		ids := l.unhealthy[s.Group]
		if ids == nil {
			ids = map[string]int{}
			l.unhealthy[s.Group] = ids
		}
		ids[id] += sign
	}
}

func (t *WriteTxn) liveDeltaOf(deploymentID string) *liveDelta {
	if t.live == nil {
		t.live = map[string]*liveDelta{}
	}
	l := t.live[deploymentID]
	if l == nil {
		l = &liveDelta{groups: map[string]*groupLive{}}
		t.live[deploymentID] = l
	}
	return l
}

// putAlloc inserts a, the new version of old (nil for a new allocation),
// and records the change of their deployments' live figures. It is the
// only way allocations are written (insert refuses them).
func (t *WriteTxn) putAlloc(old, a *structs.Allocation) error {
	// Every write of an alloc carries the write's index (its callers set
	// it too): the scheduler's kept node usage tells an alloc's versions
	// apart by it (scheduler/nodeusage.go).
	a.ModifyIndex = t.index
	if err := t.txn.Insert(TableAllocs, a); err != nil {
		return fmt.Errorf("state: insert into %s: %w", TableAllocs, err)
	}
	t.tables[TableAllocs] = true
	t.noteAllocWrite(a)
	t.countShares(old, a)
	t.countAllocSummary(old, a)
	t.markNodeAllocs(old, a)
	t.digestAlloc(old, a)
	t.markServices(old, a)
	return nil
}

// deleteAlloc deletes a stored allocation and records the change of its
// deployment's live figures.
func (t *WriteTxn) deleteAlloc(a *structs.Allocation) error {
	if err := t.delete(TableAllocs, a); err != nil {
		return err
	}
	t.noteAllocWrite(a)
	t.countShares(a, nil)
	t.countAllocSummary(a, nil)
	t.markNodeAllocs(a, nil)
	t.digestAlloc(a, nil)
	t.markServices(a, nil)
	return nil
}

// countShares records that old (nil: none) was replaced by a (nil:
// deleted).
func (t *WriteTxn) countShares(old, a *structs.Allocation) {
	var was, is structs.AllocDeploymentShare
	if old != nil && old.DeploymentID != "" {
		was = old.DeploymentShare(t.placedCanary(old.DeploymentID))
	}
	if a != nil && a.DeploymentID != "" {
		is = a.DeploymentShare(t.placedCanary(a.DeploymentID))
	}
	if old != nil && a != nil && old.DeploymentID == a.DeploymentID && was == is {
		return
	}
	if old != nil && old.DeploymentID != "" {
		t.liveDeltaOf(old.DeploymentID).add(was, -1, old.ID)
	}
	if a != nil && a.DeploymentID != "" {
		t.liveDeltaOf(a.DeploymentID).add(is, 1, a.ID)
	}
}

// placedCanary returns the predicate of the deployment's placed canaries,
// read from the deployment as it stands in the transaction. The IDs are
// read once per transaction and deployment (and again after the
// deployment is written), and only when an allocation is healthy but not
// flagged as a canary.
func (t *WriteTxn) placedCanary(deploymentID string) func(string) bool {
	return func(id string) bool {
		if t.canaries == nil {
			t.canaries = map[string]map[string]bool{}
		}
		ids, ok := t.canaries[deploymentID]
		if !ok {
			ids = map[string]bool{}
			if d, err := t.reader().DeploymentByID(deploymentID); err == nil && d != nil {
				for _, s := range d.TaskGroups {
					if s == nil {
						continue
					}
					for _, c := range s.PlacedCanaries {
						ids[c] = true
					}
				}
			}
			t.canaries[deploymentID] = ids
		}
		return ids[id]
	}
}

// applyLive applies the pending delta of c's live figures (c is the
// caller's copy of an active deployment) and reports whether a figure
// changed. When a removed share may have held the highest health index,
// the figures are counted again from the allocations instead.
func (t *WriteTxn) applyLive(c *structs.Deployment, l *liveDelta) (bool, error) {
	if l.removed > 0 && l.removed >= c.HealthIndex {
		before := liveFigures(c)
		if err := t.recountLive(c); err != nil {
			return false, err
		}
		return !equalFigures(before, liveFigures(c)), nil
	}
	changed := false
	for name, g := range l.groups {
		st := c.TaskGroups[name]
		if st == nil || *g == (groupLive{}) {
			continue
		}
		st.LiveHealthyAllocs += g.healthy
		st.LiveHealthyCanaries += g.canaries
		st.MarkedUnhealthyAllocs += g.unhealthy
		changed = true
	}
	for name, ids := range l.unhealthy {
		st := c.TaskGroups[name]
		if st == nil {
			continue
		}
		for id, n := range ids {
			if n != 0 && st.SetUnhealthyID(id, n > 0) {
				changed = true
			}
		}
	}
	for _, e := range l.zones.list {
		k, d := e.k, e.d
		if d == (zoneLive{}) {
			continue
		}
		st := c.TaskGroups[k.group]
		if st == nil || len(st.Zones) == 0 {
			continue
		}
		if z := st.Zone(k.zone); z != nil {
			z.Healthy += d.healthy
			z.InFlight += d.inFlight
			changed = true
		}
	}
	if l.added > c.HealthIndex {
		c.HealthIndex = l.added
		changed = true
	}
	return changed, nil
}

// recountLive sets c's live figures (c is the caller's copy) from the
// deployment's allocations as they stand in the transaction, and drops
// the pending delta of c, which the count includes.
func (t *WriteTxn) recountLive(c *structs.Deployment) error {
	allocs, err := t.reader().deploymentAllocs(c)
	if err != nil {
		return err
	}
	c.CountLiveFigures(allocs)
	delete(t.live, c.ID)
	return nil
}

// figures is a deployment's live figures, for comparison.
type figures struct {
	index  uint64
	groups map[string]groupLive
	zones  map[zoneKey]zoneLive
	// unhealthy holds each group's UnhealthyAllocIDs, joined.
	unhealthy map[string]string
}

func liveFigures(d *structs.Deployment) figures {
	f := figures{index: d.HealthIndex, groups: make(map[string]groupLive, len(d.TaskGroups))}
	for name, s := range d.TaskGroups {
		if s == nil {
			continue
		}
		f.groups[name] = groupLive{s.LiveHealthyAllocs, s.LiveHealthyCanaries, s.MarkedUnhealthyAllocs}
		if len(s.UnhealthyAllocIDs) > 0 {
			if f.unhealthy == nil {
				f.unhealthy = map[string]string{}
			}
			f.unhealthy[name] = strings.Join(s.UnhealthyAllocIDs, ",")
		}
		for _, z := range s.Zones {
			if z == nil {
				continue
			}
			if f.zones == nil {
				f.zones = map[zoneKey]zoneLive{}
			}
			f.zones[zoneKey{name, z.Name}] = zoneLive{z.Healthy, z.InFlight}
		}
	}
	return f
}

func equalFigures(a, b figures) bool {
	if a.index != b.index || len(a.groups) != len(b.groups) || len(a.zones) != len(b.zones) || !maps.Equal(a.unhealthy, b.unhealthy) {
		return false
	}
	for name, g := range a.groups {
		if h, ok := b.groups[name]; !ok || h != g {
			return false
		}
	}
	for k, z := range a.zones {
		if y, ok := b.zones[k]; !ok || y != z {
			return false
		}
	}
	return true
}
