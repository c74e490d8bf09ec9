package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/structs"
)

// PUT (or POST) /v1/allocation/{id}/stop stops an allocation and has it
// replaced, as Nomad's alloc stop: the leader marks it for migration and
// writes an alloc-stop evaluation of its job in one entry; the answer is
// Nomad's AllocStopResponse {"EvalID", "Index"}. 404 for an unknown
// allocation, 400 for one already stopped or whose tasks have all ended.
// ?reschedule=true marks the allocation for rescheduling too
// (DesiredTransition.Reschedule) and ?no_shutdown_delay=true marks it
// NoShutdownDelay, as Nomad's: its client kills the tasks without their
// shutdown_delay.

func init() {
	register(
		route{"PUT /v1/allocation/{id}/stop", writeRoute, nsCap(acl.NamespaceCapabilityAllocLifecycle), (*Server).allocStop},
		route{"POST /v1/allocation/{id}/stop", writeRoute, nsCap(acl.NamespaceCapabilityAllocLifecycle), (*Server).allocStop},
	)
}

// AllocStopBackend is what the stop endpoint needs beyond Backend: the
// leader's StopAlloc (server.Leader.StopAlloc). A Backend that does not
// implement it answers 501.
type AllocStopBackend interface {
	// StopAlloc marks the allocation for migration with an alloc-stop
	// evaluation; errors wrap state.ErrNotFound for an unknown
	// allocation and ErrAllocNotRunning for one that does not run.
	StopAlloc(ctx context.Context, allocID string, opts structs.AllocStopOptions) (*AllocStopResponse, error)
}

// ErrAllocNotRunning: the allocation is already stopped or has ended
// (400).
var ErrAllocNotRunning = errors.New("allocation not running")

// AllocStopResponse answers PUT /v1/allocation/{id}/stop, in Nomad's
// shape.
type AllocStopResponse struct {
	EvalID string
	Index  uint64
}

func (s *Server) allocStop(w http.ResponseWriter, r *http.Request) (any, error) {
	sb, ok := s.backend.(AllocStopBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: alloc stop unavailable")
	}
	id := r.PathValue("id")
	a, err := s.backend.State().Snapshot().AllocByID(id)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, Errorf(http.StatusNotFound, "alloc not found: %s", id)
	}
	if err := checkNamespace(r, a.Namespace); err != nil {
		return nil, err
	}
	var opts structs.AllocStopOptions
	if opts.Reschedule, err = queryBool(r, "reschedule"); err != nil {
		return nil, err
	}
	if opts.NoShutdownDelay, err = queryBool(r, "no_shutdown_delay"); err != nil {
		return nil, err
	}
	out, err := sb.StopAlloc(r.Context(), id, opts)
	if errors.Is(err, ErrAllocNotRunning) {
		return nil, &CodedError{Code: http.StatusBadRequest, Msg: err.Error(), Err: err}
	}
	if err != nil {
		return nil, err
	}
	s.setMeta(w, out.Index)
	return out, nil
}
