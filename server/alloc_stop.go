package server

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// ErrAllocNotFound: no allocation has the ID.
var ErrAllocNotFound = fmt.Errorf("alloc %w", state.ErrNotFound)

// AllocStopResponse answers StopAlloc, as Nomad's AllocStopResponse.
type AllocStopResponse struct {
	// EvalID is the evaluation that replaces the allocation.
	EvalID string
	// Index is the raft index of the entry.
	Index uint64
}

// StopAlloc stops an allocation and has it replaced, as Nomad's alloc
// stop: the allocation is marked for migration (DesiredTransition.Migrate)
// and an alloc-stop evaluation of its job is written in the same entry;
// the scheduler stops it and places a replacement, the job keeping its
// count; opts add Nomad's marks (structs.AllocStopOptions). An unknown
// allocation wraps ErrAllocNotFound; one the servers
// already stopped, or whose tasks have all ended, ErrInvalidRequest.
func (l *Leader) StopAlloc(ctx context.Context, allocID string, opts structs.AllocStopOptions) (*AllocStopResponse, error) {
	snap := l.store().Snapshot()
	a, err := snap.AllocByID(allocID)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, fmt.Errorf("%w: %s", ErrAllocNotFound, allocID)
	}
	switch {
	case a.DesiredStatus != structs.AllocDesiredStatusRun:
		return nil, invalidRequest("allocation %s is already stopped (desired status %q)", a.ID, a.DesiredStatus)
	case a.ClientTerminalStatus():
		return nil, invalidRequest("allocation %s has ended (client status %q)", a.ID, a.ClientStatus)
	}
	typ, prio, modify := structs.JobTypeService, structs.DefaultJobPriority, uint64(0)
	job, err := snap.JobByID(a.Namespace, a.JobID)
	if err != nil {
		return nil, err
	}
	switch {
	case job != nil:
		typ, prio, modify = job.Type, job.Priority, job.JobModifyIndex
	case a.Job != nil:
		typ, prio = a.Job.Type, a.Job.Priority
	}
	now := l.clock.Now().UnixNano()
	eval := l.jobEval(a.Namespace, a.JobID, typ, prio, structs.EvalTriggerAllocStop, now)
	eval.JobModifyIndex = modify
	yes := true
	tr := &structs.DesiredTransition{Migrate: &yes}
	if opts.Reschedule {
		tr.Reschedule = &yes
	}
	if opts.NoShutdownDelay {
		tr.NoShutdownDelay = &yes
	}
	req := &structs.AllocUpdateDesiredTransitionRequest{
		Allocs:    map[string]*structs.DesiredTransition{a.ID: tr},
		Evals:     []*structs.Evaluation{eval},
		UpdatedAt: now,
	}
	_, index, err := l.apply(ctx, fsm.AllocUpdateDesiredTransitionRequestType, req)
	if err != nil {
		return nil, err
	}
	return &AllocStopResponse{EvalID: eval.ID, Index: index}, nil
}

// requestError is ErrInvalidRequest with a message that says it all.
type requestError string

func (e requestError) Error() string { return string(e) }
func (e requestError) Unwrap() error { return ErrInvalidRequest }

func invalidRequest(format string, args ...any) error {
	return requestError(fmt.Sprintf(format, args...))
}
