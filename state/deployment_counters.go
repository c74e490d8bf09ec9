package state

import (
	"slices"
	"time"

	"github.com/droverhq/drover/structs"
)

// deploymentDeltas collects, during one write, what allocation changes add
// to their deployments' counters, so each deployment is copied and written
// once per transaction however many allocs moved.
type deploymentDeltas struct {
	m map[string]map[string]*groupDelta
}

type groupDelta struct {
	placed, healthy, unhealthy int
	canaries                   []string
	healthyAt                  time.Time // latest healthy transition
	// zoneFailed counts the failures by alloc zone (ZoneState.Failed);
	// made on first use.
	zoneFailed map[string]int
}

func newDeploymentDeltas() *deploymentDeltas {
	return &deploymentDeltas{m: map[string]map[string]*groupDelta{}}
}

func (d *deploymentDeltas) group(a *structs.Allocation) *groupDelta {
	groups, ok := d.m[a.DeploymentID]
	if !ok {
		groups = map[string]*groupDelta{}
		d.m[a.DeploymentID] = groups
	}
	g, ok := groups[a.TaskGroup]
	if !ok {
		g = &groupDelta{}
		groups[a.TaskGroup] = g
	}
	return g
}

// placed counts an allocation new to its deployment.
func (d *deploymentDeltas) placed(a *structs.Allocation) {
	g := d.group(a)
	g.placed++
	if a.IsCanary() {
		g.canaries = append(g.canaries, a.ID)
	}
}

// health counts a first health verdict at ts (healthy false: a failure
// of the new version, see UpdateAllocsFromClientTxn), an unhealthy one
// in the alloc's zone too.
func (d *deploymentDeltas) health(a *structs.Allocation, healthy bool, ts time.Time) {
	g := d.group(a)
	if !healthy {
		g.unhealthy++
		if g.zoneFailed == nil {
			g.zoneFailed = map[string]int{}
		}
		g.zoneFailed[a.Zone]++
		return
	}
	g.healthy++
	if ts.After(g.healthyAt) {
		g.healthyAt = ts
	}
}

// flushDeploymentDeltas writes the collected counters, and the pending
// live figures of every deployment (see deployment_live.go), to the active
// deployments they concern; see WriteTxn.flushDeployments.
func (s *Store) flushDeploymentDeltas(t *WriteTxn, d *deploymentDeltas, at int64) error {
	return t.flushDeployments(d, at)
}

// flushDeployments writes the counters collected in d (nil: none) and the
// pending live figures to the active deployments they concern, each
// deployment copied and written once, and only when a figure changed.
// Terminal or unknown deployments and groups are left alone: a terminal
// deployment is never decided on again. A healthy transition moves
// RequireProgressBy to its time + ProgressDeadline when that is later than
// the current one. at (UnixNano) is the deployment's ModifyTime; 0 keeps
// it.
func (t *WriteTxn) flushDeployments(d *deploymentDeltas, at int64) error {
	var ids []string
	if d != nil {
		for id := range d.m {
			ids = append(ids, id)
		}
	}
	for id := range t.live {
		if d == nil || d.m[id] == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		live := t.live[id]
		delete(t.live, id)
		dep, err := t.reader().DeploymentByID(id)
		if err != nil {
			return err
		}
		if !dep.Active() {
			continue
		}
		c := dep.Copy()
		changed := false
		if d != nil {
			for name, gd := range d.m[id] {
				st := c.TaskGroups[name]
				if st == nil {
					continue
				}
				changed = true
				st.PlacedAllocs += gd.placed
				st.PlacedCanaries = append(st.PlacedCanaries, gd.canaries...)
				st.HealthyAllocs += gd.healthy
				st.UnhealthyAllocs += gd.unhealthy
				for zone, n := range gd.zoneFailed {
					// A failure counts against its zone's budget
					// (ZoneState.Failed), as UnhealthyAllocs.
					if z := st.Zone(zone); z != nil {
						z.Failed += n
					}
				}
				if !gd.healthyAt.IsZero() && st.ProgressDeadline > 0 {
					if by := gd.healthyAt.Add(st.ProgressDeadline); by.After(st.RequireProgressBy) {
						st.RequireProgressBy = by
					}
				}
			}
		}
		if live != nil {
			moved, err := t.applyLive(c, live)
			if err != nil {
				return err
			}
			changed = changed || moved
		}
		if changed {
			if err := t.putDeployment(c, at); err != nil {
				return err
			}
		}
	}
	return nil
}
