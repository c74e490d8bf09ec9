package deployment

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/droverhq/drover/structs"
)

// Decide returns what should happen to the observed deployment at obs.Now.
// It is a pure function of its input: no clock, no I/O, no randomness.
// Terminal deployments (and a nil one) get the zero Decision.
//
// Rules, in order of precedence:
//   - the job was stopped or purged, or a newer version was registered:
//     the deployment is cancelled;
//   - a multi-region deployment that is pending or blocked waits: the
//     regions' rollout moves it on (DecideRegion);
//   - failures, each in a group (sorted by name) and in this order:
//     an unhealthy allocation in a group with progress_deadline = 0, or
//     one with no reschedule attempts left ("unhealthy allocations"),
//     except in a group that tolerates failures (max_failed or a zones
//     disruption_budget set, or resumed after a pause on them);
//     more new allocs failed (the group's UnhealthyAllocs) than max_failed
//     and than at the last pause on a failure (FailuresAtPause);
//     on a running deployment, more of the job's allocs of the group not
//     serving (obs.NotServing) than max_unhealthy while the group is not
//     done;
//     a zone whose failures reached its disruption budget (the zone
//     turns "failed");
//     on a running deployment, a group past its require_progress_by,
//     unless it is done or holds healthy canaries waiting for promotion
//     (while its next zone waits out pause_between_zones, the deadline
//     runs from that zone's start);
//     on a running deployment of a job that rolls its groups in order,
//     an earlier group no longer fully serving when the next group would
//     start (group_order.go); a group that waits its turn has no
//     max_unhealthy or deadline failure, and a failing group that does
//     not wait turns "failed";
//   - on failures the deployment takes the failing groups' on_failure
//     action: revert if any of them says revert, else fail if any says
//     fail, else pause. The description is that of the first failure of a
//     group with that action. Failing registers the stable job again when
//     reverting; pausing records every group's failures (FailuresAtPause)
//     and holds any checkpoint delay;
//   - unhealthy allocations that may be rescheduled are marked for
//     replacement;
//   - a paused deployment whose checkpoint delay ended (ResumeAt) resumes;
//     any other paused deployment waits (for ResumeAt, if set);
//   - a group whose healthy allocs reach its next checkpoint pauses the
//     deployment there (with ResumeAt = now + checkpoint_delay when set);
//     the first such group by name, at the highest checkpoint reached.
//     Checkpoints at or below the group's canaries are passed silently;
//     none are looked at while the group's canaries await promotion, nor
//     in a revert deployment or a job's first version;
//   - zones (zones.go), whatever else is decided: a rolling zone records
//     when it reached its success threshold (DoneAt) and turns "done"
//     when all its allocs are new and healthy; on a running deployment
//     that does not pause, the next zone of zone_by_zone starts rolling
//     after pause_between_zones (WakeAt for it), with a pass;
//   - ordered groups (group_order.go), likewise: a rolling group that is
//     done turns "done" with DoneAt; on a running deployment that does not
//     pause, the next waiting group starts rolling after
//     pause_between_groups (WakeAt for it), with a pass;
//   - once all canaries of every canary group (not waiting its turn) are
//     healthy and every such group has auto_promote, they are promoted;
//   - once every group is done (and every ordered group "done") the
//     deployment is successful and its job version becomes stable; a
//     multi-region one turns blocked instead, waiting for the other
//     regions;
//   - otherwise the running description says whether promotion is awaited,
//     or that the deployment rolls out a revert, or else which group waits
//     for which ("Deployment is running: group web waits for group api").
func Decide(obs Observation) Decision {
	d := obs.Deployment
	if d == nil || !d.Active() {
		return Decision{}
	}
	if d.Restart != nil && structs.ScaledOnly(obs.Job, obs.LatestJob) {
		// A scale during a restart: the restart goes on, by the new
		// counts.
		obs.Job = obs.LatestJob
	}
	if desc, ok := cancelReason(obs); ok {
		return Decision{Status: structs.DeploymentStatusCancelled, StatusDescription: desc}
	}
	if waitsForRegions(d) {
		// A multi-region deployment waiting its region's turn, or done
		// and waiting for the other regions: the regions' rollout
		// (multiregion.go) moves it on.
		return Decision{}
	}
	if d.Restart != nil {
		// A job restart rolls by its own batch size, wait and error
		// action; until its first pass adds its groups it has nothing
		// to decide (an empty restart is not a finished one).
		obs.Job = d.Restart.ApplyTo(obs.Job)
		if len(d.TaskGroups) == 0 {
			return Decision{}
		}
	}
	groups := viewGroups(obs)
	attachAnalyses(obs, groups)
	byName := make(map[string]*groupView, len(groups))
	for _, g := range groups {
		byName[g.name] = g
	}
	paused := d.Status == structs.DeploymentStatusPaused
	zones := newZoneWork(groups)
	zones.progress(obs.Now)
	order := newGroupWork(groups, obs.Job)
	order.progress(obs.Now)
	into := func(dec Decision) Decision {
		return withWaitReasons(obs, groups, order, analysisInto(obs, groups, order.into(zones.into(dec))))
	}

	unhealthy := checkUnhealthy(obs, byName)
	if fs := findFailures(obs, groups, order, unhealthy.failing, paused); len(fs) > 0 {
		zones.markFailed(fs)
		order.markFailed(fs)
		return into(onFailure(obs, groups, fs, unhealthy.reschedule))
	}

	var dec Decision
	dec.MarkForReschedule = unhealthy.reschedule
	dec.CreateEval = len(dec.MarkForReschedule) > 0
	if desc, ok := inconclusiveRun(groups); ok && !paused {
		// A monitoring outage must not fail or revert a good version:
		// the deployment waits for an operator.
		dec.Status = structs.DeploymentStatusPaused
		dec.StatusDescription = desc
		return into(dec)
	}
	if paused {
		if d.ResumeAt.IsZero() {
			return into(dec)
		}
		if obs.Now.Before(d.ResumeAt) {
			dec.WakeAt = d.ResumeAt
			return into(dec)
		}
		dec.Status = structs.DeploymentStatusRunning
		dec.StatusDescription = describeRunning(d, revertOf(obs), order)
		dec.CreateEval = true
		return into(dec)
	}
	if newHealth(obs) && !d.AllPlaced() && !StagePlaced(d, obs.Job) {
		// With every group's allocs placed, or those of its stage (the
		// next zone or group starts below, with its pass), new health
		// frees no slot.
		dec.CreateEval = true
	}

	if g, i, ok := reachedCheckpoint(obs, groups); ok {
		dec.Status = structs.DeploymentStatusPaused
		dec.StatusDescription = structs.CheckpointDescription(g.update.Checkpoints[i].String(), g.name, g.healthy, g.state.DesiredTotal)
		dec.CheckpointsReached = map[string]int{g.name: i + 1}
		if delay := g.update.CheckpointDelay; delay > 0 {
			dec.ResumeAt = obs.Now.Add(delay)
			dec.WakeAt = dec.ResumeAt
		}
		// Paused, the scheduler starts nothing: the resume asks for the
		// next pass.
		dec.CreateEval = len(dec.MarkForReschedule) > 0
		return into(dec)
	}

	// Zones and groups that may start now do, with a pass to roll them.
	zoneWake, started := zones.start(obs.Now)
	if started {
		dec.CreateEval = true
	}
	groupWake, started := order.start(obs.Now)
	if started {
		dec.CreateEval = true
		// A group started and done at once lets the next one start now:
		// an earlier group not fully serving then fails it as it would
		// have before the start.
		if fs := order.servingFailures(obs.Now); len(fs) > 0 {
			order.markFailed(fs)
			return into(onFailure(obs, groups, fs, unhealthy.reschedule))
		}
	}
	zoneWake = earliest(zoneWake, groupWake)

	if promote := autoPromoteGroups(groups); len(promote) > 0 {
		dec.Promote = true
		dec.PromoteGroups = promote
		dec.CreateEval = true
		want := structs.DeploymentStatusDescriptionRunning
		if v := revertOf(obs); v != nil {
			want = structs.RollbackDescription(*v)
		} else if group, earlier, ok := order.waits(); ok {
			want = structs.GroupWaitsDescription(group, earlier)
		}
		if d.StatusDescription != want {
			dec.StatusDescription = want
		}
		dec.WakeAt = earliest(wakeAt(groups, obs.Now), zoneWake)
		return into(dec)
	}
	if allDone(groups) && order.allDone() {
		dec.Status = structs.DeploymentStatusSuccessful
		dec.StatusDescription = structs.DeploymentStatusDescriptionSuccessful
		dec.Stable = true
		if d.IsMultiregion {
			// Done here, waiting for the other regions: successful (and
			// stable) once they all are done (multiregion.go).
			dec.Status = structs.DeploymentStatusBlocked
			dec.StatusDescription = structs.DeploymentStatusDescriptionBlocked
			dec.Stable = false
		}
		// With max_surge, old allocs may still run beside their last
		// replacements: one more pass stops them.
		dec.CreateEval = surges(obs.Job)
		return into(dec)
	}
	if want := describeRunning(d, revertOf(obs), order); d.StatusDescription != want {
		dec.StatusDescription = want
	}
	dec.WakeAt = earliest(wakeAt(groups, obs.Now), zoneWake)
	return into(dec)
}

