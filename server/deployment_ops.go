package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The operator verbs on deployments. Each reads the latest local state,
// validates with the pure verbs of the deployment package, stamps the time
// and a new evaluation, and writes one Raft entry. The state machine checks
// again inside the entry's transaction, so a deployment that finished in
// between is refused there (state.ErrDeploymentTerminal).

var (
	// ErrDeploymentNotFound: a verb names a deployment the state does not
	// hold. It wraps state.ErrNotFound.
	ErrDeploymentNotFound = fmt.Errorf("deployment %w", state.ErrNotFound)
	// ErrJobNotFound: a verb names a job the state does not hold. It wraps
	// state.ErrNotFound.
	ErrJobNotFound = fmt.Errorf("job %w", state.ErrNotFound)
	// ErrJobVersionNotFound: a verb names a job version the history does
	// not hold. It wraps state.ErrNotFound.
	ErrJobVersionNotFound = fmt.Errorf("job version %w", state.ErrNotFound)
	// ErrRevertRefused: a revert to the current version, or one whose
	// EnforcePriorVersion does not match.
	ErrRevertRefused = errors.New("can't revert job")
)

// refusal is an operator verb the state does not allow. Its message is the
// verb's own; it matches both its cause and state.ErrInvalid, which the
// HTTP API answers with 400.
type refusal struct{ err error }

func (r refusal) Error() string   { return r.err.Error() }
func (r refusal) Unwrap() []error { return []error{r.err, state.ErrInvalid} }

func refuse(err error) error { return refusal{err} }

// opDeployment reads the deployment and its job version's latest state.
func (l *Leader) opDeployment(id string) (*state.Snapshot, *structs.Deployment, error) {
	if id == "" {
		return nil, nil, fmt.Errorf("%w: no deployment ID", ErrInvalidRequest)
	}
	snap := l.store().Snapshot()
	d, err := snap.DeploymentByID(id)
	if err != nil {
		return nil, nil, err
	}
	if d == nil {
		return nil, nil, fmt.Errorf("%w: %s", ErrDeploymentNotFound, id)
	}
	return snap, d, nil
}

// deploymentEval is the evaluation a verb creates for the deployment's
// job, as the deployment watcher's.
func (l *Leader) deploymentEval(snap *state.Snapshot, d *structs.Deployment, nowNano int64) (*structs.Evaluation, error) {
	e := &structs.Evaluation{
		ID: l.newID(), Namespace: d.Namespace, TriggeredBy: structs.EvalTriggerDeploymentWatcher,
		JobID: d.JobID, DeploymentID: d.ID, Status: structs.EvalStatusPending,
		CreateTime: nowNano, ModifyTime: nowNano,
		Priority: structs.DefaultJobPriority, Type: structs.JobTypeService,
	}
	job, err := snap.JobByID(d.Namespace, d.JobID)
	if err != nil {
		return nil, err
	}
	if job != nil {
		e.Priority, e.Type, e.JobModifyIndex = job.Priority, job.Type, job.JobModifyIndex
	}
	return e, nil
}

// PromoteDeployment promotes the canaries of the named groups, or of every
// canary group with all (or with no groups named). It is refused (matching
// state.ErrInvalid and the deployment package's sentinel) for a terminal
// or paused deployment, an unknown group, nothing to promote, or canaries
// not all healthy ("task group \"web\" has 1/2 healthy allocations").
func (l *Leader) PromoteDeployment(ctx context.Context, id string, groups []string, all bool) (*structs.DeploymentUpdateResponse, error) {
	snap, d, err := l.opDeployment(id)
	if err != nil {
		return nil, err
	}
	allocs, err := snap.AllocsByDeployment(d.ID)
	if err != nil {
		return nil, err
	}
	if all {
		groups = nil
	}
	now := l.clock.Now()
	promoted, err := deployment.Promote(d, groups, allocs, now)
	if err != nil {
		return nil, refuse(err)
	}
	// Name exactly the groups the verb chose, so the state machine checks
	// those and leaves groups promoted earlier alone.
	var chosen []string
	for name, s := range promoted.TaskGroups {
		if s.Promoted && !d.TaskGroups[name].Promoted {
			chosen = append(chosen, name)
		}
	}
	sort.Strings(chosen)
	eval, err := l.deploymentEval(snap, d, now.UnixNano())
	if err != nil {
		return nil, err
	}
	// A promotion by hand ends the chosen groups' running canary
	// analysis runs as "skipped" (E.2), before it promotes: should the
	// promotion's entry fail, the runs are over and a promotion by hand
	// is all they waited for.
	if err := l.applyAnalysis(ctx, d, deployment.PromotedAnalyses(d, chosen), now); err != nil {
		return nil, err
	}
	req := &structs.DeploymentPromoteRequest{DeploymentID: d.ID, Groups: chosen, Eval: eval, PromotedAt: now}
	_, index, err := l.apply(ctx, fsm.DeploymentPromoteRequestType, req)
	if err != nil {
		return nil, err
	}
	return &structs.DeploymentUpdateResponse{EvalID: eval.ID, EvalCreateIndex: index, DeploymentModifyIndex: index, Index: index}, nil
}

