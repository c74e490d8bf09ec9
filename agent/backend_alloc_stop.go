package agent

import (
	"context"
	"errors"
	"net/http"

	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/server"
	"github.com/droverhq/drover/structs"
)

var _ httpapi.AllocStopBackend = (*Agent)(nil)

// StopAlloc stops an allocation and has it replaced
// (httpapi.AllocStopBackend; server.Leader.StopAlloc).
func (a *Agent) StopAlloc(ctx context.Context, allocID string, opts structs.AllocStopOptions) (*httpapi.AllocStopResponse, error) {
	r, err := a.leader.StopAlloc(ctx, allocID, opts)
	if errors.Is(err, server.ErrInvalidRequest) {
		return nil, &httpapi.CodedError{Code: http.StatusBadRequest, Msg: err.Error(), Err: httpapi.ErrAllocNotRunning}
	}
	if err != nil {
		return nil, err
	}
	return &httpapi.AllocStopResponse{EvalID: r.EvalID, Index: r.Index}, nil
}