// earliest returns the earlier of two times, a zero one standing for none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// surges reports whether a group of the job has max_surge.
func surges(job *structs.Job) bool {
	if job == nil {
		return false
	}
	for _, tg := range job.TaskGroups {
		if tg != nil && tg.Update != nil && tg.Update.MaxSurge != nil {
			return true
		}
	}
	return false
}

// revertOf is the version the deployment's job restores when a revert
// registered it (C.5): the deployment's record, else the job's; nil
// otherwise.
func revertOf(obs Observation) *uint64 {
	if obs.Deployment.RevertOf != nil {
		return obs.Deployment.RevertOf
	}
	if obs.Job != nil && obs.Job.Version == obs.Deployment.JobVersion {
		return obs.Job.RevertOf
	}
	return nil
}

// Kinds of failure, in order of precedence.
const (
	failureAllocs = iota
	failureMaxFailed
	failureZoneBudget
	failureMaxUnhealthy
	failureDeadline
	failureGroupServing
	failureAnalysis
)

// failure is one reason for one group to fail the deployment.
type failure struct {
	group *groupView
	kind  int
	// zone names the zone of a failureZoneBudget.
	zone string
	// pause is the description when the deployment pauses; fail the one
	// when it fails (before any revert suffix).
	pause, fail string
}

