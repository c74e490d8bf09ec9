package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/droverhq/drover/internal/joinauth"
	"github.com/droverhq/drover/structs"
)

// Status is the /v1/status endpoints.
type Status struct{ c *Client }

// Status returns the status endpoints.
func (c *Client) Status() *Status { return &Status{c} }

// Leader returns the leader's Raft address, "" if none.
func (s *Status) Leader(ctx context.Context) (string, error) {
	var out string
	_, err := s.c.Get(ctx, "/v1/status/leader", nil, &out)
	return out, err
}

// Peers returns the voters' Raft addresses.
func (s *Status) Peers(ctx context.Context) ([]string, error) {
	var out []string
	_, err := s.c.Get(ctx, "/v1/status/peers", nil, &out)
	return out, err
}

// Agent is the /v1/agent endpoints.
type Agent struct{ c *Client }

// Agent returns the agent endpoints.
func (c *Client) Agent() *Agent { return &Agent{c} }

// Self describes the agent.
func (a *Agent) Self(ctx context.Context) (*structs.AgentSelf, error) {
	var out structs.AgentSelf
	if _, err := a.c.Get(ctx, "/v1/agent/self", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Operator is the /v1/operator endpoints.
type Operator struct{ c *Client }

// Operator returns the operator endpoints.
func (c *Client) Operator() *Operator { return &Operator{c} }

// RaftConfiguration returns the servers of the Raft configuration.
func (o *Operator) RaftConfiguration(ctx context.Context) (*structs.RaftConfiguration, error) {
	var out structs.RaftConfiguration
	if _, err := o.c.Get(ctx, "/v1/operator/raft/configuration", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Jobs is the /v1/jobs endpoints.
type Jobs struct{ c *Client }

// Jobs returns the job endpoints.
func (c *Client) Jobs() *Jobs { return &Jobs{c} }

// JobRegisterResponse is the answer of Register.
type JobRegisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Warnings        string
	Index           uint64
}

// Register submits a job ({"Job": job}). job may be a *structs.Job or any
// value encoding to Nomad's API job JSON.
func (j *Jobs) Register(ctx context.Context, job any) (*JobRegisterResponse, error) {
	var out JobRegisterResponse
	if _, err := j.c.Put(ctx, "/v1/jobs", map[string]any{"Job": job}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List returns the job stubs.
func (j *Jobs) List(ctx context.Context, q *QueryOptions) ([]*structs.JobListStub, *QueryMeta, error) {
	var out []*structs.JobListStub
	meta, err := j.c.Get(ctx, "/v1/jobs", q, &out)
	return out, meta, err
}

// Info returns one job; a 404 answer satisfies IsNotFound.
func (j *Jobs) Info(ctx context.Context, id string, q *QueryOptions) (*structs.Job, *QueryMeta, error) {
	var out structs.Job
	meta, err := j.c.Get(ctx, "/v1/job/"+url.PathEscape(id), q, &out)
	if err != nil {
		return nil, meta, err
	}
	return &out, meta, nil
}

// ErrJoinUnverified: a join answer that does not carry the signature of
// the cluster's join secret; it is not used.
var ErrJoinUnverified = errors.New("the join answer is not signed with the join token")

// Join announces a server to the server behind this client
// (POST /v1/internal/join). With a token (the cluster's join secret) the
// request is signed with it and the answer must be signed with it too (see
// package joinauth); an answer that is not is ErrJoinUnverified.
func (c *Client) Join(ctx context.Context, req *structs.ServerJoinRequest, token string) (*structs.ServerJoinResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	h := http.Header{"Content-Type": {"application/json"}}
	var sig string
	if token != "" {
		sig = joinauth.Sign(token, body)
		h.Set(joinauth.Header, sig)
	}
	data, hdr, err := c.doRaw(ctx, http.MethodPost, "/v1/internal/join", nil, body, h)
	if err != nil {
		return nil, err
	}
	if token != "" && !joinauth.VerifyResponse(token, sig, data, hdr.Get(joinauth.Header)) {
		return nil, ErrJoinUnverified
	}
	var out structs.ServerJoinResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%w from POST /v1/internal/join: %w", ErrUnexpectedResponse, err)
	}
	return &out, nil
}
