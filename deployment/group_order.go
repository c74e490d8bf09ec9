package deployment

import (
	"sort"
	"time"

	"github.com/droverhq/drover/structs"
)

// Groups one at a time (website/rollouts.md, "Groups one at a time"). The
// scheduler writes each group's Order and first State when it creates the
// deployment (or adds a group to it); a group that is not "rolling" or
// "done" starts nothing. Decide moves the groups on through the status
// update's GroupStates and GroupDoneAt:
//   - a rolling group that is done (promoted if it has canaries, and
//     DesiredTotal healthy allocs) turns "done", with DoneAt = now; it
//     does so even while the deployment is paused;
//   - on a running deployment, the first waiting group (by Order) turns
//     "rolling", with a pass, once every group before it is "done" and
//     pause_between_groups (the job's update block) has passed since the
//     DoneAt of the group just before it (WakeAt for that time);
//   - at that moment every earlier group must still be fully serving (its
//     live healthy allocs at least DesiredTotal, counted from the allocs
//     or from the figures): the first one that is not fails the
//     deployment per its on_failure action (a failure of kind
//     failureGroupServing) and nothing starts (a group started in the same
//     decision and done at once keeps its "done");
//   - a group with a failure (any kind) turns "failed"; a waiting group
//     stays "waiting" whatever its failures (a group's first version
//     places at once), and neither its progress deadline nor max_unhealthy
//     count until it rolls;
//   - a resume (Pause, ResumedGroups) turns a failed group "done" again
//     when it had been done (DoneAt set): the next pass checks again that
//     it serves fully before the next group starts, and pauses again if
//     not; any other failed group turns "rolling" again.
// The State "paused" is not used by the watcher: the deployment's status
// says when it is paused, and its groups keep their states.

// groupWork is the ordered groups of a deployment as a decision moves
// them: working copies of State and DoneAt, compared with the
// deployment's at the end.
type groupWork struct {
	// groups are the groups with an Order, by Order then name.
	groups []*orderedGroup
	// pause is the job's pause_between_groups.
	pause time.Duration
}

// orderedGroup is one group of a deployment that rolls its groups in
// order.
type orderedGroup struct {
	g      *groupView
	state  string
	doneAt time.Time
}

// newGroupWork returns the groups of the deployment that have an Order
// (none when its groups do not roll in order), and links each view to its
// entry.
func newGroupWork(groups []*groupView, job *structs.Job) *groupWork {
	w := &groupWork{}
	if job != nil && job.Update != nil {
		w.pause = job.Update.PauseBetweenGroups
	}
	for _, g := range groups {
		if g.state.Order <= 0 {
			continue
		}
		og := &orderedGroup{g: g, state: g.state.State, doneAt: g.state.DoneAt}
		g.order = og
		w.groups = append(w.groups, og)
	}
	sort.SliceStable(w.groups, func(i, j int) bool { return w.groups[i].g.state.Order < w.groups[j].g.state.Order })
	return w
}

// waiting reports whether the group waits its turn (and so starts
// nothing, and none of its deadlines run).
func (og *orderedGroup) waiting() bool {
	return og != nil && og.state == structs.GroupStateWaiting
}

// progress turns the rolling groups that are done "done" at now.
func (w *groupWork) progress(now time.Time) {
	for _, og := range w.groups {
		og.progress(now)
	}
}

func (og *orderedGroup) progress(now time.Time) {
	if og.state == structs.GroupStateRolling && og.g.done() {
		og.state = structs.GroupStateDone
		og.doneAt = now
	}
}

// next returns the index of the first waiting group and the group it
// waits for (the one just before it); ok is false when no group waits or
// the first one is first of all (it then starts at once).
func (w *groupWork) next() (i int, ok bool) {
	for i, og := range w.groups {
		if og.state == structs.GroupStateWaiting {
			return i, true
		}
	}
	return 0, false
}

// ready reports whether the waiting group i may start at now, as far as
// the earlier groups' states and the pause go, and the time it may start
// at (zero for the first group). ready is false when an earlier group is
// not done.
func (w *groupWork) ready(i int) (at time.Time, ready bool) {
	for _, og := range w.groups[:i] {
		if og.state != structs.GroupStateDone {
			return time.Time{}, false
		}
	}
	if i == 0 {
		return time.Time{}, true
	}
	return w.groups[i-1].doneAt.Add(w.pause), true
}