// findFailures lists the failures of the deployment's groups, by kind and
// then group name. failing names the groups whose unhealthy allocations
// fail them (checkUnhealthy).
func findFailures(obs Observation, groups []*groupView, order *groupWork, failing []string, paused bool) []failure {
	var out []failure
	for _, g := range groups {
		s, total := g.state, g.state.DesiredTotal
		if slices.Contains(failing, g.name) {
			out = append(out, failure{group: g, kind: failureAllocs,
				pause: structs.DeploymentStatusDescriptionPausedAllocations, fail: structs.DeploymentStatusDescriptionFailedAllocations})
		}
		if n, ok := g.maxFailed(); ok {
			if f := g.failures(); f > n && f > s.FailuresAtPause {
				out = append(out, failure{group: g, kind: failureMaxFailed,
					pause: structs.MaxFailedPauseDescription(f, total, n), fail: structs.MaxFailedDescription(f, total, n)})
			}
		}
		if g.zones != nil {
			out = append(out, g.zones.budgetFailures()...)
		}
		if paused || g.waiting() {
			continue
		}
		if n, ok := g.update.MaxUnhealthyFor(total); ok && obs.NotServing != nil && !g.done() {
			if ns := obs.NotServing[g.name]; ns > n {
				out = append(out, failure{group: g, kind: failureMaxUnhealthy,
					pause: structs.MaxUnhealthyPauseDescription(ns, total, g.name, n), fail: structs.MaxUnhealthyDescription(ns, total, g.name, n)})
			}
		}
		if g.failsDeadline(obs.Now) {
			out = append(out, failure{group: g, kind: failureDeadline,
				pause: structs.DeploymentStatusDescriptionPausedProgressDeadline, fail: structs.DeploymentStatusDescriptionProgressDeadline})
		}
	}
	if !paused {
		out = append(out, order.servingFailures(obs.Now)...)
	}
	out = append(out, analysisFailures(groups)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].kind < out[j].kind })
	return out
}

