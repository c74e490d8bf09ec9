package deployment

import (
	"sort"
	"time"

	"github.com/droverhq/drover/structs"
)

// Zones (website/rollouts.md, "Zones"). The scheduler writes a group's
// zones, in rollout order, when it creates the group's deployment state;
// the store keeps each zone's figures (Healthy, InFlight, Failed) in the
// transactions that write the allocs. Decide moves the zones on through
// the status update's maps:
//   - a rolling zone whose healthy new allocs reach its success threshold
//     gets DoneAt = now (once); it is "done" once all its allocs are new
//     and healthy (Healthy >= Size);
//   - zone_by_zone: on a running deployment, the first waiting zone turns
//     "rolling" once every zone before it is done or has DoneAt, and
//     pause_between_zones has passed since the DoneAt of the zone just
//     before it (WakeAt for that time); meanwhile the group's progress
//     deadline does not run out;
//   - a zone whose failures reach its disruption budget is "failed", and
//     the deployment takes its on_failure action (a failure of kind
//     failureZoneBudget); a resume (Pause) turns it "rolling" again and
//     clears its failures.

// zoneWork is the zones of the groups that roll out by zones, as a
// decision moves them: working copies, compared with the deployment's at
// the end.
type zoneWork struct {
	groups []*zoneGroup
}

// zoneGroup is one group's zones in a decision.
type zoneGroup struct {
	g *groupView
	z *structs.ZoneStrategy
	// zones are copies of the group's zones, in rollout order; orig the
	// deployment's.
	zones []structs.ZoneState
	orig  []*structs.ZoneState
}

// newZoneWork returns the zones of the groups (sorted by name) whose
// update block has zones and whose deployment state lists them.
func newZoneWork(groups []*groupView) *zoneWork {
	w := &zoneWork{}
	for _, g := range groups {
		if g.update == nil || g.update.Zones == nil || len(g.state.Zones) == 0 {
			continue
		}
		zg := &zoneGroup{g: g, z: g.update.Zones}
		for _, z := range g.state.Zones {
			if z != nil {
				zg.orig = append(zg.orig, z)
				zg.zones = append(zg.zones, *z)
			}
		}
		g.zones = zg
		w.groups = append(w.groups, zg)
	}
	return w
}

// budget is the disruption budget of a zone (at least 1); ok is false
// without one.
func (zg *zoneGroup) budget(z *structs.ZoneState) (int, bool) {
	n, ok := zg.z.BudgetFor(z.Size)
	return max(n, 1), ok
}

// progress records the rolling zones that reached their success
// threshold (DoneAt) or their end (done) at now.
func (w *zoneWork) progress(now time.Time) {
	for _, zg := range w.groups {
		for i := range zg.zones {
			zg.progressZone(&zg.zones[i], now)
		}
	}
}

func (zg *zoneGroup) progressZone(z *structs.ZoneState, now time.Time) {
	if z.State != structs.ZoneStateRolling {
		return
	}
	if z.DoneAt.IsZero() && z.Healthy >= zg.z.ThresholdFor(z.Size) {
		z.DoneAt = now
	}
	if z.Healthy >= z.Size {
		z.State = structs.ZoneStateDone
	}
}

// nextStart is when the group's first waiting zone may start rolling
// (zone_by_zone): DoneAt + pause_between_zones of the zone before it,
// once every earlier zone is done or has DoneAt. ok is false when no zone
// waits or an earlier one has not reached its threshold.
func (zg *zoneGroup) nextStart() (i int, at time.Time, ok bool) {
	if !zg.z.ByZone() {
		return 0, time.Time{}, false
	}
	for i := range zg.zones {
		z := &zg.zones[i]
		if z.State == structs.ZoneStateWaiting {
			if i == 0 {
				return 0, time.Time{}, true
			}
			prev := zg.zones[i-1]
			return i, prev.DoneAt.Add(zg.z.PauseBetweenZones), true
		}
		if z.State != structs.ZoneStateDone && z.DoneAt.IsZero() {
			return 0, time.Time{}, false
		}
	}
	return 0, time.Time{}, false
}