// FailDeployment marks an active deployment failed by hand ("Deployment
// marked as failed"), paused or not. When a group reverts on failure
// (auto_revert, on_failure = "revert") and a stable version with another
// spec exists, the same entry registers that version again, marked
// RevertOf it, and RevertedJobVersion names it.
func (l *Leader) FailDeployment(ctx context.Context, id string) (*structs.DeploymentUpdateResponse, error) {
	snap, d, err := l.opDeployment(id)
	if err != nil {
		return nil, err
	}
	job, err := snap.JobByIDAndVersion(d.Namespace, d.JobID, d.JobVersion)
	if err != nil {
		return nil, err
	}
	stable, err := snap.LatestStableJobVersion(d.Namespace, d.JobID)
	if err != nil {
		return nil, err
	}
	now := l.clock.Now()
	failed, revert, err := deployment.Fail(d, job, stable, now)
	if err != nil {
		return nil, refuse(err)
	}
	eval, err := l.deploymentEval(snap, d, now.UnixNano())
	if err != nil {
		return nil, err
	}
	req := &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{
			DeploymentID: d.ID, Status: failed.Status, StatusDescription: failed.StatusDescription,
		},
		Eval: eval, UpdatedAt: now.UnixNano(),
	}
	out := &structs.DeploymentUpdateResponse{EvalID: eval.ID}
	if revert != nil {
		j := revert.Copy()
		j.Stable = false
		v := revert.Version
		j.RevertOf = &v
		req.Job = j
		rv := revert.Version
		out.RevertedJobVersion = &rv
	}
	_, index, err := l.apply(ctx, fsm.DeploymentStatusUpdateRequestType, req)
	if err != nil {
		return nil, err
	}
	out.EvalCreateIndex, out.DeploymentModifyIndex, out.Index = index, index, index
	return out, nil
}

// PauseDeployment pauses (pause = true) or resumes an active deployment.
// Resuming restarts every group's progress deadline and creates an
// evaluation, so the rollout continues at once; pausing creates none.
// Pausing a deployment that waits out a checkpoint delay holds it: the
// update carries no ResumeAt. Resuming one paused on a zone's disruption
// budget turns that zone "rolling" again and clears its failures, in the
// same entry; likewise a failed group of a job that rolls its groups in
// order turns "done" (if it had been done) or "rolling" again.
func (l *Leader) PauseDeployment(ctx context.Context, id string, pause bool) (*structs.DeploymentUpdateResponse, error) {
	snap, d, err := l.opDeployment(id)
	if err != nil {
		return nil, err
	}
	now := l.clock.Now()
	changed, err := deployment.Pause(d, pause, now)
	if err != nil {
		return nil, refuse(err)
	}
	req := &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{
			DeploymentID: d.ID, Status: changed.Status, StatusDescription: changed.StatusDescription,
		},
		UpdatedAt: now.UnixNano(),
	}
	out := &structs.DeploymentUpdateResponse{}
	if !pause {
		// Zones paused on their disruption budget roll again, their
		// failures cleared.
		req.DeploymentUpdate.ZoneStates, req.DeploymentUpdate.ZoneFailedReset = deployment.ResumedZones(d)
		// Failed groups (group_order) are done again if they had been
		// done, else rolling: the watcher checks them again.
		req.DeploymentUpdate.GroupStates = deployment.ResumedGroups(d)
		if req.Eval, err = l.deploymentEval(snap, d, now.UnixNano()); err != nil {
			return nil, err
		}
		out.EvalID = req.Eval.ID
		// Inconclusive analysis runs (and failed ones a pause stopped
		// at) are accepted, before the resume: the watcher would pause
		// again on them.
		if err := l.applyAnalysis(ctx, d, deployment.ResumedAnalyses(d), now); err != nil {
			return nil, err
		}
	}
	_, index, err := l.apply(ctx, fsm.DeploymentStatusUpdateRequestType, req)
	if err != nil {
		return nil, err
	}
	if out.EvalID != "" {
		out.EvalCreateIndex = index
	}
	out.DeploymentModifyIndex, out.Index = index, index
	return out, nil
}

// SetAllocHealth sets the deployment health of the named allocations by
// hand, with an evaluation so the rollout acts on it (the deployment
// watcher fails the deployment if the unhealthy ones call for it). Every
// allocation must belong to the active deployment.
func (l *Leader) SetAllocHealth(ctx context.Context, id string, healthy, unhealthy []string) (*structs.DeploymentUpdateResponse, error) {
	snap, d, err := l.opDeployment(id)
	if err != nil {
		return nil, err
	}
	allocs, err := snap.AllocsByDeployment(d.ID)
	if err != nil {
		return nil, err
	}
	now := l.clock.Now()
	if _, err := deployment.SetAllocHealth(d, healthy, unhealthy, allocs, now); err != nil {
		return nil, refuse(err)
	}
	eval, err := l.deploymentEval(snap, d, now.UnixNano())
	if err != nil {
		return nil, err
	}
	req := &structs.DeploymentAllocHealthRequest{
		DeploymentID:           d.ID,
		HealthyAllocationIDs:   slices.Clone(healthy),
		UnhealthyAllocationIDs: slices.Clone(unhealthy),
		Eval:                   eval,
		Timestamp:              now,
	}
	_, index, err := l.apply(ctx, fsm.DeploymentAllocHealthRequestType, req)
	if err != nil {
		return nil, err
	}
	return &structs.DeploymentUpdateResponse{EvalID: eval.ID, EvalCreateIndex: index, DeploymentModifyIndex: index, Index: index}, nil
}

// applyAnalysis writes run changes of d that an operator's verb makes;
// none is no entry.
func (l *Leader) applyAnalysis(ctx context.Context, d *structs.Deployment, updates []*structs.AnalysisRunUpdate, now time.Time) error {
	if len(updates) == 0 {
		return nil
	}
	req := &structs.DeploymentAnalysisRequest{DeploymentID: d.ID, Updates: updates, UpdatedAt: now.UnixNano()}
	_, _, err := l.apply(ctx, fsm.AnalysisRunRequestType, req)
	return err
}
