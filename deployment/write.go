package deployment

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/structs"
)

// write turns a decision into replicated writes, each stamped with the
// decision's time. A status change, a promotion, a mark for replacement
// and a bare evaluation are each one entry; the evaluation rides with the
// first of them. Success writes the job's stability before the status, so
// that a leader lost between the two leaves a still-active deployment
// that the next leader completes again (both writes are idempotent).
func (w *Watcher) write(ctx context.Context, obs Observation, dec Decision) error {
	d, now := obs.Deployment, obs.Now
	var eval *structs.Evaluation
	if dec.CreateEval {
		eval = w.newEval(obs, now)
	}
	take := func() *structs.Evaluation {
		e := eval
		eval = nil
		return e
	}

	if dec.Stable {
		req := &structs.JobStabilityRequest{Namespace: d.Namespace, JobID: d.JobID, JobVersion: d.JobVersion, Stable: true}
		if err := w.writer.UpdateJobStability(ctx, req); err != nil {
			return fmt.Errorf("marking job version stable: %w", err)
		}
	}
	if dec.Promote {
		req := &structs.DeploymentPromoteRequest{DeploymentID: d.ID, Groups: dec.PromoteGroups, Eval: take(), PromotedAt: now,
			DecidedOn: d.StatusSeen()}
		if err := w.writer.PromoteDeployment(ctx, req); err != nil {
			return fmt.Errorf("promoting: %w", err)
		}
		// The store drops the promotion wording itself; any other
		// description change waits for the next pass, unless zones move
		// (or ordered groups) in the same decision: their status update
		// then carries the description the promotion leaves (not the
		// stored one, which still asks for promotion).
		// Wait reasons likewise wait for that pass, which the
		// promotion's write wakes: a status update of their own would
		// carry the stored description back.
		if !dec.changesZones() && !dec.changesGroups() {
			dec.StatusDescription = ""
			dec.WaitReasons = nil
		}
	}
	if len(dec.Analyses) > 0 {
		// Before the status: the runs of a deployment that ended are
		// not written (a success ends its background runs). The wait
		// reasons ride with the runs; without runs, with the status.
		req := &structs.DeploymentAnalysisRequest{DeploymentID: d.ID, Updates: dec.Analyses,
			WaitReasons: dec.WaitReasons, UpdatedAt: now.UnixNano()}
		if err := w.writer.UpdateDeploymentAnalysis(ctx, req); err != nil {
			return fmt.Errorf("updating analysis runs: %w", err)
		}
		dec.WaitReasons = nil
	}
	if dec.writesStatus() {
		req := &structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: statusUpdate(d, dec),
			UpdatedAt:        now.UnixNano(),
		}
		if dec.RevertTo != nil {
			// An auto revert (auto_revert, on_failure = "revert"): the
			// version registered says which one it restores, so that its
			// deployment skips canaries, first batch and checkpoints.
			job := dec.RevertTo.Copy()
			job.Stable = false
			v := dec.RevertTo.Version
			job.RevertOf = &v
			req.Job = job
		}
		if dec.Status != "" || len(dec.ZoneStates) > 0 || len(dec.GroupStates) > 0 || len(dec.WaitReasons) > 0 {
			// A zone or group that starts rolling is rolled by this pass;
			// a pass asked for with a new wait reason rides with it, so
			// that the sentence costs no entry of its own.
			req.Eval = take()
		}
		if err := w.writer.UpdateDeploymentStatus(ctx, req); err != nil {
			return fmt.Errorf("updating status: %w", err)
		}
	}
	if len(dec.MarkForReschedule) > 0 {
		yes := true
		req := &structs.AllocUpdateDesiredTransitionRequest{
			Allocs:    make(map[string]*structs.DesiredTransition, len(dec.MarkForReschedule)),
			UpdatedAt: now.UnixNano(),
		}
		for _, id := range dec.MarkForReschedule {
			req.Allocs[id] = &structs.DesiredTransition{Reschedule: &yes}
		}
		if e := take(); e != nil {
			req.Evals = []*structs.Evaluation{e}
		}
		if err := w.writer.UpdateAllocDesiredTransition(ctx, req); err != nil {
			return fmt.Errorf("marking allocs for replacement: %w", err)
		}
	}
	if e := take(); e != nil {
		if err := w.writer.UpsertEvals(ctx, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{e}}); err != nil {
			return fmt.Errorf("creating evaluation: %w", err)
		}
	}
	return nil
}

// statusUpdate fills the unchanged half of a status change from d, and
// carries the decision's bookkeeping and its zone and group transitions. ResumeAt is the decision's on a
// pause decision (zero holds the deployment); a change that leaves a
// paused deployment paused otherwise keeps its ResumeAt.
func statusUpdate(d *structs.Deployment, dec Decision) *structs.DeploymentStatusUpdate {
	u := &structs.DeploymentStatusUpdate{
		DeploymentID: d.ID, Status: dec.Status, StatusDescription: dec.StatusDescription,
		CheckpointsReached: dec.CheckpointsReached, FailuresAtPause: dec.FailuresAtPause,
		ZoneStates: dec.ZoneStates, ZoneDoneAt: dec.ZoneDoneAt,
		GroupStates: dec.GroupStates, GroupDoneAt: dec.GroupDoneAt,
		WaitReasons: dec.WaitReasons,
		DecidedOn:   d.StatusSeen(),
	}
	switch {
	case dec.Status == structs.DeploymentStatusPaused:
		u.ResumeAt = dec.ResumeAt
	case dec.Status == "" && d.Status == structs.DeploymentStatusPaused:
		u.ResumeAt = d.ResumeAt
	}
	if u.Status == "" {
		u.Status = d.Status
	}
	if u.StatusDescription == "" {
		u.StatusDescription = d.StatusDescription
	}
	return u
}

// newEval returns the evaluation a decision asks for, for the job the
// deployment belongs to.
func (w *Watcher) newEval(obs Observation, now time.Time) *structs.Evaluation {
	d := obs.Deployment
	job := obs.LatestJob
	if job == nil {
		job = obs.Job
	}
	e := &structs.Evaluation{
		ID:           w.newID(),
		Namespace:    d.Namespace,
		TriggeredBy:  structs.EvalTriggerDeploymentWatcher,
		JobID:        d.JobID,
		DeploymentID: d.ID,
		Status:       structs.EvalStatusPending,
		CreateTime:   now.UnixNano(),
		ModifyTime:   now.UnixNano(),
		Priority:     structs.DefaultJobPriority,
		Type:         structs.JobTypeService,
	}
	if job != nil {
		e.Priority = job.Priority
		e.Type = job.Type
		e.JobModifyIndex = job.JobModifyIndex
	}
	return e
}
