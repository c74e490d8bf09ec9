package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/droverhq/drover/structs"
)

// RaftRemovePeerByID removes the server with the given Raft ID from the
// Raft configuration (DELETE /v1/operator/raft/peer?id=).
func (o *Operator) RaftRemovePeerByID(ctx context.Context, id string) error {
	_, err := o.c.Delete(ctx, "/v1/operator/raft/peer", &QueryOptions{Params: map[string]string{"id": id}}, nil)
	return err
}

// RaftRemovePeerByAddress removes the server at the given Raft address
// (host:port) from the Raft configuration
// (DELETE /v1/operator/raft/peer?address=).
func (o *Operator) RaftRemovePeerByAddress(ctx context.Context, address string) error {
	_, err := o.c.Delete(ctx, "/v1/operator/raft/peer", &QueryOptions{Params: map[string]string{"address": address}}, nil)
	return err
}

// SnapshotSave streams a snapshot archive of the cluster's state to w
// (GET /v1/operator/snapshot) and returns the bytes written. With
// q.AllowStale the receiving server answers from its own copy instead of
// the leader.
func (o *Operator) SnapshotSave(ctx context.Context, w io.Writer, q *QueryOptions) (int64, error) {
	resp, err := o.c.raw(ctx, http.MethodGet, "/v1/operator/snapshot", q.values(), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("reading snapshot: %w", err)
	}
	return n, nil
}

// SnapshotRestoreResponse is the answer of SnapshotRestore.
type SnapshotRestoreResponse struct {
	SnapshotIndex uint64
	SnapshotTerm  uint64
}

// SnapshotRestore sends a snapshot archive read from r to be restored on
// every server (PUT /v1/operator/snapshot).
func (o *Operator) SnapshotRestore(ctx context.Context, r io.Reader) (*SnapshotRestoreResponse, error) {
	resp, err := o.c.raw(ctx, http.MethodPut, "/v1/operator/snapshot", nil, r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out SnapshotRestoreResponse
	if err := decodeJSON(resp.Body, &out); err != nil {
		return nil, fmt.Errorf("%w from PUT /v1/operator/snapshot: %w", ErrUnexpectedResponse, err)
	}
	return &out, nil
}

// Members lists the servers the agent knows (GET /v1/agent/members).
func (a *Agent) Members(ctx context.Context) (*structs.ServerMembers, error) {
	var out structs.ServerMembers
	if _, err := a.c.Get(ctx, "/v1/agent/members", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AgentHealth is one part of the agent health answer.
type AgentHealth struct {
	Ok      bool   `json:"ok"`
	Message string `json:"message"`
}

// AgentHealthResponse is the answer of GET /v1/agent/health, in Nomad's
// shape: a part for the server and one for the client, each present when
// the agent runs it.
type AgentHealthResponse struct {
	Server *AgentHealth `json:"server,omitempty"`
	Client *AgentHealth `json:"client,omitempty"`
}

// Health asks the agent whether it is healthy (GET /v1/agent/health). An
// unhealthy agent answers 500: the error is then a *StatusError and the
// returned answer, when the body could be decoded, says which part failed.
func (a *Agent) Health(ctx context.Context) (*AgentHealthResponse, error) {
	var out AgentHealthResponse
	_, err := a.c.Get(ctx, "/v1/agent/health", nil, &out)
	var se *StatusError
	if errors.As(err, &se) {
		if decodeJSON(strings.NewReader(se.Msg), &out) == nil {
			return &out, err
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// raw sends a request with an optional streamed body and returns the
// response for the caller to read and close; a non-2xx answer is a
// *StatusError.
func (c *Client) raw(ctx context.Context, method, path string, q url.Values, body io.Reader) (*http.Response, error) {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	c.setToken(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, &StatusError{Code: resp.StatusCode, Msg: strings.TrimSpace(string(msg))}
	}
	return resp, nil
}

func decodeJSON(r io.Reader, out any) error {
	return json.NewDecoder(io.LimitReader(r, 64<<20)).Decode(out)
}
