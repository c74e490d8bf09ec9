package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/droverhq/drover/structs"
)

// clientAPI serves a client-only agent's API as a Nomad client agent
// serves it: the CLI on a client node talks to its local agent
// (NOMAD_ADDR=http://127.0.0.1:4646) and can do everything it could do at
// a server. The agent answers /v1/agent/self itself (the CLI's node status
// -self reads the node's ID there) and hands every other request to the
// server its client talks to (the API under /v1/; the web UI stays the
// servers') (apiclient.NodeClient.Current), over the
// agent's one HTTP client of servers (TLS from the agent's configurator);
// streams (logs, events, exec) pass through unbuffered.
//
// The routes a server answers only to its own machine or to another
// server (routeAccess: the snapshot, the join, the client protocol under
// /v1/internal/) are passed on only for a caller on this machine: a
// client agent next to a server must not turn a remote caller into a
// loopback one.
func (a *Agent) clientAPI() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/agent/self", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(a.clientSelf())
	})
	var transport http.RoundTripper // nil: http.DefaultTransport
	if a.agentHTTP != nil {
		transport = a.agentHTTP.Transport
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			target, err := url.Parse(a.servers.Current())
			if err != nil || target.Host == "" {
				target = &url.URL{Scheme: a.tls.Scheme(), Host: a.servers.Current()}
			}
			pr.SetURL(target)
			pr.Out.Host = target.Host
			pr.SetXForwarded()
		},
		Transport:     transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// The next request goes to another server.
			a.servers.Rebalance()
			if errors.Is(r.Context().Err(), err) {
				return
			}
			a.logger.Warn("a server did not answer a request this client agent forwarded",
				"method", r.Method, "path", r.URL.Path, "error", err)
			http.Error(w, fmt.Sprintf("no server answered: %v", err), http.StatusBadGateway)
		},
	}
	mux.Handle("/v1/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.servers == nil {
			http.Error(w, "this agent knows no server", http.StatusBadGateway)
			return
		}
		if serverLocalRoute(r.URL.Path) && !loopbackCaller(r) {
			http.Error(w, fmt.Sprintf("Permission denied: %s %s is answered to a server's own machine or another server only: ask a server", r.Method, r.URL.Path), http.StatusForbidden)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	return mux
}

// serverLocalRoute reports whether a server answers path only to its own
// machine or to the other servers (httpapi's routeAccess).
func serverLocalRoute(path string) bool {
	return strings.HasPrefix(path, "/v1/internal/") || path == "/v1/operator/snapshot"
}

// loopbackCaller reports whether r comes from this machine.
func loopbackCaller(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// clientSelf is /v1/agent/self of a client-only agent: its configuration
// and the node's ID, as Nomad's client agent answers it.
func (a *Agent) clientSelf() *structs.AgentSelf {
	return &structs.AgentSelf{
		Config: structs.AgentConfig{
			Region: a.cfg.Region, Datacenter: a.cfg.Datacenter, NodeName: a.cfg.NodeName, Version: a.cfg.Version,
			DataDir:   a.cfg.DataDir,
			Addresses: structs.AgentAddresses{HTTP: a.HTTPAddr()},
		},
		Stats: map[string]map[string]string{"client": {"node_id": a.client.NodeID(), "known_servers": a.servers.Current()}},
	}
}
