package server

import (
	"cmp"
	"slices"
	"time"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// healthKey names a deployment that client reports move forward.
type healthKey struct{ namespace, jobID, deploymentID string }

// turnsHealthy reports whether update u is the first healthy verdict of
// existing, a live alloc of a deployment: the moment a rolling deployment
// may start its next replacement (website/rollouts.md).
func turnsHealthy(existing, u *structs.Allocation) bool {
	return existing != nil && existing.DeploymentID != "" && !existing.TerminalStatus() &&
		!existing.IsHealthy() && u.DeploymentStatus != nil && u.DeploymentStatus.Healthy != nil &&
		*u.DeploymentStatus.Healthy
}

// healthEvals returns the evaluations that the first healthy verdicts in
// a batch of client reports call for: one per job whose running
// deployment they move forward, written in the same entry as the health
// itself. The deployment watcher would ask for the same pass once it
// read the health back; asking here saves that read and a Raft round trip
// of its own on every batch of a rollout. None is made when one of the
// job's evaluations already waits to be scheduled (its pass reads this
// health, or the watcher asks for the next once it completes: it compares
// the health's index with what the pass read), nor for a deployment that
// is paused, superseded or awaiting promotion (the watcher decides those),
// nor for one whose current stage has every alloc placed
// (deployment.StagePlaced): the health that completes the stage makes the
// watcher start the next zone or group with its pass, which would
// otherwise queue behind one that places nothing.
func healthEvals(snap *state.Snapshot, keys map[healthKey]bool, now time.Time, newID func() string) ([]*structs.Evaluation, error) {
	sorted := make([]healthKey, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, func(a, b healthKey) int {
		if a.jobID != b.jobID {
			return cmp.Compare(a.jobID, b.jobID)
		}
		return cmp.Compare(a.deploymentID, b.deploymentID)
	})
	var out []*structs.Evaluation
	seen := map[[2]string]bool{}
	for _, k := range sorted {
		if seen[[2]string{k.namespace, k.jobID}] {
			continue
		}
		d, err := snap.DeploymentByID(k.deploymentID)
		if err != nil {
			return nil, err
		}
		if d == nil || d.Status != structs.DeploymentStatusRunning || awaitsPromotion(d) || d.AllPlaced() {
			continue
		}
		job, err := snap.JobByID(k.namespace, k.jobID)
		if err != nil {
			return nil, err
		}
		if job == nil || job.Stopped() || job.Version != d.JobVersion || deployment.StagePlaced(d, job) {
			continue
		}
		evals, err := snap.PendingEvalsByJob(k.namespace, k.jobID)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(evals, func(e *structs.Evaluation) bool { return e.DueBy(now) }) {
			continue
		}
		seen[[2]string{k.namespace, k.jobID}] = true
		out = append(out, &structs.Evaluation{
			ID: newID(), Namespace: k.namespace, Priority: job.Priority, Type: job.Type,
			TriggeredBy: structs.EvalTriggerDeploymentWatcher, JobID: k.jobID,
			JobModifyIndex: job.JobModifyIndex, DeploymentID: d.ID, Status: structs.EvalStatusPending,
			CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
		})
	}
	return out, nil
}

// awaitsPromotion reports whether a canary group of d is not promoted yet.
func awaitsPromotion(d *structs.Deployment) bool {
	for _, s := range d.TaskGroups {
		if s != nil && s.DesiredCanaries > 0 && !s.Promoted {
			return true
		}
	}
	return false
}
