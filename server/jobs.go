package server

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// JobRegisterResponse answers RegisterJob and DeregisterJob, as Nomad's
// job register response.
type JobRegisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	// JobVersion is the version now current (unset after a purge).
	JobVersion uint64
	// SpecChanged is false for an identical re-submission.
	SpecChanged bool
	// Index is the raft index of the entry.
	Index uint64
}

// RegisterJob registers a job version with its job-register evaluation,
// stamped here (ID, trigger, priority, type, times), in one entry; the
// evaluation's priority is the job's unless ctx carries one
// (structs.WithEvalPriority). An
// identical re-submission creates no new version but is evaluated again.
// The job's source, when ctx carries one (structs.WithJobSubmission), is
// kept with the version in the same entry.
func (l *Leader) RegisterJob(ctx context.Context, job *structs.Job) (*JobRegisterResponse, error) {
	return l.registerJob(ctx, job, false, 0)
}

// RegisterJobChecked registers job only if the stored job's JobModifyIndex
// is jobModifyIndex (0: the job must not exist yet), as `job run
// -check-index` asks. The check runs in the same replicated write as the
// registration; a mismatch fails with state.ErrConflict.
func (l *Leader) RegisterJobChecked(ctx context.Context, job *structs.Job, jobModifyIndex uint64) (*JobRegisterResponse, error) {
	return l.registerJob(ctx, job, true, jobModifyIndex)
}

func (l *Leader) registerJob(ctx context.Context, job *structs.Job, enforce bool, jobModifyIndex uint64) (*JobRegisterResponse, error) {
	if job == nil || job.ID == "" {
		return nil, fmt.Errorf("%w: job without ID", ErrInvalidRequest)
	}
	j := job.Copy()
	// Only a revert marks the version it registers (RevertJob, the
	// deployment watcher); a submitted job never restores one.
	j.RevertOf = nil
	if j.Namespace == "" {
		j.Namespace = structs.DefaultNamespace
	}
	if j.Priority == 0 {
		j.Priority = structs.DefaultJobPriority
	}
	if j.Type == "" {
		j.Type = structs.JobTypeService
	}
	cur, err := l.store().Snapshot().JobByID(j.Namespace, j.ID)
	if err != nil {
		return nil, err
	}
	structs.CanonicalizeScaling(j, cur, l.newID)
	now := l.clock.Now().UnixNano()
	// A periodic or parameterized job runs nothing itself, so it gets no
	// evaluation, as Nomad's: the periodic dispatcher launches a periodic
	// job's children, dispatches a parameterized job's.
	var eval *structs.Evaluation
	if !j.IsParent() {
		eval = l.jobEval(j.Namespace, j.ID, j.Type, structs.EvalPriorityOr(ctx, j.Priority), structs.EvalTriggerJobRegister, now)
	}
	req := &structs.JobRegisterRequest{Job: j, Eval: eval, SubmitTime: now,
		EnforceIndex: enforce, JobModifyIndex: jobModifyIndex, Submission: structs.JobSubmissionFrom(ctx)}
	var resp any
	var index uint64
	if v, ok := structs.JobVersionFrom(ctx); ok {
		// A region's copy of a multi-region job, at the version every
		// region takes (httpapi/multiregion_register.go).
		resp, index, err = l.apply(ctx, fsm.JobRegisterAtVersionRequestType, &structs.JobRegisterAtVersionRequest{Register: *req, Version: v})
	} else {
		resp, index, err = l.apply(ctx, fsm.JobRegisterRequestType, req)
	}
	if err != nil {
		return nil, err
	}
	out := &JobRegisterResponse{EvalCreateIndex: index, Index: index}
	if eval != nil {
		out.EvalID = eval.ID
	} else {
		out.EvalCreateIndex = 0
	}
	if r, ok := resp.(*structs.JobRegisterResult); ok && r != nil {
		out.JobModifyIndex, out.JobVersion, out.SpecChanged = r.JobModifyIndex, r.JobVersion, r.SpecChanged
	} else {
		return nil, fmt.Errorf("%w: %T to a job registration", ErrUnexpectedResponse, resp)
	}
	return out, nil
}

// DeregisterJob stops a job (or purges it) with a job-deregister
// evaluation, stamped here, in one entry.
func (l *Leader) DeregisterJob(ctx context.Context, namespace, jobID string, purge bool) (*JobRegisterResponse, error) {
	if jobID == "" {
		return nil, fmt.Errorf("%w: no job ID", ErrInvalidRequest)
	}
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	typ, prio := structs.JobTypeService, structs.DefaultJobPriority
	if j, err := l.store().Snapshot().JobByID(namespace, jobID); err != nil {
		return nil, err
	} else if j != nil {
		typ, prio = j.Type, j.Priority
	}
	now := l.clock.Now().UnixNano()
	eval := l.jobEval(namespace, jobID, typ, structs.EvalPriorityOr(ctx, prio), structs.EvalTriggerJobDeregister, now)
	req := &structs.JobDeregisterRequest{Namespace: namespace, JobID: jobID, Purge: purge, Eval: eval, SubmitTime: now}
	resp, index, err := l.apply(ctx, fsm.JobDeregisterRequestType, req)
	if err != nil {
		return nil, err
	}
	out := &JobRegisterResponse{EvalID: eval.ID, EvalCreateIndex: index, Index: index}
	if r, ok := resp.(*structs.JobRegisterResult); ok && r != nil {
		out.JobModifyIndex, out.JobVersion, out.SpecChanged = r.JobModifyIndex, r.JobVersion, r.SpecChanged
	}
	return out, nil
}

func (l *Leader) jobEval(ns, jobID, typ string, prio int, trigger string, now int64) *structs.Evaluation {
	return &structs.Evaluation{
		ID: l.newID(), Namespace: ns, Priority: prio, Type: typ, TriggeredBy: trigger,
		JobID: jobID, Status: structs.EvalStatusPending, CreateTime: now, ModifyTime: now,
	}
}