// servingFailures lists, on a running deployment, the earlier group that
// is no longer fully serving when the first waiting group would start
// now: every group before it done, the pause over. At most one failure:
// the first such group by Order.
func (w *groupWork) servingFailures(now time.Time) []failure {
	i, ok := w.next()
	if !ok {
		return nil
	}
	at, ready := w.ready(i)
	if !ready || now.Before(at) {
		return nil
	}
	waiting := w.groups[i].g.name
	for _, og := range w.groups[:i] {
		g := og.g
		if g.healthy < g.state.DesiredTotal {
			return []failure{{group: g, kind: failureGroupServing,
				pause: structs.GroupServingPauseDescription(g.name, g.healthy, g.state.DesiredTotal, waiting),
				fail:  structs.GroupServingDescription(g.name, g.healthy, g.state.DesiredTotal, waiting)}}
		}
	}
	return nil
}

// start turns the waiting groups that may start at now "rolling" (one
// started and done at once lets the next one start too, after its
// pause); it returns the time the next group waits for (zero if none)
// and whether one started. Call it on a running deployment only, after
// servingFailures found none.
func (w *groupWork) start(now time.Time) (wake time.Time, started bool) {
	for {
		i, ok := w.next()
		if !ok {
			return time.Time{}, started
		}
		at, ready := w.ready(i)
		if !ready {
			return time.Time{}, started
		}
		if now.Before(at) {
			return at, started
		}
		for _, og := range w.groups[:i] {
			if og.g.healthy < og.g.state.DesiredTotal {
				// Not fully serving: servingFailures' case.
				return time.Time{}, started
			}
		}
		og := w.groups[i]
		og.state = structs.GroupStateRolling
		og.progress(now)
		started = true
	}
}

// waits returns the first waiting group and the group it waits for (the
// one just before it in Order); ok is false when no group waits behind
// another.
func (w *groupWork) waits() (group, earlier string, ok bool) {
	i, ok := w.next()
	if !ok || i == 0 {
		return "", "", false
	}
	return w.groups[i].g.name, w.groups[i-1].g.name, true
}

// markFailed turns the groups of the failures fs "failed", except those
// that wait their turn.
func (w *groupWork) markFailed(fs []failure) {
	for _, f := range fs {
		if og := f.group.order; og != nil && og.state != structs.GroupStateWaiting {
			og.state = structs.GroupStateFailed
		}
	}
}

// allDone reports whether every ordered group is "done".
func (w *groupWork) allDone() bool {
	for _, og := range w.groups {
		if og.state != structs.GroupStateDone {
			return false
		}
	}
	return true
}

// into adds the groups' changes to dec: the states and DoneAt that differ
// from the deployment's.
func (w *groupWork) into(dec Decision) Decision {
	for _, og := range w.groups {
		s := og.g.state
		if og.state != s.State {
			if dec.GroupStates == nil {
				dec.GroupStates = map[string]string{}
			}
			dec.GroupStates[og.g.name] = og.state
		}
		if !og.doneAt.Equal(s.DoneAt) {
			if dec.GroupDoneAt == nil {
				dec.GroupDoneAt = map[string]time.Time{}
			}
			dec.GroupDoneAt[og.g.name] = og.doneAt
		}
	}
	return dec
}

// ResumedGroups returns what resuming d does to its ordered groups, as
// the map for the status update (structs.DeploymentStatusUpdate.
// GroupStates): a failed group that had been done (DoneAt set) is "done"
// again — the next pass checks again that it serves fully before the next
// group starts — and any other failed group "rolling". Nil when d is not
// paused or has no failed group.
func ResumedGroups(d *structs.Deployment) map[string]string {
	if d == nil || d.Status != structs.DeploymentStatusPaused {
		return nil
	}
	var out map[string]string
	for name, s := range d.TaskGroups {
		if s == nil || s.Order <= 0 || s.State != structs.GroupStateFailed {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = structs.GroupStateRolling
		if !s.DoneAt.IsZero() {
			out[name] = structs.GroupStateDone
		}
	}
	return out
}

// waitingGroups returns the first group of d that waits its turn and the
// group just before it in Order, from d's stored states.
func waitingGroups(d *structs.Deployment) (group, earlier string, ok bool) {
	var views []*groupView
	for name, s := range d.TaskGroups {
		if s != nil {
			views = append(views, &groupView{name: name, state: s})
		}
	}
	sort.Slice(views, func(i, j int) bool { return views[i].name < views[j].name })
	return newGroupWork(views, nil).waits()
}
