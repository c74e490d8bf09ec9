package agent

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/internal/joinauth"
	"github.com/droverhq/drover/tlsutil"
)

// The agent's TLS (tls block): every tls.Config comes from a.tls
// (package tlsutil):
//
//   - the HTTP listener: tlsutil.HTTPServer (tls.http);
//   - the agent's HTTP calls to servers — a client's registration,
//     heartbeats and allocation updates, joins, autopilot probes, a
//     follower's forwarding to the leader and member probes (httpapi):
//     one shared client over tlsutil.ServerHTTPClient;
//   - a server's forwarding of /v1/client/ requests to client nodes:
//     tlsutil.NodeHTTPClient;
//   - a server's calls to the servers of another region (federation.go):
//     tlsutil.ServerHTTPClientFor that region, or ServerHTTPClientAnyRegion
//     for a server join by address;
//   - Raft: tlsutil.RaftServer and RaftClient (tls.rpc), in the cluster
//     package's TLS stream layer.
//
// With tls.http and verify_server_hostname, roleGuard checks the role
// named by the caller's certificate before the API sees the request:
// serverRoles for what only servers do, nodeRoles for the client
// endpoints under /v1/internal/.

var (
	serverRoles = []string{tlsutil.RoleServer}
	nodeRoles   = []string{tlsutil.RoleClient, tlsutil.RoleServer}
)

// requiredRoles returns the certificate roles a request needs, nil for
// any certificate the HTTPS listener accepted.
func requiredRoles(r *http.Request) []string {
	switch {
	case r.URL.Path == "/v1/internal/join":
		// Joins change the Raft membership.
		return serverRoles
	case r.Header.Get(httpapi.ForwardedHeader) != "", r.Header.Get(joinauth.ForwardHeader) != "",
		r.Header.Get(ClientForwardedHeader) != "":
		// Only servers forward: to the leader (a snapshot among others),
		// or to the node holding an allocation.
		return serverRoles
	case strings.HasPrefix(r.URL.Path, "/v1/internal/"):
		// Node registration, heartbeats, allocations: client agents.
		return nodeRoles
	}
	return nil
}

// roleGuard refuses, with 403, a request whose certificate does not name
// the role it needs; a no-op unless tls.http and verify_server_hostname
// are on.
func (a *Agent) roleGuard(next http.Handler) http.Handler {
	if !a.tls.ServerRoleRequired() {
		return next
	}
	region := a.tls.Config().Region
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Set only by the guard, below (federation.go).
		r.Header.Del(httpapi.PeerRegionHeader)
		roles := requiredRoles(r)
		if roles == nil {
			next.ServeHTTP(w, r)
			return
		}
		if err := a.tls.CheckPeerRole(r.TLS, roles...); err != nil && !a.federatedPeer(r, roles) {
			names := make([]string, len(roles))
			for i, role := range roles {
				names[i] = tlsutil.RoleName(role, region)
			}
			a.logger.Warn("refused a request whose certificate lacks the role it needs",
				"method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "error", err)
			http.Error(w, fmt.Sprintf("Permission denied: %s %s needs a certificate naming %s (tls.verify_server_hostname): %v",
				r.Method, r.URL.Path, strings.Join(names, " or "), err), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withTLS makes the router's calls to client nodes HTTPS with tc
// (tlsutil.NodeHTTPClient); a nil tc leaves them plain HTTP.
func (cr *clientRouter) withTLS(tc *tls.Config) *clientRouter {
	if tc == nil {
		return cr
	}
	cr.scheme = "https"
	cr.proxy.Transport.(*http.Transport).TLSClientConfig = tc
	return cr
}

// agentIdleConns bounds the idle connections the agent keeps to each
// server; a follower's forwarding has its own pool (httpapi).
const agentIdleConns = 16

// newAgentHTTPClient is the client of the agent's calls to servers:
// one transport, one pool of kept-alive connections (with TLS, one
// handshake per connection rather than per call).
func newAgentHTTPClient(c *tlsutil.Configurator) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     c.ServerHTTPClient(),
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: agentIdleConns,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false,
	}}
}

// serverClient returns an API client of the server at addr (host:port),
// over the agent's shared client and scheme.
func (a *Agent) serverClient(addr string) (*apiclient.Client, error) {
	return apiclient.NewWithHTTPClient(apiclient.WithScheme(addr, a.tls.Scheme()), a.agentHTTP)
}

// aclsEnabled reports whether the agent enforces ACL tokens
// (acl { enabled = true }).
func aclsEnabled(c Config) bool { return c.ACLEnabled }

// openWarnings names what this agent serves beyond loopback without
// protection: an HTTP API without TLS or without ACLs, HTTPS that
// does not require client certificates, Raft without TLS. httpAddr and
// raftAddr are the bound addresses (raftAddr empty without a server).
func openWarnings(cfg Config, httpAddr, raftAddr string) []string {
	var out []string
	if exposed(httpAddr) {
		if !cfg.TLS.HTTP {
			out = append(out, fmt.Sprintf("the HTTP API on %s is served without TLS (tls.http is off): requests, tokens, "+
				"job definitions and the clients' traffic cross the network in the clear", httpAddr))
		} else if !cfg.TLS.VerifyHTTPSClient {
			out = append(out, fmt.Sprintf("the HTTPS API on %s takes callers without a certificate (tls.verify_https_client is off)", httpAddr))
		}
		if !aclsEnabled(cfg) {
			what := "register jobs, stop them and drain nodes"
			if cfg.Client && !cfg.DisableRawExec {
				what = "register jobs, which run commands on this machine as the agent's user (raw_exec is enabled)"
			}
			out = append(out, fmt.Sprintf("the HTTP API on %s has no ACLs (acl.enabled is off): anyone who reaches it can %s", httpAddr, what))
		}
	}
	if raftAddr != "" && exposed(raftAddr) && !cfg.TLS.RPC {
		out = append(out, fmt.Sprintf("Raft on %s is served without TLS (tls.rpc is off): anyone who reaches it can read the "+
			"replicated state and disrupt the cluster", raftAddr))
	}
	return out
}

// exposed reports whether a bound host:port is reachable beyond this
// machine: any address but a loopback one (a wildcard one included).
func exposed(hostPort string) bool {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		return true
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}
