package apiclient

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// MonitorOptions are the parameters of GET /v1/agent/monitor.
type MonitorOptions struct {
	LogLevel           string // "" is the agent's default, info
	LogJSON            bool
	LogIncludeLocation bool
	NodeID             string // another agent: a client node
	ServerID           string // another agent: a server's name or ID, or "leader"
}

// AgentMonitor streams the agent's log lines as text (plain=true) until
// ctx ends or the caller closes the stream; a non-2xx answer is a
// *StatusError.
func (c *Client) AgentMonitor(ctx context.Context, o MonitorOptions) (io.ReadCloser, error) {
	q := url.Values{}
	q.Set("plain", "true")
	if o.LogLevel != "" {
		q.Set("log_level", o.LogLevel)
	}
	q.Set("log_json", strconv.FormatBool(o.LogJSON))
	q.Set("log_include_location", strconv.FormatBool(o.LogIncludeLocation))
	if o.NodeID != "" {
		q.Set("node_id", o.NodeID)
	}
	if o.ServerID != "" {
		q.Set("server_id", o.ServerID)
	}
	resp, err := c.raw(ctx, http.MethodGet, "/v1/agent/monitor", q, nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// AgentForceLeave forces the server named node out of the cluster (PUT
// /v1/agent/force-leave); prune also drops it from the member list.
func (c *Client) AgentForceLeave(ctx context.Context, node string, prune bool) error {
	q := url.Values{}
	q.Set("node", node)
	if prune {
		q.Set("prune", "true")
	}
	resp, err := c.raw(ctx, http.MethodPut, "/v1/agent/force-leave", q, nil)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.Body.Close()
}

// PutQuery is Put with query parameters (such as Nomad's ?cas=).
func (c *Client) PutQuery(ctx context.Context, path string, q url.Values, in, out any) (*QueryMeta, error) {
	return c.do(ctx, http.MethodPut, path, q, in, out)
}
