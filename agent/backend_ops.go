package agent

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/server"
	"github.com/droverhq/drover/structs"
)

// The writes that need the leader's services. Each is a write route, so
// the HTTP layer forwards it to the leader first; each is the
// server.Leader method of the same name, which stamps IDs and times and
// writes one Raft entry. On a server that has just lost leadership they
// fail (server.ErrNotLeader or cluster.ErrNotLeader).

// RegisterJob registers a job version with its job-register evaluation,
// conditionally when enforceIndex is set (httpapi.JobRegisterBackend).
func (a *Agent) RegisterJob(ctx context.Context, job *structs.Job, enforceIndex bool, jobModifyIndex uint64) (*httpapi.JobRegisterResponse, error) {
	var (
		r   *server.JobRegisterResponse
		err error
	)
	if enforceIndex {
		r, err = a.leader.RegisterJobChecked(ctx, job, jobModifyIndex)
	} else {
		r, err = a.leader.RegisterJob(ctx, job)
	}
	if err != nil {
		return nil, err
	}
	return &httpapi.JobRegisterResponse{
		EvalID: r.EvalID, EvalCreateIndex: r.EvalCreateIndex, JobModifyIndex: r.JobModifyIndex, Index: r.Index,
	}, nil
}

// DeregisterJob stops or purges a job with its job-deregister evaluation
// (httpapi.JobDeregisterBackend).
func (a *Agent) DeregisterJob(ctx context.Context, namespace, jobID string, purge bool) (*httpapi.JobDeregisterResponse, error) {
	r, err := a.leader.DeregisterJob(ctx, namespace, jobID, purge)
	if err != nil {
		return nil, err
	}
	return &httpapi.JobDeregisterResponse{
		EvalID: r.EvalID, EvalCreateIndex: r.EvalCreateIndex, JobModifyIndex: r.JobModifyIndex, Index: r.Index,
	}, nil
}

// PromoteDeployment promotes canaries (httpapi.OperatorBackend).
func (a *Agent) PromoteDeployment(ctx context.Context, id string, groups []string, all bool) (*structs.DeploymentUpdateResponse, error) {
	return a.leader.PromoteDeployment(ctx, id, groups, all)
}

// FailDeployment fails a deployment (httpapi.OperatorBackend).
func (a *Agent) FailDeployment(ctx context.Context, id string) (*structs.DeploymentUpdateResponse, error) {
	return a.leader.FailDeployment(ctx, id)
}

// PauseDeployment pauses or resumes a deployment (httpapi.OperatorBackend).
func (a *Agent) PauseDeployment(ctx context.Context, id string, pause bool) (*structs.DeploymentUpdateResponse, error) {
	return a.leader.PauseDeployment(ctx, id, pause)
}

// SetAllocHealth sets allocations' deployment health by hand
// (httpapi.OperatorBackend).
func (a *Agent) SetAllocHealth(ctx context.Context, id string, healthy, unhealthy []string) (*structs.DeploymentUpdateResponse, error) {
	return a.leader.SetAllocHealth(ctx, id, healthy, unhealthy)
}

// RevertJob registers an earlier job version again (httpapi.OperatorBackend).
func (a *Agent) RevertJob(ctx context.Context, namespace, jobID string, version uint64, enforcePriorVersion *uint64) (*structs.JobRevertResponse, error) {
	return a.leader.RevertJob(ctx, namespace, jobID, version, enforcePriorVersion)
}

// SetJobStability marks a job version stable or not (httpapi.OperatorBackend).
func (a *Agent) SetJobStability(ctx context.Context, namespace, jobID string, version uint64, stable bool) (*structs.JobStabilityResponse, error) {
	return a.leader.SetJobStability(ctx, namespace, jobID, version, stable)
}