// start turns the waiting zones that may start at now "rolling" (a zone
// started and at once at its threshold lets the next one start too); it
// returns the earliest time a zone waits for, and whether one started.
func (w *zoneWork) start(now time.Time) (wake time.Time, started bool) {
	for _, zg := range w.groups {
		if zg.g.analysisHolds() {
			// The next zone waits for the run after the zone's last
			// batch (analysis.go).
			continue
		}
		for {
			i, at, ok := zg.nextStart()
			if !ok {
				break
			}
			if now.Before(at) {
				if wake.IsZero() || at.Before(wake) {
					wake = at
				}
				break
			}
			zg.zones[i].State = structs.ZoneStateRolling
			zg.progressZone(&zg.zones[i], now)
			started = true
		}
	}
	return wake, started
}

// waitsUntil is, for a group whose next zone waits out
// pause_between_zones, when that zone starts; zero otherwise. The group's
// progress deadline runs from then at the earliest.
func (zg *zoneGroup) waitsUntil() time.Time {
	if zg == nil {
		return time.Time{}
	}
	_, at, ok := zg.nextStart()
	if !ok {
		return time.Time{}
	}
	return at
}

// budgetFailures lists the zones whose failures reached their disruption
// budget and that are not yet "failed", in rollout order. A zone that has
// not started (failures of unhealthy_first's first batch, which may cross
// zones) stays "waiting": its budget counts once it rolls.
func (zg *zoneGroup) budgetFailures() []failure {
	var out []failure
	for i := range zg.zones {
		z := &zg.zones[i]
		n, ok := zg.budget(z)
		if !ok || z.State == structs.ZoneStateFailed || z.State == structs.ZoneStateWaiting || z.Failed < n {
			continue
		}
		out = append(out, failure{group: zg.g, kind: failureZoneBudget, zone: z.Name,
			pause: structs.ZoneBudgetPauseDescription(z.Failed, z.Name, n),
			fail:  structs.ZoneBudgetDescription(z.Failed, z.Name, n)})
	}
	return out
}

// markFailed turns the zones of the budget failures among fs "failed".
func (w *zoneWork) markFailed(fs []failure) {
	for _, f := range fs {
		if f.kind != failureZoneBudget || f.group.zones == nil {
			continue
		}
		zg := f.group.zones
		for i := range zg.zones {
			if zg.zones[i].Name == f.zone {
				zg.zones[i].State = structs.ZoneStateFailed
			}
		}
	}
}

// into adds the zones' changes to dec: the states and DoneAt that differ
// from the deployment's.
func (w *zoneWork) into(dec Decision) Decision {
	for _, zg := range w.groups {
		name := zg.g.name
		for i, z := range zg.zones {
			o := zg.orig[i]
			if z.State != o.State {
				if dec.ZoneStates == nil {
					dec.ZoneStates = map[string]map[string]string{}
				}
				if dec.ZoneStates[name] == nil {
					dec.ZoneStates[name] = map[string]string{}
				}
				dec.ZoneStates[name][z.Name] = z.State
			}
			if !z.DoneAt.Equal(o.DoneAt) {
				if dec.ZoneDoneAt == nil {
					dec.ZoneDoneAt = map[string]map[string]time.Time{}
				}
				if dec.ZoneDoneAt[name] == nil {
					dec.ZoneDoneAt[name] = map[string]time.Time{}
				}
				dec.ZoneDoneAt[name][z.Name] = z.DoneAt
			}
		}
	}
	return dec
}

// ResumedZones returns what resuming d does to its zones: each zone whose
// disruption budget was reached ("failed") turns "rolling" again and its
// failures are cleared (the operator accepted them), as maps for the
// status update (structs.DeploymentStatusUpdate.ZoneStates and
// ZoneFailedReset). Both are nil when d is not paused or has no failed
// zone.
func ResumedZones(d *structs.Deployment) (states map[string]map[string]string, reset map[string][]string) {
	if d == nil || d.Status != structs.DeploymentStatusPaused {
		return nil, nil
	}
	names := make([]string, 0, len(d.TaskGroups))
	for name := range d.TaskGroups {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := d.TaskGroups[name]
		if s == nil {
			continue
		}
		for _, z := range s.Zones {
			if z == nil || z.State != structs.ZoneStateFailed {
				continue
			}
			if states == nil {
				states, reset = map[string]map[string]string{}, map[string][]string{}
			}
			if states[name] == nil {
				states[name] = map[string]string{}
			}
			states[name][z.Name] = structs.ZoneStateRolling
			reset[name] = append(reset[name], z.Name)
		}
	}
	return states, reset
}
