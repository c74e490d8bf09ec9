package deployment

import (
	"sort"
	"time"

	"github.com/droverhq/drover/structs"
)

// groupView is one task group of a deployment as seen through its allocs.
type groupView struct {
	name  string
	state *structs.DeploymentState
	// created is the deployment's creation time, the fallback start of
	// the progress deadline.
	created time.Time
	// healthy counts live allocations (not terminal) reported healthy.
	healthy int
	// healthyCanaries counts the live healthy ones placed as canaries.
	healthyCanaries int
	// update is the group's update block in the deployment's job version;
	// nil when the job is unknown (part C's policies are then off).
	update *structs.UpdateStrategy
	// zones are the group's zones as the decision moves them, when it
	// rolls out by zones (zones.go); nil otherwise.
	zones *zoneGroup
	// order is the group's place in a deployment that rolls its groups
	// in order, as the decision moves it (group_order.go); nil otherwise.
	order *orderedGroup
	// analyses are those the deployment runs for the group
	// (analysis.go).
	analyses []*structs.Analysis
}

// waiting reports whether the group waits its turn in a deployment that
// rolls its groups in order: it starts nothing, has no canaries to
// promote yet, and neither its progress deadline nor max_unhealthy runs.
func (g *groupView) waiting() bool {
	if g.order != nil {
		return g.order.waiting()
	}
	return g.state.Order > 0 && g.state.State == structs.GroupStateWaiting
}

// action is the group's failure action (C.2): the deployment's record of
// on_failure; for a deployment stored before it had one, on_failure of
// the job's update block, else "revert" with auto_revert, else "fail".
// An unknown word (validation refuses it) fails.
func (g *groupView) action() string {
	a := g.state.OnFailure
	if a == "" && g.update != nil {
		a = g.update.OnFailure
	}
	if a == "" && g.state.AutoRevert {
		a = structs.OnFailureRevert
	}
	switch a {
	case structs.OnFailurePause, structs.OnFailureRevert:
		return a
	}
	return structs.OnFailureFail
}

// maxFailed is the group's max_failed for its desired total (C.2); ok is
// false when it is not set.
func (g *groupView) maxFailed() (n int, ok bool) {
	return g.update.MaxFailedFor(g.state.DesiredTotal)
}

// failures is the number of allocs of the new version that failed during
// the deployment: the cumulative first-verdict counter UnhealthyAllocs
// (an alloc that dies is marked unhealthy at once).
func (g *groupView) failures() int { return g.state.UnhealthyAllocs }

// toleratesFailures reports whether an unhealthy new alloc leaves the
// deployment running (it is replaced per its reschedule policy): with
// max_failed set, or a zones disruption_budget on a group whose zones the
// deployment records (not a first version's), whose thresholds decide
// instead; or in a group that pauses on failure and was paused on every
// failure so far (a resume continues past them).
func (g *groupView) toleratesFailures() bool {
	if _, ok := g.maxFailed(); ok {
		return true
	}
	if g.update != nil && g.update.Zones != nil && g.update.Zones.DisruptionBudget != nil && len(g.state.Zones) > 0 {
		return true
	}
	return g.action() == structs.OnFailurePause && g.state.FailuresAtPause > 0 &&
		g.failures() <= g.state.FailuresAtPause
}

// done reports whether the group reached its goal: promoted if it has
// canaries, and at least DesiredTotal healthy allocations.
func (g *groupView) done() bool {
	if g.state.DesiredCanaries > 0 && !g.state.Promoted {
		return false
	}
	// A healthy batch waits for its analysis run (analysis.go).
	return g.healthy >= g.state.DesiredTotal && !g.analysisHolds()
}

// awaitingPromotion reports whether the group has unpromoted canaries
// (a group waiting its turn has none yet).
func (g *groupView) awaitingPromotion() bool {
	return g.state.DesiredCanaries > 0 && !g.state.Promoted && !g.waiting()
}

// canariesHealthy reports whether every desired canary is healthy.
func (g *groupView) canariesHealthy() bool {
	return g.healthyCanaries >= g.state.DesiredCanaries
}

// deadline returns the group's progress deadline: RequireProgressBy, or,
// should the store not have set it, the deployment's creation time plus
// progress_deadline, so that the deadline holds even then; while its next
// zone waits out pause_between_zones, no earlier than the zone's start
// plus progress_deadline (the pause is not a lack of progress). Zero when
// the group has none.
func (g *groupView) deadline() time.Time {
	s := g.state
	var dl time.Time
	switch {
	case s.ProgressDeadline <= 0:
		return time.Time{}
	case !s.RequireProgressBy.IsZero():
		dl = s.RequireProgressBy
	case !g.created.IsZero():
		dl = g.created.Add(s.ProgressDeadline)
	default:
		return time.Time{}
	}
	if at := g.analysisEnd(); !at.IsZero() {
		if by := at.Add(s.ProgressDeadline); by.After(dl) {
			dl = by
		}
	}
	if at := g.zones.waitsUntil(); !at.IsZero() {
		if by := at.Add(s.ProgressDeadline); by.After(dl) {
			dl = by
		}
	}
	return dl
}

// pastDeadline reports whether the group's progress deadline is reached at
// now. A deadline is reached at the instant it names, so that a timer
// armed for WakeAt finds it reached.
func (g *groupView) pastDeadline(now time.Time) bool {
	dl := g.deadline()
	return !dl.IsZero() && !now.Before(dl)
}

// failsDeadline reports whether the group fails on its progress deadline:
// the deadline is reached and the group is neither done, nor holding
// healthy canaries for promotion, nor waiting its turn.
func (g *groupView) failsDeadline(now time.Time) bool {
	if !g.pastDeadline(now) || g.done() || g.waiting() || g.analysisRunning() {
		return false
	}
	return !(g.awaitingPromotion() && g.canariesHealthy())
}

// viewGroups builds a view of every group of the observed deployment,
// sorted by name so that decisions come out in a stable order. The
// healthy counts come from the allocations, or from the deployment's live
// figures when obs.FromFigures.
func viewGroups(obs Observation) []*groupView {
	d := obs.Deployment
	allocs := obs.Allocs
	if obs.FromFigures {
		allocs = nil
	}
	byName := make(map[string]*groupView, len(d.TaskGroups))
	canary := make(map[string]bool)
	var created time.Time
	if d.CreateTime != 0 {
		created = time.Unix(0, d.CreateTime).UTC()
	}
	for name, s := range d.TaskGroups {
		if s == nil {
			continue
		}
		g := &groupView{name: name, state: s, created: created}
		if tg := obs.Job.LookupTaskGroup(name); tg != nil {
			g.update = tg.Update
		}
		byName[name] = g
		if obs.FromFigures {
			g.healthy, g.healthyCanaries = s.LiveHealthyAllocs, s.LiveHealthyCanaries
			continue
		}
		for _, id := range s.PlacedCanaries {
			canary[id] = true
		}
	}
	for _, a := range allocs {
		if a == nil {
			continue
		}
		g := byName[a.TaskGroup]
		if g == nil || a.TerminalStatus() || !a.IsHealthy() {
			continue
		}
		g.healthy++
		if canary[a.ID] || a.IsCanary() {
			g.healthyCanaries++
		}
	}
	out := make([]*groupView, 0, len(byName))
	for _, g := range byName {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
