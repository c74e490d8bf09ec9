package scheduler

import "github.com/droverhq/drover/structs"

// A job restart (structs/restart.go) is a deployment of the job's current
// version that restarts or replaces each alloc of its groups once. Until
// the deployment reaches an alloc, the alloc is treated as one of an older
// version: UpdateRestart in place, UpdateDestructive with -reschedule. So
// the batches are the update block's, with nothing of their own here but
// the in-place restart itself.

// restartPending reports whether the running restart has yet to reach a:
// a live alloc of a restarted group that runs the job's version, created
// before the restart began (allocs a scale adds meanwhile are left alone)
// and not moved into the restart's deployment.
func (r *reconciler) restartPending(a *structs.Allocation) bool {
	d := r.deployment
	if r.restart == nil || d == nil || !r.restart.Restarts(a.TaskGroup) {
		return false
	}
	if a.DeploymentID == d.ID || a.CreateIndex >= d.CreateIndex || a.ClientTerminalStatus() || a.IsCanary() {
		return false
	}
	// The restart's version, or a later one that only scaled it.
	return a.Job != nil && (a.Job.Version == d.JobVersion || a.Job.Version == r.in.Job.Version) && a.Job.CreateIndex == r.in.Job.CreateIndex
}

// restartScaled reports whether d is a restart of an earlier version of
// the job that differs from it in counts alone: a scale during a restart
// leaves the restart running (structs.ScaledOnly).
func (r *reconciler) restartScaled(d *structs.Deployment) bool {
	if d.Restart == nil || !d.Active() {
		return false
	}
	for _, a := range r.in.Allocs {
		if a != nil && a.Job != nil && a.Job.Version == d.JobVersion && a.Job.CreateIndex == d.JobCreateIndex {
			return structs.ScaledOnly(a.Job, r.job)
		}
	}
	return false
}

// restartTotal keeps a restarted group's DesiredTotal at its count when a
// scale changed it: the restart is done once that many allocs are in it
// and healthy.
func (r *reconciler) restartTotal(tg *structs.TaskGroup) {
	if r.restart == nil || r.newStates[tg.Name] != nil || r.deployment == nil {
		return
	}
	if s := r.deployment.TaskGroups[tg.Name]; s != nil && s.DesiredTotal != tg.Count {
		c := s.Copy()
		c.DesiredTotal = tg.Count
		r.newStates[tg.Name] = c
	}
}

// restartInPlace moves a into the restart's deployment with its health
// unknown and asks its client to restart the tasks (DesiredRestart); the
// batch slot frees once the client reports it healthy again.
func (r *reconciler) restartInPlace(a *structs.Allocation) {
	d := r.deployment
	c := a.Copy()
	c.EvalID = r.in.EvalID
	c.DeploymentID = d.ID
	c.DeploymentStatus = nil
	c.DesiredRestart = &structs.DesiredRestart{
		DeploymentID: d.ID, Tasks: append([]string(nil), r.restart.Tasks...), AllTasks: r.restart.AllTasks,
	}
	if tg := r.job.LookupTaskGroup(a.TaskGroup); c.Zone == "" && tg != nil && tg.Update != nil && tg.Update.Zones != nil {
		// Zones count their allocs by the zone stamped on each (placed
		// before the group had zones, this one has none yet).
		c.Zone = structs.ZoneOf(r.nodes[a.NodeID], tg.Update.Zones.Attribute)
	}
	r.plan.InPlace = append(r.plan.InPlace, c)
	r.plan.desired(a.TaskGroup).InPlaceUpdate++
}

// settleRestarted stops, after a restart with -reschedule succeeded, each
// alloc from before it that still runs beside its healthy replacement
// (max_surge: the last batch's old allocs stop in the pass after the
// restart's end). Both run the same version now, so without the finished
// restart nothing would tell the old one from the new.
func (r *reconciler) settleRestarted(g *groupPass) {
	d := r.restartDone
	if d == nil || !d.Restart.Restarts(g.tg.Name) {
		return
	}
	replaced := map[int]bool{}
	for _, h := range g.holders {
		if h.live && h.alloc.DeploymentID == d.ID && h.alloc.IsHealthy() {
			replaced[h.index] = true
		}
	}
	kept := g.holders[:0]
	for _, h := range g.holders {
		if h.live && h.alloc.DeploymentID != d.ID && h.alloc.CreateIndex < d.CreateIndex && replaced[h.index] {
			r.stop(h.alloc, structs.AllocRestartReplaced, "")
			continue
		}
		kept = append(kept, h)
	}
	g.holders = kept
}

// updatingDescription is the desired description of an alloc replaced by
// the job's version: a job restart's own when the restart replaces it.
func (r *reconciler) updatingDescription(a *structs.Allocation) string {
	if r.restartPending(a) {
		return structs.AllocRestartReplaced
	}
	return structs.AllocUpdating
}
