package agent

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/server"
)

var (
	_ httpapi.NodeOpsBackend     = (*Agent)(nil)
	_ httpapi.JobEvaluateBackend = (*Agent)(nil)
)

// EvaluateNode creates a node's node-update evaluations
// (httpapi.NodeOpsBackend; server.Leader.EvaluateNode).
func (a *Agent) EvaluateNode(ctx context.Context, nodeID string) (*httpapi.NodeUpdateResponse, error) {
	r, err := a.leader.EvaluateNode(ctx, nodeID)
	if err != nil {
		return nil, nodeUpdateError(err)
	}
	return &httpapi.NodeUpdateResponse{NodeModifyIndex: r.NodeModifyIndex, EvalIDs: r.EvalIDs, EvalCreateIndex: r.EvalCreateIndex}, nil
}

// PurgeNode removes a node from the state and evaluates its jobs
// (httpapi.NodeOpsBackend; server.Leader.PurgeNode).
func (a *Agent) PurgeNode(ctx context.Context, nodeID string) (*httpapi.NodeUpdateResponse, error) {
	r, err := a.leader.PurgeNode(ctx, nodeID)
	if err != nil {
		return nil, nodeUpdateError(err)
	}
	return &httpapi.NodeUpdateResponse{NodeModifyIndex: r.NodeModifyIndex, EvalIDs: r.EvalIDs, EvalCreateIndex: r.EvalCreateIndex}, nil
}

// EvaluateJob creates a new evaluation of a job
// (httpapi.JobEvaluateBackend; server.Leader.EvaluateJob): a periodic or
// parameterized job is a 400, an unknown one a 404.
func (a *Agent) EvaluateJob(ctx context.Context, namespace, jobID string, forceReschedule bool) (*httpapi.JobRegisterResponse, error) {
	r, err := a.leader.EvaluateJob(ctx, namespace, jobID, forceReschedule)
	switch {
	case errors.Is(err, server.ErrInvalidRequest):
		return nil, httpapi.Errorf(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), "server: invalid request: "))
	case errors.Is(err, server.ErrJobNotFound):
		return nil, httpapi.Errorf(http.StatusNotFound, "job not found: %s", jobID)
	case err != nil:
		return nil, err
	}
	return &httpapi.JobRegisterResponse{EvalID: r.EvalID, EvalCreateIndex: r.EvalCreateIndex, JobModifyIndex: r.JobModifyIndex, Index: r.Index}, nil
}
