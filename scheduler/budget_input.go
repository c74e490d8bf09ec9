package scheduler

import "github.com/droverhq/drover/structs"

// What a group's pass gives Budget: the counts of its live allocs, and the
// next checkpoint.

// budgetInput gathers the counts Budget needs from the group's live allocs.
func (r *reconciler) budgetInput(g *groupPass, canarying bool) BudgetInput {
	in := r.budgetBase(g, canarying, len(g.holders))
	in.Extra = len(g.aside)
	dep := r.deploymentID()
	for _, hs := range [][]*holder{g.holders, g.canaries} {
		for _, h := range hs {
			if !h.live {
				if h.place == nil && dep != "" && h.alloc.DeploymentID == dep && h.alloc.ClientStatus == structs.AllocClientStatusFailed {
					// A new alloc that died and waits for its reschedule
					// is an unhealthy one of the deployment (A.2): it
					// stops new batches, or with max_failed holds its
					// place in the batch.
					in.Unhealthy++
				}
				continue
			}
			a := h.alloc
			if dep != "" && a.DeploymentID == dep && !h.down {
				in.NewAllocs++
			}
			switch {
			case h.down:
				in.Down++
			case (dep == "" || a.DeploymentID != dep) && inFlightElsewhere(a):
				in.Unknown++
			case dep == "" || a.DeploymentID != dep:
				in.Available++
			case a.IsHealthy():
				in.Available++
				in.NewHealthy++
				if ts := a.DeploymentStatus.Timestamp; ts.After(in.LastHealthy) {
					in.LastHealthy = ts
				}
			case a.IsUnhealthy():
				in.Unhealthy++
			default:
				in.Unknown++
			}
		}
	}
	for _, a := range g.aside {
		if !a.NotServing() {
			in.Available++
		}
	}
	for _, m := range g.moving {
		// A moving alloc serves where it is until its replacement is
		// healthy; one of the deployment counts as its other allocs do.
		a := m.alloc
		switch {
		case dep == "" || a.DeploymentID != dep:
			if !a.NotServing() {
				in.Available++
			}
		case a.IsHealthy():
			in.Available++
		case a.IsUnhealthy():
			in.Unhealthy++
		default:
			in.Unknown++
		}
	}
	in.NotServing = g.notServing
	return in
}

// budgetBase is the part of budgetInput that does not count allocs, for a
// group holding holders slots (a memo's pass fills in the counts, delta.go).
func (r *reconciler) budgetBase(g *groupPass, canarying bool, holders int) BudgetInput {
	// Count is the slots the group holds now (allocs and their
	// replacements), not the target: allocs still to be placed for a scale
	// up cannot be unavailable, and must not hold the rollout back.
	u := g.tg.Update
	in := BudgetInput{
		MaxParallel: u.ParallelFor(g.count),
		Count:       min(g.count, holders),
		Blocked:     r.paused || r.failed || canarying || r.analysisHold(g),
		Stagger:     u.BatchPause(),
		Now:         r.in.Now,
		Surge:       u.SurgeFor(g.count),
	}
	_, in.ToleratesFailures = u.MaxFailedFor(g.count)
	if u.Zones != nil && u.Zones.DisruptionBudget != nil {
		// The disruption budget alone decides what failures stop.
		in.ToleratesFailures = true
	}
	in.MaxUnhealthy, in.LimitUnhealthy = u.MaxUnhealthyFor(g.count)
	if r.job.RevertOf == nil {
		// A revert restores a version that was stable: no first batch,
		// no checkpoints (C.5).
		in.FirstBatch = u.FirstBatchFor(g.count)
		in.Checkpoint = r.nextCheckpoint(g)
	}
	return in
}

// inFlightElsewhere reports an alloc that an earlier deployment placed and
// that has not started yet: a new version registered mid-rollout (a job
// file, a job scale) finds the old deployment's last batch in flight. It
// serves nothing yet, so it takes room in the new deployment's batch as
// an alloc of its own would, until its client says it runs (or failed).
// Once running it counts as serving: its health in a cancelled deployment
// may never be decided, and waiting for it would stall the rollout.
func inFlightElsewhere(a *structs.Allocation) bool {
	return a.DeploymentID != "" && a.ClientStatus == structs.AllocClientStatusPending && !a.IsHealthy()
}

// nextCheckpoint is the group's next checkpoint (C.3): the first of its
// resolved checkpoints the deployment has not reached yet, skipping those
// its canaries already cover (promotion was that check); 0 when none.
func (r *reconciler) nextCheckpoint(g *groupPass) int {
	cps := g.tg.Update.CheckpointsFor(g.count)
	if len(cps) == 0 {
		return 0
	}
	reached, canaries := 0, 0
	if s := r.groupState(g.tg.Name); s != nil {
		reached, canaries = s.CheckpointsReached, s.DesiredCanaries
	}
	for _, c := range cps[min(reached, len(cps)):] {
		if c > canaries {
			return c
		}
	}
	return 0
}

// analysisHold reports whether an each_batch analysis run holds the
// group's next batch (structs.AnalysisHold, part E): the run of the batch
// last healthy has not cleared it yet, or has yet to start. The deployment
// watcher starts the runs and holds the rest of the rollout by the same
// rule.
func (r *reconciler) analysisHold(g *groupPass) bool {
	if r.deployment == nil || r.deployment.JobVersion != r.job.Version {
		return false
	}
	_, _, hold := structs.AnalysisHold(r.groupState(g.tg.Name), structs.AnalysesFor(r.deployment, r.job, g.tg.Update))
	return hold
}