// onFailure builds the decision for the failures fs (at least one): the
// strongest of the failing groups' actions — revert, fail, pause — with
// the description of the first failure of a group taking that action.
func onFailure(obs Observation, groups []*groupView, fs []failure, reschedule []string) Decision {
	rank := map[string]int{structs.OnFailurePause: 0, structs.OnFailureFail: 1, structs.OnFailureRevert: 2}
	action := structs.OnFailurePause
	for _, f := range fs {
		if a := f.group.action(); rank[a] > rank[action] {
			action = a
		}
	}
	first := fs[0]
	for _, f := range fs {
		if f.group.action() == action {
			first = f
			break
		}
	}
	if action != structs.OnFailurePause {
		return fail(obs, first.fail, action == structs.OnFailureRevert)
	}
	d := obs.Deployment
	dec := Decision{MarkForReschedule: reschedule, CreateEval: len(reschedule) > 0}
	if d.Status == structs.DeploymentStatusPaused && d.ResumeAt.IsZero() && failurePause(d.StatusDescription) {
		// Already paused on a failure, and held: later failures (allocs
		// of the version still being rescheduled) wait for the resume,
		// which accepts them, or for a fail.
		return dec
	}
	for _, g := range groups {
		if f := g.failures(); f > g.state.FailuresAtPause {
			if dec.FailuresAtPause == nil {
				dec.FailuresAtPause = map[string]int{}
			}
			dec.FailuresAtPause[g.name] = f
		}
	}
	// A pause on a failure holds a checkpoint delay (ResumeAt zero). One
	// already written is not written again.
	if d.Status != structs.DeploymentStatusPaused || d.StatusDescription != first.pause ||
		!d.ResumeAt.IsZero() || len(dec.FailuresAtPause) > 0 {
		dec.Status = structs.DeploymentStatusPaused
		dec.StatusDescription = first.pause
	}
	return dec
}

// failurePause reports whether desc is the description of a pause on a
// failure (on_failure = "pause").
func failurePause(desc string) bool {
	return strings.HasPrefix(desc, "Deployment paused: ") || structs.IsAnalysisDescription(desc) ||
		desc == structs.DeploymentStatusDescriptionPausedAllocations ||
		desc == structs.DeploymentStatusDescriptionPausedProgressDeadline
}

// reachedCheckpoint finds the first group (by name) whose healthy allocs
// reached a checkpoint beyond those it has reached, and the index of the
// highest such checkpoint. Checkpoints at or below the group's canaries
// are passed silently; a group awaiting promotion, a revert deployment and
// a job's first version have none (C.3, C.5, C.9).
func reachedCheckpoint(obs Observation, groups []*groupView) (*groupView, int, bool) {
	if revertOf(obs) != nil || obs.Deployment.JobVersion == 0 {
		return nil, 0, false
	}
	for _, g := range groups {
		if g.update == nil || g.awaitingPromotion() || g.waiting() || g.analysisHolds() {
			// A checkpoint pause waits for the batch's analysis run.
			continue
		}
		s := g.state
		cps := g.update.CheckpointsFor(s.DesiredTotal)
		hit := -1
		for i := max(s.CheckpointsReached, 0); i < len(cps) && g.healthy >= cps[i]; i++ {
			if cps[i] > s.DesiredCanaries {
				hit = i
			}
		}
		if hit >= 0 {
			return g, hit, true
		}
	}
	return nil, 0, false
}

// cancelReason reports whether the deployment is superseded: its job was
// stopped or purged, or a newer version of the job exists.
func cancelReason(obs Observation) (string, bool) {
	d, latest := obs.Deployment, obs.LatestJob
	if latest == nil || latest.Stop {
		return structs.DeploymentStatusDescriptionStoppedJob, true
	}
	if latest.Version > d.JobVersion && (obs.Job == nil || latest.Version != obs.Job.Version) {
		return structs.DeploymentStatusDescriptionNewerJob, true
	}
	if d.JobCreateIndex != 0 && latest.CreateIndex != 0 && latest.CreateIndex != d.JobCreateIndex {
		// The job was purged and registered again: a different job.
		return structs.DeploymentStatusDescriptionNewerJob, true
	}
	return "", false
}

// fail builds the failure decision with description base, registering the
// stable job again when revert is set.
func fail(obs Observation, base string, revert bool) Decision {
	dec := Decision{
		Status:            structs.DeploymentStatusFailed,
		StatusDescription: base,
		Fail:              true,
		CreateEval:        true,
	}
	if revert {
		job := obs.Job
		if job == nil {
			job = obs.LatestJob
		}
		dec.StatusDescription, dec.RevertTo = revertTarget(base, job, obs.StableJob)
	}
	return dec
}

// autoRevert reports whether any of the named groups reverts on failure
// (on_failure = "revert", or auto_revert).
func autoRevert(d *structs.Deployment, job *structs.Job, groups []string) bool {
	for _, name := range groups {
		s := d.TaskGroups[name]
		if s == nil {
			continue
		}
		g := &groupView{name: name, state: s}
		if tg := job.LookupTaskGroup(name); tg != nil {
			g.update = tg.Update
		}
		if g.action() == structs.OnFailureRevert {
			return true
		}
	}
	return false
}

