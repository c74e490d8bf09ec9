package deployment

import (
	"sort"
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
//   - an unhealthy allocation in a group with progress_deadline = 0, or an
//     unhealthy allocation with no reschedule attempts left, fails it
//     ("Failed due to unhealthy allocations");
//   - a running deployment past a group's require_progress_by fails ("Failed
//     due to progress deadline") unless that group is done or holds healthy
//     canaries waiting for promotion; a paused deployment never fails on it;
//   - on failure, a failing group with auto_revert reverts to the stable job;
//   - other unhealthy allocations are marked for replacement;
//   - once all canaries of every canary group are healthy and every canary
//     group has auto_promote, they are promoted;
//   - once every group is done the deployment is successful and its job
//     version becomes stable;
//   - otherwise the running description says whether promotion is awaited.
func Decide(obs Observation) Decision {
	d := obs.Deployment
	if d == nil || !d.Active() {
		return Decision{}
	}
	if desc, ok := cancelReason(obs); ok {
		return Decision{Status: structs.DeploymentStatusCancelled, StatusDescription: desc}
	}
	groups := viewGroups(obs)
	paused := d.Status == structs.DeploymentStatusPaused

	unhealthy := checkUnhealthy(obs)
	if len(unhealthy.failing) > 0 {
		return fail(obs, structs.DeploymentStatusDescriptionFailedAllocations, unhealthy.failing)
	}
	if !paused {
		var late []string
		for _, g := range groups {
			if g.failsDeadline(obs.Now) {
				late = append(late, g.name)
			}
		}
		if len(late) > 0 {
			return fail(obs, structs.DeploymentStatusDescriptionProgressDeadline, late)
		}
	}

	var dec Decision
	dec.MarkForReschedule = unhealthy.reschedule
	dec.CreateEval = len(dec.MarkForReschedule) > 0
	if paused {
		return dec
	}
	if newHealth(obs) {
		dec.CreateEval = true
	}

	if promote := autoPromoteGroups(groups); len(promote) > 0 {
		dec.Promote = true
		dec.PromoteGroups = promote
		dec.CreateEval = true
		if d.StatusDescription != structs.DeploymentStatusDescriptionRunning {
			dec.StatusDescription = structs.DeploymentStatusDescriptionRunning
		}
		dec.WakeAt = wakeAt(groups, obs.Now)
		return dec
	}
	if allDone(groups) {
		dec.Status = structs.DeploymentStatusSuccessful
		dec.StatusDescription = structs.DeploymentStatusDescriptionSuccessful
		dec.Stable = true
		dec.CreateEval = false
		return dec
	}
	if want := runningDescription(d); d.StatusDescription != want {
		dec.StatusDescription = want
	}
	dec.WakeAt = wakeAt(groups, obs.Now)
	return dec
}

// cancelReason reports whether the deployment is superseded: its job was
// stopped or purged, or a newer version of the job exists.
func cancelReason(obs Observation) (string, bool) {
	d, latest := obs.Deployment, obs.LatestJob
	if latest == nil || latest.Stop {
		return structs.DeploymentStatusDescriptionStoppedJob, true
	}
	if latest.Version > d.JobVersion {
		return structs.DeploymentStatusDescriptionNewerJob, true
	}
	if d.JobCreateIndex != 0 && latest.CreateIndex != 0 && latest.CreateIndex != d.JobCreateIndex {
		// The job was purged and registered again: a different job.
		return structs.DeploymentStatusDescriptionNewerJob, true
	}
	return "", false
}

// fail builds the failure decision, with an auto revert when one of the
// failing groups asks for it.
func fail(obs Observation, base string, failing []string) Decision {
	dec := Decision{
		Status:            structs.DeploymentStatusFailed,
		StatusDescription: base,
		Fail:              true,
		CreateEval:        true,
	}
	if autoRevert(obs.Deployment, failing) {
		job := obs.Job
		if job == nil {
			job = obs.LatestJob
		}
		dec.StatusDescription, dec.RevertTo = revertTarget(base, job, obs.StableJob)
	}
	return dec
}

// autoRevert reports whether any of the named groups has auto_revert.
func autoRevert(d *structs.Deployment, groups []string) bool {
	for _, name := range groups {
		if s := d.TaskGroups[name]; s != nil && s.AutoRevert {
			return true
		}
	}
	return false
}

// revertTarget returns the failure description and the job to register
// again: none when there is no stable version or when it has the same
// specification as the failed one.
func revertTarget(base string, job, stable *structs.Job) (string, *structs.Job) {
	if stable == nil {
		return structs.DeploymentStatusDescriptionNoRollbackTarget(base), nil
	}
	if job != nil && (stable.Version == job.Version || !stable.SpecChanged(job)) {
		return structs.DeploymentStatusDescriptionRollbackNoop(base, stable.Version), nil
	}
	return structs.DeploymentStatusDescriptionRollback(base, stable.Version), stable.Copy()
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
		if !s.AutoPromote || len(s.PlacedCanaries) < s.DesiredCanaries || !g.canariesHealthy() {
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
	if !d.RequiresPromotion() {
		return structs.DeploymentStatusDescriptionRunning
	}
	for _, s := range d.TaskGroups {
		if s != nil && s.DesiredCanaries > 0 && !s.Promoted && !s.AutoPromote {
			return structs.DeploymentStatusDescriptionRunningNeedsPromotion
		}
	}
	return structs.DeploymentStatusDescriptionRunningAutoPromotion
}

// wakeAt is the earliest progress deadline still ahead of now among the
// groups that are not done; zero if none.
func wakeAt(groups []*groupView, now time.Time) time.Time {
	var next time.Time
	for _, g := range groups {
		dl := g.deadline()
		if dl.IsZero() || g.done() || !dl.After(now) {
			continue
		}
		if next.IsZero() || dl.Before(next) {
			next = dl
		}
	}
	return next
}
