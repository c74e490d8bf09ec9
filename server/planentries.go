package server

import (
	"slices"

	"github.com/droverhq/drover/structs"
)

// planRequests builds the log entries for the accepted part of p, stamped
// with the leader's time, each with at most cfg.PlanEntryAllocs
// allocations (placed, updated or stopped). It returns none when the plan
// changes nothing.
//
// A plan that fits is one entry, committed atomically. A larger one is
// cut so that every prefix of its entries leaves a consistent state,
// should leadership be lost part way:
//   - the first entry carries the deployment, its status updates and the
//     follow-up evaluations, which later entries' allocs refer to;
//   - the plan's own stops come before any placement, so a placement never
//     lands on capacity that a later entry frees;
//   - a placement and the stop of the alloc it replaces share an entry, so
//     an old alloc is never stopped without its replacement;
//
// With complete (nothing rejected) and a plan that fits one entry, the
// evaluation's outcome rides in that entry, stamped with its time, and
// finished is true; a larger plan takes long enough to commit that one
// more entry after it costs nothing worth saving, and its outcome's time
// should say when the whole plan was in.
func (l *Leader) planRequests(p *planSubmission, accepted []*structs.Allocation, stops []*structs.AllocStopUpdate, complete bool) (reqs []*structs.ApplyPlanResultsRequest, finished bool) {
	now := l.clock.Now().UnixNano()
	limit := max(l.cfg.PlanEntryAllocs, 1)
	first := &structs.ApplyPlanResultsRequest{
		EvalID: p.evalID, Job: p.job,
		Deployment: p.deployment, DeploymentUpdates: p.deploymentUpdates,
		FollowupEvals: p.followupEvals, UpdatedAt: now,
	}
	reqs = []*structs.ApplyPlanResultsRequest{first}
	cur, size := first, 0
	// room starts a new entry unless the current one has space for n more.
	room := func(n int) {
		if size > 0 && size+n > limit {
			cur = &structs.ApplyPlanResultsRequest{EvalID: p.evalID, Job: p.job, UpdatedAt: now}
			reqs = append(reqs, cur)
			size = 0
		}
		size += n
	}
	// Stops that replace an accepted placement travel with it.
	paired := make(map[string]*structs.AllocStopUpdate, len(p.replaces))
	for _, a := range accepted {
		if rep := p.replaces[a.ID]; rep != nil {
			paired[rep.AllocID] = rep
		}
	}
	for _, s := range stops {
		if paired[s.AllocID] == nil {
			room(1)
			cur.AllocsStopped = append(cur.AllocsStopped, s)
		}
	}
	for _, a := range p.updated {
		room(1)
		c := *a
		if c.Job == p.job {
			c.Job = nil
		}
		c.ModifyTime = now
		cur.AllocsUpdated = append(cur.AllocsUpdated, &c)
	}
	for _, a := range accepted {
		rep := p.replaces[a.ID]
		if rep != nil {
			room(2)
			cur.AllocsStopped = append(cur.AllocsStopped, rep)
		} else {
			room(1)
		}
		c := *a // shallow: the entry shares the job once, through req.Job
		c.Job = nil
		c.CreateTime, c.ModifyTime = now, now
		cur.AllocsPlaced = append(cur.AllocsPlaced, &c)
	}
	if len(reqs) == 1 && len(first.AllocsPlaced) == 0 && len(first.AllocsUpdated) == 0 &&
		len(first.AllocsStopped) == 0 && first.Deployment == nil && len(first.DeploymentUpdates) == 0 &&
		len(first.FollowupEvals) == 0 {
		return nil, false
	}
	if complete && len(p.outcome) > 0 && len(reqs) == 1 {
		evals := slices.Clip(first.FollowupEvals)
		for _, e := range p.outcome {
			c := *e // shallow: only the time changes
			c.ModifyTime = now
			evals = append(evals, &c)
		}
		first.FollowupEvals = evals
		return reqs, true
	}
	return reqs, false
}
