package apiclient

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// joinAnswer is the answer of PUT /v1/agent/join, Nomad's shape.
type joinAnswer struct {
	NumJoined int    `json:"num_joined"`
	Error     string `json:"error"`
}

// AgentJoin asks the server to join the servers at addrs (host:port of
// their HTTP API; a server of another region federates the two regions)
// and returns how many it joined; the error holds the server's account of
// the addresses that failed.
func (c *Client) AgentJoin(ctx context.Context, addrs []string) (int, error) {
	q := url.Values{}
	for _, a := range addrs {
		q.Add("address", a)
	}
	var out joinAnswer
	if _, err := c.do(ctx, http.MethodPut, "/v1/agent/join", q, nil, &out); err != nil {
		return 0, err
	}
	if out.Error != "" {
		return out.NumJoined, errors.New(out.Error)
	}
	return out.NumJoined, nil
}

// Regions lists the regions the agent knows (GET /v1/regions).
func (c *Client) Regions(ctx context.Context) ([]string, error) {
	var out []string
	_, err := c.Get(ctx, "/v1/regions", nil, &out)
	return out, err
}
