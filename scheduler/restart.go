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
	return a.Job != nil && a.Job.Version == r.in.Job.Version && a.Job.CreateIndex == r.in.Job.CreateIndex
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
