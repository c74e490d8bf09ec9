package apiclient

import (
	"context"
	"net/url"

	"github.com/droverhq/drover/structs"
)

// JobDeregisterResponse is the answer of Deregister.
type JobDeregisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Index           uint64
}

// RegisterChecked submits job through PUT /v1/job/{id} with
// EnforceIndex: the write happens only if the stored job's JobModifyIndex
// is modifyIndex (0: the job must not exist). A conflict is a 409
// StatusError.
func (j *Jobs) RegisterChecked(ctx context.Context, job *structs.Job, modifyIndex uint64) (*JobRegisterResponse, error) {
	var out JobRegisterResponse
	in := map[string]any{"Job": job, "EnforceIndex": true, "JobModifyIndex": modifyIndex}
	if _, err := j.c.Put(ctx, "/v1/job/"+url.PathEscape(job.ID), in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Deregister stops the job, or with purge deletes it.
func (j *Jobs) Deregister(ctx context.Context, id string, purge bool) (*JobDeregisterResponse, error) {
	var out JobDeregisterResponse
	q := &QueryOptions{}
	if purge {
		q.Params = map[string]string{"purge": "true"}
	}
	if _, err := j.c.Delete(ctx, "/v1/job/"+url.PathEscape(id), q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Allocations returns the job's allocation stubs.
func (j *Jobs) Allocations(ctx context.Context, id string, q *QueryOptions) ([]*structs.AllocationListStub, *QueryMeta, error) {
	var out []*structs.AllocationListStub
	meta, err := j.c.Get(ctx, "/v1/job/"+url.PathEscape(id)+"/allocations", q, &out)
	return out, meta, err
}

// Evaluations returns the job's evaluations.
func (j *Jobs) Evaluations(ctx context.Context, id string, q *QueryOptions) ([]*structs.Evaluation, *QueryMeta, error) {
	var out []*structs.Evaluation
	meta, err := j.c.Get(ctx, "/v1/job/"+url.PathEscape(id)+"/evaluations", q, &out)
	return out, meta, err
}

// Summary returns the job's allocation counts per group.
func (j *Jobs) Summary(ctx context.Context, id string, q *QueryOptions) (*structs.JobSummary, *QueryMeta, error) {
	var out structs.JobSummary
	meta, err := j.c.Get(ctx, "/v1/job/"+url.PathEscape(id)+"/summary", q, &out)
	if err != nil {
		return nil, meta, err
	}
	return &out, meta, nil
}

// DispatchRequest is a dispatch of a parameterized job, as Nomad's
// JobDispatchRequest.
type DispatchRequest struct {
	Payload          []byte            `json:",omitempty"`
	Meta             map[string]string `json:",omitempty"`
	IdempotencyToken string            `json:",omitempty"`
	IdPrefixTemplate string            `json:",omitempty"`
	Priority         int               `json:",omitempty"`
}

// DispatchResponse is the answer of Dispatch: the child's ID and its
// evaluation (none for a periodic child, or when the idempotency token
// named an existing child).
type DispatchResponse struct {
	DispatchedJobID string
	EvalID          string
	EvalCreateIndex uint64
	JobCreateIndex  uint64
	Index           uint64
}

// Dispatch makes a child of the parameterized job id (POST
// /v1/job/{id}/dispatch).
func (j *Jobs) Dispatch(ctx context.Context, id string, req *DispatchRequest) (*DispatchResponse, error) {
	var out DispatchResponse
	if _, err := j.c.Post(ctx, "/v1/job/"+url.PathEscape(id)+"/dispatch", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RestartRequest is the body of a job restart (PUT /v1/job/{id}/restart).
type RestartRequest struct {
	Groups     []string `json:",omitempty"`
	Tasks      []string `json:",omitempty"`
	AllTasks   bool     `json:",omitempty"`
	Reschedule bool     `json:",omitempty"`
	// BatchSize is "N" or "N%"; "" follows max_parallel.
	BatchSize string `json:",omitempty"`
	// BatchWait is a duration ("30s") or "ask"; "" follows the stagger.
	BatchWait string `json:",omitempty"`
	// OnError is "ask" or "fail"; "" follows on_failure.
	OnError string `json:",omitempty"`
	Plan    bool   `json:",omitempty"`
}

// RestartResponse answers a job restart: its deployment and evaluation,
// or with Plan the batches it would run.
type RestartResponse struct {
	DeploymentID    string
	EvalID          string
	EvalCreateIndex uint64
	RestartPlan     []structs.RolloutBatch
	Index           uint64
}

// Restart starts a restart of the job as a deployment of its current
// version, or with req.Plan answers its batches and writes nothing.
func (j *Jobs) Restart(ctx context.Context, id string, req *RestartRequest) (*RestartResponse, error) {
	var out RestartResponse
	if _, err := j.c.Post(ctx, "/v1/job/"+url.PathEscape(id)+"/restart", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
