package scheduler

import "github.com/droverhq/drover/structs"

// Multi-region jobs (the `multiregion` block): each region holds its own
// copy of the job and its own deployment of each version. A region's
// deployment starts pending unless the region is among the first
// max_parallel in the order written (all when max_parallel = 0); while it
// is pending the version places nothing here, as under a pause: the old
// version's allocations stay, no canary, replacement, in-place update or
// first placement starts. The leader's regions' rollout turns it running
// when the region's turn comes, and the next pass rolls it.

// startsAtOnce reports whether region's deployment of a version of the
// multi-region job starts running when it is created.
func startsAtOnce(m *structs.Multiregion, region string) bool {
	if m == nil || m.Strategy == nil || m.Strategy.MaxParallel <= 0 {
		return true
	}
	for i, r := range m.Regions {
		if r != nil && r.Name == region {
			return i < m.Strategy.MaxParallel
		}
	}
	// A region the block does not name rolls by itself.
	return true
}

// holdForRegions sets pending when this pass would create the deployment
// of a multi-region job's version in a region whose turn has not come.
func (r *reconciler) holdForRegions() {
	if r.deployment != nil || r.job == nil || !r.job.IsMultiregion() || r.job.RevertOf != nil || r.restartDone != nil {
		return
	}
	if d := r.in.Deployment; d != nil && d.JobVersion == r.job.Version && d.JobCreateIndex == r.job.CreateIndex {
		// This version's deployment exists and finished (or failed):
		// it is not created again.
		return
	}
	if !startsAtOnce(r.job.Multiregion, r.job.Region) {
		r.paused, r.pending = true, true
	}
}

// multiregionDeployment marks a deployment created for a multi-region
// job's version, pending unless its region starts at once.
func (r *reconciler) multiregionDeployment(d *structs.Deployment) {
	if r.job == nil || !r.job.IsMultiregion() || r.job.RevertOf != nil {
		// A revert (auto_revert) rolls in its region alone: the other
		// regions revert, or not, by their own deployments.
		return
	}
	d.IsMultiregion = true
	if r.pending {
		d.Status = structs.DeploymentStatusPending
		d.StatusDescription = structs.DeploymentStatusDescriptionPendingForPeer
	}
}

// heldPlacements counts the first placements a pending region holds back
// (they would have been placed but for the pending deployment), so that
// the pass still creates the version's deployment for the rollout to
// start later.
func (r *reconciler) heldPlacements(tg *structs.TaskGroup, g *groupPass, canarying bool) int {
	if !r.pending || r.failed || canarying {
		return 0
	}
	return len(freeIndexes(tg.Count-len(g.holders), g))
}

// regionDeploymentWithoutChanges gives a multi-region job's version its
// deployment in this region when the pass changes nothing here (a region
// whose groups all have count 0, or a version equal to what runs): the
// other regions wait for every region's deployment of the version, so
// each region must have one. Its groups want their counts; with nothing
// to place the watcher finds it done at once and blocks it.
func (r *reconciler) regionDeploymentWithoutChanges() {
	if len(r.newStates) > 0 || r.deployment != nil || r.job == nil || !r.job.IsMultiregion() ||
		r.job.RevertOf != nil || r.restartDone != nil || structs.PerNode(r.job.Type) {
		return
	}
	if d := r.in.Deployment; d != nil && d.JobVersion == r.job.Version && d.JobCreateIndex == r.job.CreateIndex {
		return
	}
	for _, tg := range r.job.TaskGroups {
		if tg != nil && tg.Update.Rolling() {
			r.wantState(tg, tg.Count, 0)
		}
	}
}
