package state

import (
	"fmt"

	"github.com/droverhq/drover/structs"
)

// RestartJobTxn starts a job restart (structs.JobRestartRequest): its
// deployment and first evaluation, in one transaction. It is refused with
// ErrConflict when the job is gone, stopped, or at another version than the
// one the leader read, or when a deployment of the job is still active (a
// rollout or another restart): the leader checked the same, but another
// entry may have come in between.
func (s *Store) RestartJobTxn(t *WriteTxn, req *structs.JobRestartRequest) error {
	d := req.Deployment
	if d == nil || d.ID == "" || d.JobID == "" || d.Restart == nil || req.Eval == nil {
		return fmt.Errorf("state: job restart without deployment, restart or evaluation: %w", ErrInvalid)
	}
	r := t.reader()
	job, err := r.JobByID(d.Namespace, d.JobID)
	if err != nil {
		return err
	}
	switch {
	case job == nil:
		return fmt.Errorf("state: job %q: %w", d.JobID, ErrNotFound)
	case job.Stop:
		return fmt.Errorf("state: job %q is stopped: %w", d.JobID, ErrConflict)
	case job.Version != d.JobVersion || job.CreateIndex != d.JobCreateIndex:
		return fmt.Errorf("state: job %q is at version %d, not %d: %w", d.JobID, job.Version, d.JobVersion, ErrConflict)
	}
	latest, err := r.LatestDeploymentByJob(d.Namespace, d.JobID)
	if err != nil {
		return err
	}
	if latest.Active() {
		return fmt.Errorf("state: %s: %w", structs.RestartConflictDescription(latest.ID, latest.Status, latest.IsRestart()), ErrConflict)
	}
	if err := s.UpsertDeploymentTxn(t, d, req.UpdatedAt); err != nil {
		return err
	}
	return s.UpsertEvalsTxn(t, []*structs.Evaluation{req.Eval})
}

// RestartJob is RestartJobTxn in its own transaction.
func (s *Store) RestartJob(index uint64, req *structs.JobRestartRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.RestartJobTxn(t, req) })
}