// ScaleJob changes a group's count, or records a scaling event
// (httpapi.JobScaleBackend): an invalid request is a 400, a job changed
// meanwhile a 409, an unknown job a 404.
func (a *Agent) ScaleJob(ctx context.Context, req httpapi.ScaleRequest) (*httpapi.JobRegisterResponse, error) {
	r, err := a.leader.ScaleJob(ctx, server.ScaleRequest{
		Namespace: req.Namespace, JobID: req.JobID, Group: req.Group,
		Count: req.Count, Message: req.Message, Error: req.Error, Meta: req.Meta,
	})
	switch {
	case errors.Is(err, server.ErrInvalidRequest):
		return nil, httpapi.Errorf(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), "server: invalid request: "))
	case errors.Is(err, server.ErrScaleConflict):
		return nil, httpapi.Errorf(http.StatusConflict, "%v", err)
	case err != nil:
		return nil, err
	}
	return &httpapi.JobRegisterResponse{
		EvalID: r.EvalID, EvalCreateIndex: r.EvalCreateIndex, JobModifyIndex: r.JobModifyIndex, Index: r.Index,
	}, nil
}

// ForcePeriodic launches a periodic job's child now
// (httpapi.PeriodicBackend): a job that is not periodic is a 400.
func (a *Agent) ForcePeriodic(ctx context.Context, namespace, jobID string) (*httpapi.PeriodicForceResponse, error) {
	r, err := a.leader.ForcePeriodic(ctx, namespace, jobID)
	if errors.Is(err, server.ErrInvalidRequest) {
		return nil, httpapi.Errorf(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), "server: invalid request: "))
	}
	if err != nil {
		return nil, err
	}
	return &httpapi.PeriodicForceResponse{EvalID: r.EvalID, EvalCreateIndex: r.EvalCreateIndex, Index: r.Index}, nil
}

// Dispatch makes a child of a parameterized job (httpapi.DispatchBackend):
// an invalid dispatch is a 400, an unknown job a 404.
func (a *Agent) Dispatch(ctx context.Context, req httpapi.DispatchRequest) (*httpapi.DispatchResponse, error) {
	r, err := a.leader.Dispatch(ctx, server.DispatchRequest{
		Namespace: req.Namespace, JobID: req.JobID, Payload: req.Payload, Meta: req.Meta,
		IdempotencyToken: req.IdempotencyToken, IDPrefixTemplate: req.IDPrefixTemplate, Priority: req.Priority,
	})
	if errors.Is(err, server.ErrInvalidRequest) {
		return nil, httpapi.Errorf(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), "server: invalid request: "))
	}
	if err != nil {
		return nil, err
	}
	return &httpapi.DispatchResponse{DispatchedJobID: r.DispatchedJobID, EvalID: r.EvalID,
		EvalCreateIndex: r.EvalCreateIndex, JobCreateIndex: r.JobCreateIndex, Index: r.Index}, nil
}

// The Agent serves every optional backend of the HTTP API.
var (
	_ httpapi.JobRegisterBackend   = (*Agent)(nil)
	_ httpapi.DispatchBackend      = (*Agent)(nil)
	_ httpapi.JobDeregisterBackend = (*Agent)(nil)
	_ httpapi.JobScaleBackend      = (*Agent)(nil)
	_ httpapi.PeriodicBackend      = (*Agent)(nil)
	_ httpapi.OperatorBackend      = (*Agent)(nil)
	_ httpapi.ClientBackend        = (*Agent)(nil)
)

// RestartJob starts a job restart, or answers its plan
// (httpapi.JobRestartBackend): an invalid request is a 400, a change of the
// job in between a 409, an unknown job a 404.
func (a *Agent) RestartJob(ctx context.Context, req httpapi.RestartRequest) (*httpapi.RestartResponse, error) {
	r, err := a.leader.RestartJob(ctx, server.RestartRequest{
		Namespace: req.Namespace, JobID: req.JobID, Groups: req.Groups, Tasks: req.Tasks, AllTasks: req.AllTasks,
		Reschedule: req.Reschedule, BatchSize: req.BatchSize, BatchWait: req.BatchWait, BatchWaitAsk: req.BatchWaitAsk,
		OnError: req.OnError, Plan: req.Plan,
	})
	switch {
	case errors.Is(err, server.ErrInvalidRequest):
		return nil, httpapi.Errorf(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), "server: invalid request: "))
	case errors.Is(err, server.ErrRestartConflict):
		return nil, httpapi.Errorf(http.StatusConflict, "%v", err)
	case err != nil:
		return nil, err
	}
	return &httpapi.RestartResponse{
		DeploymentID: r.DeploymentID, EvalID: r.EvalID, EvalCreateIndex: r.EvalCreateIndex, RestartPlan: r.RestartPlan, Index: r.Index,
	}, nil
}