// revertTarget returns the failure description and the job to register
// again, marked as restoring the stable version (RevertOf): none when
// there is no stable version or when it has the same specification as the
// failed one.
func revertTarget(base string, job, stable *structs.Job) (string, *structs.Job) {
	if stable == nil {
		return structs.DeploymentStatusDescriptionNoRollbackTarget(base), nil
	}
	if job != nil && (stable.Version == job.Version || !stable.SpecChanged(job)) {
		return structs.DeploymentStatusDescriptionRollbackNoop(base, stable.Version), nil
	}
	revert := stable.Copy()
	v := stable.Version
	revert.RevertOf = &v
	return structs.DeploymentStatusDescriptionRollback(base, stable.Version), revert
}

// newHealth reports whether an allocation turned healthy after the job's
// latest evaluation was created, so the next batch can start (A.3).
func newHealth(obs Observation) bool {
	if obs.FromFigures {
		return obs.Deployment.HealthIndex > obs.LatestEvalIndex
	}
	for _, a := range obs.Allocs {
		if a == nil || a.TerminalStatus() || !a.IsHealthy() {
			continue
		}
		idx := a.DeploymentStatus.ModifyIndex
		if idx == 0 {
			idx = a.ModifyIndex
		}
		if idx > obs.LatestEvalIndex {
			return true
		}
	}
	return false
}

// autoPromoteGroups returns the canary groups to promote now: all of them,
// once every unpromoted canary group has auto_promote and all its desired
// canaries placed and healthy; otherwise none.
func autoPromoteGroups(groups []*groupView) []string {
	var out []string
	for _, g := range groups {
		if !g.awaitingPromotion() {
			continue
		}
		s := g.state
		if !s.AutoPromote || len(s.PlacedCanaries) < s.DesiredCanaries || !g.canariesHealthy() || !g.canaryRunsCleared() {
			return nil
		}
		out = append(out, g.name)
	}
	sort.Strings(out)
	return out
}

// allDone reports whether every group reached its goal.
func allDone(groups []*groupView) bool {
	for _, g := range groups {
		if !g.done() {
			return false
		}
	}
	return true
}

// runningDescription is the description a running deployment should show.
func runningDescription(d *structs.Deployment) string {
	return runningDescriptionOf(d, d.RevertOf)
}

// runningDescriptionOf is the running description of d, which rolls out a
// revert to version *revert when revert is set: awaited promotion first,
// then the revert (C.5), then a group waiting its turn (group_order), from
// d's stored group states.
func runningDescriptionOf(d *structs.Deployment, revert *uint64) string {
	group, earlier, waits := waitingGroups(d)
	return runningDescriptionWith(d, revert, group, earlier, waits)
}

// describeRunning is runningDescriptionOf with the group states a
// decision moves (order).
func describeRunning(d *structs.Deployment, revert *uint64, order *groupWork) string {
	group, earlier, waits := order.waits()
	return runningDescriptionWith(d, revert, group, earlier, waits)
}

// runningDescriptionWith is the running description of d: awaited
// promotion (of groups not waiting their turn) first, then the revert,
// then "group X waits for group Y" when waits, else "Deployment is
// running".
func runningDescriptionWith(d *structs.Deployment, revert *uint64, group, earlier string, waits bool) string {
	if !d.RequiresPromotion() {
		switch {
		case d.Restart != nil && !waits:
			return structs.RestartDescription(d.Restart.Reschedule)
		case revert != nil:
			return structs.RollbackDescription(*revert)
		case waits:
			return structs.GroupWaitsDescription(group, earlier)
		}
		return structs.DeploymentStatusDescriptionRunning
	}
	for _, s := range d.TaskGroups {
		if s != nil && s.DesiredCanaries > 0 && !s.Promoted && !s.AutoPromote && !(s.Order > 0 && s.State == structs.GroupStateWaiting) {
			return structs.DeploymentStatusDescriptionRunningNeedsPromotion
		}
	}
	return structs.DeploymentStatusDescriptionRunningAutoPromotion
}

// wakeAt is the earliest progress deadline still ahead of now among the
// groups that are neither done nor waiting their turn; zero if none.
func wakeAt(groups []*groupView, now time.Time) time.Time {
	var next time.Time
	for _, g := range groups {
		dl := g.deadline()
		if dl.IsZero() || g.done() || g.waiting() || !dl.After(now) {
			continue
		}
		if next.IsZero() || dl.Before(next) {
			next = dl
		}
	}
	return next
}
