package server

import (
	"github.com/droverhq/drover/scheduler"
	"github.com/droverhq/drover/structs"
)

// planSubmission is a worker's plan as the plan applier takes it: the
// reconciler's plan with the placer's allocations, ready to check and
// commit.
type planSubmission struct {
	evalID string
	job    *structs.Job
	// placed are the new allocations, each on a node, in plan order.
	placed []*structs.Allocation
	// replaces maps a placed alloc's ID to the stop of the alloc it
	// replaces; the stop is applied only if the placement is accepted.
	replaces map[string]*structs.AllocStopUpdate
	// stops are applied whatever becomes of the placements.
	stops             []*structs.AllocStopUpdate
	updated           []*structs.Allocation
	deployment        *structs.Deployment
	deploymentUpdates []*structs.DeploymentStatusUpdate
	followupEvals     []*structs.Evaluation
	// outcome is the evaluation's own status update (and the evaluations
	// it creates or cancels), written with the plan's last entry when the
	// applier accepts every placement, so that finishing the evaluation
	// costs no Raft round trip of its own. Otherwise the worker plans
	// again and writes the outcome of its last attempt itself.
	outcome []*structs.Evaluation

	resp chan planResult
}

// planResult is the plan applier's answer.
type planResult struct {
	// index is the raft index of the committed entry, or the state index
	// the plan was checked against when nothing needed committing.
	index uint64
	// rejected are the IDs of placed allocs that no longer fit.
	rejected []string
	// finished reports that the submission's outcome was written with
	// the plan.
	finished bool
	err      error
}

// noop reports whether the submission changes nothing.
func (p *planSubmission) noop() bool {
	return len(p.placed) == 0 && len(p.stops) == 0 && len(p.updated) == 0 && p.deployment == nil &&
		len(p.deploymentUpdates) == 0 && len(p.followupEvals) == 0
}

// newSubmission turns a reconciled and placed plan into a submission.
// Placements that found no node are left out; the allocs they would have
// replaced keep running.
func newSubmission(job *structs.Job, plan *scheduler.Plan, placed *scheduler.PlaceResult, allocs []*structs.Allocation) *planSubmission {
	p := &planSubmission{
		evalID: plan.EvalID, job: job, replaces: map[string]*structs.AllocStopUpdate{},
		deployment: plan.Deployment, followupEvals: plan.FollowupEvals,
		resp: make(chan planResult, 1),
	}
	byPlacement := map[string]scheduler.Placement{}
	for _, pl := range plan.Place {
		byPlacement[pl.AllocID] = pl
	}
	if placed != nil {
		for _, a := range placed.Allocs {
			p.placed = append(p.placed, a)
			if pl, ok := byPlacement[a.ID]; ok && pl.Replaces != "" {
				p.replaces[a.ID] = &structs.AllocStopUpdate{AllocID: pl.Replaces, DesiredDescription: pl.ReplaceDescription}
			}
		}
	}
	for _, s := range plan.Stop {
		if s.Alloc == nil {
			continue
		}
		p.stops = append(p.stops, &structs.AllocStopUpdate{
			AllocID: s.Alloc.ID, DesiredDescription: s.Description, ClientStatus: s.ClientStatus,
		})
	}
	p.updated = append(p.updated, plan.InPlace...)
	if len(plan.FollowupAllocs) > 0 {
		byID := make(map[string]*structs.Allocation, len(allocs))
		for _, a := range allocs {
			byID[a.ID] = a
		}
		for _, link := range plan.FollowupAllocs {
			if a := byID[link.AllocID]; a != nil {
				c := a.Copy()
				c.FollowupEvalID = link.EvalID
				p.updated = append(p.updated, c)
			}
		}
	}
	for _, u := range plan.DeploymentUpdates {
		p.deploymentUpdates = append(p.deploymentUpdates, &structs.DeploymentStatusUpdate{
			DeploymentID: u.DeploymentID, Status: u.Status, StatusDescription: u.StatusDescription,
			AllPlaced: u.AllPlaced,
		})
	}
	return p
}
