package server

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// RevertJob registers an earlier version of a job again, as a new version
// marked RevertOf that version, with a job-register evaluation, in one
// entry. With enforcePriorVersion
// set, the job's current version must be that one. Reverting to the
// current version is refused (ErrRevertRefused, matching
// state.ErrInvalid); an unknown job or version wraps state.ErrNotFound.
func (l *Leader) RevertJob(ctx context.Context, namespace, jobID string, version uint64, enforcePriorVersion *uint64) (*structs.JobRevertResponse, error) {
	if jobID == "" {
		return nil, fmt.Errorf("%w: no job ID", ErrInvalidRequest)
	}
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	snap := l.store().Snapshot()
	cur, err := snap.JobByID(namespace, jobID)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, fmt.Errorf("%w: %s", ErrJobNotFound, jobID)
	}
	if enforcePriorVersion != nil && cur.Version != *enforcePriorVersion {
		return nil, refuse(fmt.Errorf("%w: current job has version %d; enforcing version %d",
			ErrRevertRefused, cur.Version, *enforcePriorVersion))
	}
	if cur.Version == version {
		return nil, refuse(fmt.Errorf("%w: can't revert to current version %d", ErrRevertRefused, version))
	}
	target, err := snap.JobByIDAndVersion(namespace, jobID, version)
	if err != nil {
		return nil, err
	}
	if target == nil {
		return nil, fmt.Errorf("%w: job %q has no version %d", ErrJobVersionNotFound, jobID, version)
	}
	j := target.Copy()
	j.Stable = false
	// The version registered says which one it restores, so that its
	// deployment skips canaries, first batch and checkpoints (C.5).
	v := target.Version
	j.RevertOf = &v
	structs.CanonicalizeScaling(j, cur, l.newID)
	now := l.clock.Now().UnixNano()
	var eval *structs.Evaluation
	if !j.IsParent() {
		eval = l.jobEval(namespace, jobID, j.Type, j.Priority, structs.EvalTriggerJobRegister, now)
	}
	resp, index, err := l.apply(ctx, fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: j, Eval: eval, SubmitTime: now})
	if err != nil {
		return nil, err
	}
	out := &structs.JobRevertResponse{EvalCreateIndex: index, Index: index}
	if eval != nil {
		out.EvalID = eval.ID
	} else {
		out.EvalCreateIndex = 0
	}
	r, ok := resp.(*structs.JobRegisterResult)
	if !ok || r == nil {
		return nil, fmt.Errorf("%w: %T to a job revert", ErrUnexpectedResponse, resp)
	}
	out.JobModifyIndex, out.JobVersion = r.JobModifyIndex, r.JobVersion
	return out, nil
}

// SetJobStability marks a job version stable or not (an operator pinning
// a revert target), in one entry. An unknown job or version wraps
// state.ErrNotFound.
func (l *Leader) SetJobStability(ctx context.Context, namespace, jobID string, version uint64, stable bool) (*structs.JobStabilityResponse, error) {
	if jobID == "" {
		return nil, fmt.Errorf("%w: no job ID", ErrInvalidRequest)
	}
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	snap := l.store().Snapshot()
	v, err := snap.JobByIDAndVersion(namespace, jobID, version)
	if err != nil {
		return nil, err
	}
	if v == nil {
		cur, err := snap.JobByID(namespace, jobID)
		if err != nil {
			return nil, err
		}
		if cur == nil {
			return nil, fmt.Errorf("%w: %s", ErrJobNotFound, jobID)
		}
		return nil, fmt.Errorf("%w: job %q has no version %d", ErrJobVersionNotFound, jobID, version)
	}
	req := &structs.JobStabilityRequest{Namespace: namespace, JobID: jobID, JobVersion: version, Stable: stable}
	_, index, err := l.apply(ctx, fsm.JobStabilityRequestType, req)
	if err != nil {
		return nil, err
	}
	return &structs.JobStabilityResponse{JobModifyIndex: index, Index: index}, nil
}
