package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// ErrScaleConflict: the job changed between the read of its current
// version and the scaling write; nothing was written.
var ErrScaleConflict = errors.New("the job changed while it was being scaled; try again")

// ScaleRequest is one `job scale`: a group's new count, or (Count nil) a
// scaling event that changes no count, as Nomad's ScalingRequest.
type ScaleRequest struct {
	Namespace, JobID, Group string
	Count                   *int64
	Message                 string
	Error                   bool
	Meta                    map[string]any
}

// ScaleJob sets a group's count as a new version of the job, with its
// job-register evaluation and a scaling event, in one entry; it rolls out
// as a count change in a job file does. The write is conditional on the
// version read here, so a job changed meanwhile is never overwritten
// (ErrScaleConflict). Without a count, only the event is recorded.
func (l *Leader) ScaleJob(ctx context.Context, req ScaleRequest) (*JobRegisterResponse, error) {
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	// The request is checked before the job is looked up, as Nomad's: a
	// scaling without a group is a 400 whether the job exists or not.
	if req.Group == "" {
		return nil, errNoScaleGroup
	}
	job, err := l.store().Snapshot().JobByID(ns, req.JobID)
	if err != nil {
		return nil, err
	}
	if job == nil {
		return nil, fmt.Errorf("%w: %q", ErrJobNotFound, req.JobID)
	}
	if err := scalable(job, req); err != nil {
		return nil, err
	}
	now := l.clock.Now().UnixNano()
	tg := job.LookupTaskGroup(req.Group)
	ev := &structs.ScalingEvent{
		Time: uint64(now), Count: req.Count, PreviousCount: int64(tg.Count),
		Message: req.Message, Error: req.Error, Meta: req.Meta,
	}
	scaling := &structs.ScalingEventRequest{Namespace: ns, JobID: job.ID, TaskGroup: req.Group, Event: ev}
	if req.Count == nil {
		_, index, err := l.apply(ctx, fsm.ScalingEventRequestType, scaling)
		if err != nil {
			return nil, err
		}
		return &JobRegisterResponse{JobModifyIndex: job.JobModifyIndex, JobVersion: job.Version, Index: index}, nil
	}
	scaled := job.Copy()
	scaled.LookupTaskGroup(req.Group).Count = int(*req.Count)
	scaled.RevertOf = nil
	eval := l.jobEval(ns, job.ID, job.Type, job.Priority, structs.EvalTriggerJobScaling, now)
	id := eval.ID
	ev.EvalID = &id
	resp, index, err := l.apply(ctx, fsm.JobRegisterRequestType, &structs.JobRegisterRequest{
		Job: scaled, Eval: eval, SubmitTime: now, EnforceIndex: true, JobModifyIndex: job.JobModifyIndex, Scaling: scaling})
	if errors.Is(err, state.ErrConflict) {
		return nil, fmt.Errorf("%w: %w", ErrScaleConflict, err)
	}
	if err != nil {
		return nil, err
	}
	out := &JobRegisterResponse{EvalID: eval.ID, EvalCreateIndex: index, Index: index}
	if r, ok := resp.(*structs.JobRegisterResult); ok && r != nil {
		out.JobModifyIndex, out.JobVersion, out.SpecChanged = r.JobModifyIndex, r.JobVersion, r.SpecChanged
	}
	return out, nil
}

var errNoScaleGroup = fmt.Errorf("%w: the task group to scale is required (Target.Group)", ErrInvalidRequest)

// scalable refuses what Nomad refuses: a group the job lacks, a negative
// count, a job of a type without counts, a stopped job, an empty event.
func scalable(job *structs.Job, req ScaleRequest) error {
	if req.Group == "" {
		return errNoScaleGroup
	}
	if job.LookupTaskGroup(req.Group) == nil {
		return fmt.Errorf("%w: task group %q specified for scaling does not exist in job", ErrInvalidRequest, req.Group)
	}
	if req.Count == nil {
		if req.Message == "" && !req.Error {
			return fmt.Errorf("%w: a scaling request needs a Count, or a Message or Error to record", ErrInvalidRequest)
		}
		return nil
	}
	switch {
	case *req.Count < 0:
		return fmt.Errorf("%w: scaling action count can't be negative", ErrInvalidRequest)
	case job.Type == structs.JobTypeSystem || job.Type == structs.JobTypeSysBatch:
		return fmt.Errorf("%w: cannot scale jobs of type %q", ErrInvalidRequest, job.Type)
	case job.Stop:
		return fmt.Errorf("%w: cannot scale a stopped job", ErrInvalidRequest)
	}
	// As Nomad's: the group's scaling block bounds the count, enabled or
	// not.
	if p := job.LookupTaskGroup(req.Group).Scaling; p != nil {
		switch {
		case *req.Count < p.Min:
			return fmt.Errorf("%w: group count %d is less than the scaling policy's minimum %d (group %q scales from %d to %d)",
				ErrInvalidRequest, *req.Count, p.Min, req.Group, p.Min, p.Max)
		case *req.Count > p.Max:
			return fmt.Errorf("%w: group count %d is greater than the scaling policy's maximum %d (group %q scales from %d to %d)",
				ErrInvalidRequest, *req.Count, p.Max, req.Group, p.Min, p.Max)
		}
	}
	return nil
}
