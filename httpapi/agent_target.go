package httpapi

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	"github.com/hashicorp/go-hclog"
)

// The agent endpoints that look at one agent's process (its profiles,
// its log: agent_pprof.go, agent_monitor.go) take Nomad's ?node_id= and
// ?server_id= to name another agent. The receiving server resolves the
// name (AgentTargetBackend) and proxies the request, once, to that agent's
// HTTP address; the proxied request names no target and carries
// AgentForwardedHeader, so the agent that receives it answers for itself.
// A server names a server by its member name ("node-1.global"), its Raft
// ID or "leader"; a node ID is looked up among the registered nodes.

// AgentForwardedHeader marks an agent request another agent forwarded to
// its target; it is answered locally, never forwarded again.
const AgentForwardedHeader = "X-Drover-Agent-Forwarded"

// agentForwardDialTimeout bounds connecting to the target agent.
const agentForwardDialTimeout = 5 * time.Second

// AgentTargetBackend resolves the targets of the agent endpoints.
type AgentTargetBackend interface {
	// AgentTarget returns the HTTP address (host:port) of the agent that
	// nodeID or serverID names, or "" when it is this agent (or both are
	// empty). An unknown server is ErrUnknownServer, an unknown node
	// ErrNotFound.
	AgentTarget(nodeID, serverID string) (string, error)
	// DebugEnabled reports enable_debug (or dev mode): without ACLs, an
	// agent serves its profiles only then, as Nomad's.
	DebugEnabled() bool
}

// agentTarget resolves r's ?node_id= and ?server_id=: "" to answer here.
func (s *Server) agentTarget(r *http.Request) (string, error) {
	q := r.URL.Query()
	nodeID, serverID := q.Get("node_id"), q.Get("server_id")
	if nodeID != "" && serverID != "" {
		return "", Errorf(http.StatusBadRequest, "Cannot target node and server simultaneously")
	}
	if r.Header.Get(AgentForwardedHeader) != "" || (nodeID == "" && serverID == "") {
		return "", nil
	}
	b, ok := s.backend.(AgentTargetBackend)
	if !ok {
		return "", nil
	}
	return b.AgentTarget(nodeID, serverID)
}

// forwardToAgent proxies r to the agent at addr, without its target
// parameters, and streams the answer back as it comes.
func (s *Server) forwardToAgent(w http.ResponseWriter, r *http.Request, addr string) {
	dialer := &net.Dialer{Timeout: agentForwardDialTimeout, KeepAlive: 30 * time.Second}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&url.URL{Scheme: s.agentScheme(), Host: addr})
			q := pr.Out.URL.Query()
			q.Del("node_id")
			q.Del("server_id")
			pr.Out.URL.RawQuery = q.Encode()
			pr.SetXForwarded()
			pr.Out.Header.Set(AgentForwardedHeader, "1")
		},
		Transport: &http.Transport{
			Proxy: nil, DialContext: dialer.DialContext, TLSClientConfig: s.agentTLS,
			DisableKeepAlives: true,
		},
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeError(w, Errorf(http.StatusBadGateway, "forwarding to the agent at %s: %v", addr, err))
		},
	}
	p.ServeHTTP(w, r)
}

// LocalAgentBackend is what a client-only agent gives to serve its own
// log and profiles (LocalAgentHandler).
type LocalAgentBackend interface {
	LogSinkBackend
	// DebugEnabled is as AgentTargetBackend's.
	DebugEnabled() bool
}

// localAgent adapts a LocalAgentBackend to the handlers: a client-only
// agent is always the target (the servers resolved it).
type localAgent struct {
	Backend // nil: the handlers use only the methods below
	LocalAgentBackend
}

func (localAgent) AgentTarget(string, string) (string, error) { return "", nil }

// LocalAgentHandler serves GET /v1/agent/monitor and GET
// /v1/agent/pprof/{profile} for a client-only agent, about itself: a
// server forwards a ?node_id= request to the node's agent, which answers
// here. authorize checks the caller (agent:write when write, else
// agent:read) and reports whether ACLs are on.
func LocalAgentHandler(b LocalAgentBackend, logger hclog.Logger, authorize func(r *http.Request, write bool) (aclsOn bool, err error)) http.Handler {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	s := &Server{backend: localAgent{LocalAgentBackend: b}, logger: logger.Named("http"), now: time.Now}
	serve := func(write bool, h HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			on, err := authorize(r, write)
			if err != nil {
				writeError(w, err)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), authzKey{}, &authz{enabled: on}))
			out, err := h(s, w, r)
			if err != nil {
				writeError(w, err)
				return
			}
			if _, ok := out.(written); !ok {
				writeJSON(w, http.StatusOK, out)
			}
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/agent/monitor", serve(false, (*Server).agentMonitor))
	mux.Handle("GET /v1/agent/pprof/{profile}", serve(true, (*Server).agentPprof))
	return mux
}
