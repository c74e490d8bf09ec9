package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// Dispatch makes a child of a parameterized job, as Nomad's: a copy of
// the job (ID "<job>/dispatch-<unix time>-<8 hex>", ParentID the job,
// Dispatched) with the dispatch's meta laid over the job's and its
// payload, registered with its evaluation in one entry. The ID is minted
// here, on the leader, never in the state machine. A child of a periodic
// parameterized job is itself periodic: it gets no evaluation, and the
// periodic dispatcher launches its own children.

// DispatchRequest is one dispatch, as Nomad's JobDispatchRequest.
type DispatchRequest struct {
	Namespace, JobID string
	Payload          []byte
	Meta             map[string]string
	// IdempotencyToken: a dispatch with the token of a child that still
	// exists answers that child instead of making another. Dispatches
	// are serialised on the leader, so two at once with one token make
	// one child.
	IdempotencyToken string
	// IDPrefixTemplate is put before the dispatch time in the child's ID.
	IDPrefixTemplate string
	// Priority, when not 0, is the child's priority instead of the job's.
	Priority int
}

// DispatchResponse answers Dispatch, as Nomad's JobDispatchResponse.
type DispatchResponse struct {
	DispatchedJobID string
	EvalID          string
	EvalCreateIndex uint64
	JobCreateIndex  uint64
	Index           uint64
}

// Dispatch registers a child of a parameterized job. An invalid dispatch
// (not parameterized, stopped, meta or payload refused by the job's
// parameterized block) wraps ErrInvalidRequest and names the field.
func (l *Leader) Dispatch(ctx context.Context, req DispatchRequest) (*DispatchResponse, error) {
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	l.dispatchMu.Lock()
	defer l.dispatchMu.Unlock()
	snap := l.store().Snapshot()
	parent, err := snap.JobByID(ns, req.JobID)
	if err != nil {
		return nil, err
	}
	if parent == nil {
		return nil, fmt.Errorf("%w: %q", ErrJobNotFound, req.JobID)
	}
	switch {
	case !parent.IsParameterized():
		return nil, fmt.Errorf("%w: job %q is not a parameterized job (it has no parameterized block)", ErrInvalidRequest, req.JobID)
	case parent.Stop:
		return nil, fmt.Errorf("%w: job %q is stopped", ErrInvalidRequest, req.JobID)
	case req.Priority != 0 && (req.Priority < structs.MinJobPriority || req.Priority > structs.MaxJobPriority):
		return nil, fmt.Errorf("%w: Priority must be between %d and %d (got %d)", ErrInvalidRequest, structs.MinJobPriority, structs.MaxJobPriority, req.Priority)
	case strings.ContainsAny(req.IDPrefixTemplate, "/ \t\r\n\x00"):
		return nil, fmt.Errorf("%w: IdPrefixTemplate must not contain '/', spaces or control characters (got %q)", ErrInvalidRequest, req.IDPrefixTemplate)
	}
	if err := structs.ValidateDispatch(parent.ParameterizedJob, req.Meta, req.Payload); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	if req.IdempotencyToken != "" {
		children, err := snap.PeriodicChildren(ns, parent.ID)
		if err != nil {
			return nil, err
		}
		for _, c := range children {
			if c.Dispatched && c.DispatchIdempotencyToken == req.IdempotencyToken {
				return &DispatchResponse{DispatchedJobID: c.ID, JobCreateIndex: c.CreateIndex, Index: c.ModifyIndex}, nil
			}
		}
	}
	now := l.clock.Now()
	child := parent.Copy()
	child.ID = structs.DispatchChildID(parent.ID, req.IDPrefixTemplate, now, hex8(l.newID()))
	child.Name = child.ID
	child.ParentID = parent.ID
	child.Dispatched = true
	if req.Priority != 0 {
		child.Priority = req.Priority
	}
	child.DispatchIdempotencyToken = req.IdempotencyToken
	child.Payload = append([]byte(nil), req.Payload...)
	if len(req.Meta) > 0 {
		if child.Meta == nil {
			child.Meta = map[string]string{}
		}
		maps.Copy(child.Meta, req.Meta)
	}
	child.Status, child.StatusDescription = "", ""
	child.Stable, child.Version, child.RevertOf = false, 0, nil
	// A child is scaled as its own job: its policies are its own.
	structs.CanonicalizeScaling(child, nil, l.newID)
	var eval *structs.Evaluation
	if !child.IsPeriodic() {
		eval = l.jobEval(ns, child.ID, child.Type, child.Priority, structs.EvalTriggerJobRegister, now.UnixNano())
	}
	// EnforceIndex with 0: the child must not exist yet.
	_, index, err := l.apply(ctx, fsm.JobRegisterRequestType, &structs.JobRegisterRequest{
		Job: child, Eval: eval, SubmitTime: now.UnixNano(), EnforceIndex: true})
	if errors.Is(err, state.ErrConflict) {
		return nil, fmt.Errorf("dispatching %s: a job of that ID exists already: %w", child.ID, err)
	}
	if err != nil {
		return nil, err
	}
	l.logger.Info("parameterized job dispatched", "job", parent.ID, "child", child.ID)
	out := &DispatchResponse{DispatchedJobID: child.ID, JobCreateIndex: index, Index: index}
	if eval != nil {
		out.EvalID, out.EvalCreateIndex = eval.ID, index
	}
	return out, nil
}

// hex8 is the first 8 hex digits of an ID.
func hex8(id string) string {
	h := strings.ReplaceAll(id, "-", "")
	if len(h) > 8 {
		h = h[:8]
	}
	return h
}
