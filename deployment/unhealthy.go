package deployment

import (
	"sort"
	"time"

	"github.com/droverhq/drover/structs"
)

// unhealthyResult is what the unhealthy allocations of a deployment call for.
type unhealthyResult struct {
	// failing names the groups whose unhealthy allocations fail the
	// deployment at once.
	failing []string
	// reschedule lists allocations to mark for replacement.
	reschedule []string
}

// checkUnhealthy sorts the deployment's unhealthy allocations (A.10): with
// progress_deadline = 0 the first one fails the deployment; otherwise each
// is replaced per its reschedule policy while the deadline runs, and one
// with no attempts left fails the deployment at once. In a group that
// tolerates failures (max_failed or a zones disruption_budget set, or
// resumed past a pause on them; see
// groupView.toleratesFailures) none fails the deployment: each is replaced
// while it has attempts left.
func checkUnhealthy(obs Observation, groups map[string]*groupView) unhealthyResult {
	var res unhealthyResult
	// With FromFigures, Allocs holds exactly the unhealthy allocations.
	failing := make(map[string]bool)
	for _, a := range obs.Allocs {
		if a == nil || !a.IsUnhealthy() {
			continue
		}
		g := groups[a.TaskGroup]
		if g == nil {
			continue
		}
		tolerant := g.toleratesFailures()
		if g.state.ProgressDeadline == 0 && !tolerant {
			failing[a.TaskGroup] = true
			continue
		}
		if a.NextAllocation != "" || a.DesiredStatus != structs.AllocDesiredStatusRun {
			// Already replaced, or stopped by the scheduler.
			continue
		}
		if !rescheduleAttemptsLeft(policyFor(obs.Job, a), a, obs.Now) {
			if !tolerant {
				failing[a.TaskGroup] = true
			}
			continue
		}
		if !a.DesiredTransition.ShouldReschedule() {
			res.reschedule = append(res.reschedule, a.ID)
		}
	}
	for name := range failing {
		res.failing = append(res.failing, name)
	}
	sort.Strings(res.failing)
	sort.Strings(res.reschedule)
	return res
}

// policyFor returns the reschedule policy of the allocation's group: from
// the job the allocation runs, else from the deployment's job.
func policyFor(job *structs.Job, a *structs.Allocation) *structs.ReschedulePolicy {
	if tg := a.Job.LookupTaskGroup(a.TaskGroup); tg != nil {
		return tg.ReschedulePolicy
	}
	if tg := job.LookupTaskGroup(a.TaskGroup); tg != nil {
		return tg.ReschedulePolicy
	}
	return nil
}

// rescheduleAttemptsLeft reports whether the allocation may be replaced
// once more under policy p at now: unlimited policies always may; others
// count the attempts within the policy's interval.
func rescheduleAttemptsLeft(p *structs.ReschedulePolicy, a *structs.Allocation, now time.Time) bool {
	if p == nil {
		return false
	}
	if p.Unlimited {
		return true
	}
	if p.Attempts <= 0 {
		return false
	}
	used := 0
	if a.RescheduleTracker != nil {
		for _, e := range a.RescheduleTracker.Events {
			if e == nil {
				continue
			}
			if p.Interval > 0 && now.Sub(time.Unix(0, e.RescheduleTime)) >= p.Interval {
				continue
			}
			used++
		}
	}
	return used < p.Attempts
}
