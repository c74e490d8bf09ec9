package state

import (
	"fmt"

	"github.com/droverhq/drover/structs"
)

// ApplyPlanResults commits a plan; see ApplyPlanResultsTxn.
func (s *Store) ApplyPlanResults(index uint64, req *structs.ApplyPlanResultsRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.ApplyPlanResultsTxn(t, req) })
}

// ApplyPlanResultsTxn commits the accepted part of a plan in t, in this
// order: the deployment (created with RequireProgressBy = UpdatedAt +
// ProgressDeadline, or its configuration updated), deployment status
// changes (unknown or terminal deployments skipped), stops, in-place
// updates, placements (which count into their deployment), follow-up
// evals. Allocations without a Job get req.Job.
func (s *Store) ApplyPlanResultsTxn(t *WriteTxn, req *structs.ApplyPlanResultsRequest) error {
	if req.Deployment != nil {
		if err := s.UpsertDeploymentTxn(t, req.Deployment, req.UpdatedAt); err != nil {
			return err
		}
	}
	for _, u := range req.DeploymentUpdates {
		if err := s.UpdateDeploymentStatusTxn(t, u, req.UpdatedAt, false); err != nil {
			return err
		}
	}
	for _, stop := range req.AllocsStopped {
		if stop == nil {
			return fmt.Errorf("state: nil alloc stop: %w", ErrInvalid)
		}
		if err := s.StopAllocTxn(t, stop, req.UpdatedAt); err != nil {
			return err
		}
	}
	allocs := make([]*structs.Allocation, 0, len(req.AllocsUpdated)+len(req.AllocsPlaced))
	for _, group := range [][]*structs.Allocation{req.AllocsUpdated, req.AllocsPlaced} {
		for _, a := range group {
			if a != nil && a.Job == nil && req.Job != nil {
				c := *a // shallow: only Job changes, and the copy is ours
				c.Job = req.Job
				a = &c
			}
			allocs = append(allocs, a)
		}
	}
	if err := s.UpsertAllocsTxn(t, allocs, req.UpdatedAt); err != nil {
		return err
	}
	return s.UpsertEvalsTxn(t, req.FollowupEvals)
}
