package httpapi

import (
	"crypto/tls"
	"net/http"
)

// WithAgentTLS makes the server's own HTTP calls to other servers (a
// follower's forwarding to the leader, member probes) use HTTPS with c,
// which package tlsutil builds (ServerHTTPClient): the agent's certificate
// is presented and the other server's is verified. nil (the default)
// calls over plain HTTP.
func WithAgentTLS(c *tls.Config) Option { return func(s *Server) { s.agentTLS = c } }

// agentScheme is the scheme of the server's calls to other servers.
func (s *Server) agentScheme() string {
	if s.agentTLS != nil {
		return "https"
	}
	return "http"
}

// probeClient is the client of one round of member probes. Over TLS it
// keeps no connection alive: the transport is thrown away with the round,
// and idle connections would outlive it.
func (s *Server) probeClient() *http.Client {
	c := &http.Client{Timeout: memberProbeTimeout}
	if s.agentTLS != nil {
		c.Transport = &http.Transport{Proxy: nil, TLSClientConfig: s.agentTLS, DisableKeepAlives: true}
	}
	return c
}
