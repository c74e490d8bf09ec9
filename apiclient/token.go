package apiclient

import (
	"context"
	"net/http"
	"os"

	"github.com/droverhq/drover/structs"
)

// TokenHeader carries the ACL token, as Nomad's.
const TokenHeader = "X-Nomad-Token"

// Token picks the ACL token: flag when non-empty, else DROVER_TOKEN, else
// NOMAD_TOKEN, else none (the anonymous token).
func Token(flag string) string {
	for _, v := range []string{flag, os.Getenv("DROVER_TOKEN"), os.Getenv("NOMAD_TOKEN")} {
		if v != "" {
			return v
		}
	}
	return ""
}

// SetToken makes every request of c carry token (X-Nomad-Token); "" sends
// none. A token in a request's context (WithToken) wins.
func (c *Client) SetToken(token string) { c.token = token }

type tokenKey struct{}

// WithToken returns a context whose requests carry token instead of the
// client's: a client agent's calls carry its node's secret this way, over
// a NodeClient that many nodes may share.
func WithToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// setToken puts the request's token in its header.
func (c *Client) setToken(req *http.Request) {
	t, ok := req.Context().Value(tokenKey{}).(string)
	if !ok {
		t = c.token
	}
	if t != "" {
		req.Header.Set(TokenHeader, t)
	}
	if it := introTokenOf(req.Context()); it != "" {
		req.Header.Set(structs.ClientIntroTokenHeader, it)
	}
}
