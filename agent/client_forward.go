package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/internal/joinauth"
	"github.com/droverhq/drover/structs"
)

// The client endpoints (/v1/client/…) answer about one node's
// allocations or host, yet the nomad CLI asks them of the address it is
// given, which in a cluster is a server's. So, as Nomad's servers do, an
// agent that does not hold the allocation (it runs no client, or its
// client is another node) finds the allocation's node, or the node_id of
// GET /v1/client/stats, in the servers' state and proxies the request to
// that node's HTTPAddr:
//
//   - only to the HTTPAddr of a node registered in the state, never to an
//     address the request names;
//   - one hop: the forwarded request carries ClientForwardedHeader, and an
//     agent that receives one answers it itself (404 when it does not hold
//     the allocation);
//   - bounded: connecting takes at most forwardDialTimeout and the node's
//     first byte at most forwardHeaderTimeout; the answer (a followed log)
//     then streams as the node writes it;
//   - 404 for an unknown allocation or node, 502 for a node that is down,
//     has no HTTP address or does not answer.

// ClientForwardedHeader marks a client request an agent forwarded to the
// allocation's node; it is never forwarded again.
const ClientForwardedHeader = "X-Drover-Client-Forwarded"

// Bounds of a forwarded client request.
const (
	forwardDialTimeout   = 5 * time.Second
	forwardHeaderTimeout = 30 * time.Second
)

// nodeLookup is what forwarding needs of the servers' state.
type nodeLookup interface {
	// AllocNodeID returns the node the allocation is placed on; "" for an
	// allocation the state does not have.
	AllocNodeID(allocID string) (string, error)
	// Node returns a registered node, nil for none.
	Node(id string) (*structs.Node, error)
}

// clientRouter serves /v1/client/: locally when this agent's client
// holds what is asked about, else from the node that does.
type clientRouter struct {
	local  http.Handler // nil when the agent runs no client
	holds  func(allocID string) bool
	nodeID string     // this agent's client's node
	state  nodeLookup // nil when the agent runs no server
	proxy  *httputil.ReverseProxy
	logger hclog.Logger
	scheme string // of the nodes' addresses: "https" with tls.http (see withTLS)
}

func newClientRouter(local http.Handler, holds func(string) bool, nodeID string, state nodeLookup, logger hclog.Logger) *clientRouter {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	cr := &clientRouter{local: local, holds: holds, nodeID: nodeID, state: state, logger: logger.Named("client-forward"), scheme: "http"}
	dialer := &net.Dialer{Timeout: forwardDialTimeout, KeepAlive: 30 * time.Second}
	cr.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			t, _ := pr.In.Context().Value(forwardTargetKey{}).(*structs.Node)
			pr.SetURL(&url.URL{Scheme: cr.scheme, Host: t.HTTPAddr})
			pr.SetXForwarded()
			pr.Out.Header.Set(ClientForwardedHeader, "1")
			// A server's proofs are for servers, not for client nodes.
			pr.Out.Header.Del(joinauth.ForwardHeader)
			pr.Out.Header.Del(joinauth.Header)
		},
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           dialer.DialContext,
			ResponseHeaderTimeout: forwardHeaderTimeout,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
		},
		// Logs stream: every write of the node's is passed on at once.
		FlushInterval: -1,
		ErrorHandler:  cr.failed,
	}
	return cr
}

type forwardTargetKey struct{}

// clientTarget is what a client request is about.
type clientTarget struct {
	allocID string // /v1/client/allocation/{id}/…, /v1/client/fs/{op}/{id}
	nodeID  string // /v1/client/stats?node_id=
	host    bool   // /v1/client/stats
}

// targetOf reads what a client request is about from its path.
func targetOf(r *http.Request) clientTarget {
	rest, _ := strings.CutPrefix(r.URL.Path, "/v1/client/")
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) >= 2 && parts[0] == "allocation":
		return clientTarget{allocID: parts[1]}
	case len(parts) >= 3 && parts[0] == "fs":
		return clientTarget{allocID: parts[2]}
	case rest == "stats":
		return clientTarget{host: true, nodeID: r.URL.Query().Get("node_id")}
	case identityPaths[rest] != "":
		return clientTarget{host: true, nodeID: identityNodeID(r, rest)} // client_identity.go
	}
	return clientTarget{}
}

func (cr *clientRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := targetOf(r)
	if cr.local != nil {
		switch {
		case t.allocID != "" && cr.holds(t.allocID),
			t.host && (t.nodeID == "" || t.nodeID == cr.nodeID),
			t.allocID == "" && !t.host:
			cr.local.ServeHTTP(w, r)
			return
		}
	}
	forwarded := r.Header.Get(ClientForwardedHeader) != ""
	switch {
	case t.allocID == "" && !t.host:
		answerClientError(w, r, &httpError{code: http.StatusNotFound, msg: "this agent runs no client"})
		return
	case forwarded || cr.state == nil:
		// Nowhere to send it: the local client answers (404 for what it
		// does not hold), or, without one, this agent.
		if cr.local != nil {
			cr.local.ServeHTTP(w, r)
			return
		}
		msg := fmt.Sprintf("unknown allocation %q: this agent runs no client", t.allocID)
		if t.host {
			msg = fmt.Sprintf("unknown node %q: this agent runs no client", t.nodeID)
		}
		answerClientError(w, r, &httpError{code: http.StatusNotFound, msg: msg})
		return
	case t.host && t.nodeID == "":
		answerClientError(w, r, &httpError{code: http.StatusBadRequest, msg: "missing node_id: this agent runs no client"})
		return
	}
	node, err := cr.resolve(t)
	if err != nil {
		answerClientError(w, r, err)
		return
	}
	if cr.local != nil && node.ID == cr.nodeID {
		// This agent's own node, which does not hold it (any more).
		cr.local.ServeHTTP(w, r)
		return
	}
	cr.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), forwardTargetKey{}, node)))
}

// resolve finds the registered node a request is for, and checks that it
// can be asked.
func (cr *clientRouter) resolve(t clientTarget) (*structs.Node, error) {
	nodeID := t.nodeID
	if t.allocID != "" {
		id, err := cr.state.AllocNodeID(t.allocID)
		if err != nil {
			return nil, err
		}
		if id == "" {
			return nil, &httpError{code: http.StatusNotFound, msg: fmt.Sprintf("unknown allocation %q", t.allocID)}
		}
		nodeID = id
	}
	node, err := cr.state.Node(nodeID)
	if err != nil {
		return nil, err
	}
	switch {
	case node == nil:
		return nil, &httpError{code: http.StatusNotFound, msg: fmt.Sprintf("unknown node %q", nodeID)}
	case node.Status == structs.NodeStatusDown:
		return nil, &httpError{code: http.StatusBadGateway, msg: fmt.Sprintf("node %s (%s) is down", node.Name, node.ID)}
	case node.HTTPAddr == "":
		return nil, &httpError{code: http.StatusBadGateway,
			msg: fmt.Sprintf("node %s (%s) advertises no HTTP address", node.Name, node.ID)}
	}
	return node, nil
}

func (cr *clientRouter) failed(w http.ResponseWriter, r *http.Request, err error) {
	node, _ := r.Context().Value(forwardTargetKey{}).(*structs.Node)
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the caller went away
	}
	cr.logger.Warn("forwarding a client request failed", "path", r.URL.Path, "node_id", node.ID, "error", err)
	answerClientError(w, r, &httpError{code: http.StatusBadGateway,
		msg: fmt.Sprintf("node %s (%s) at %s did not answer: %v", node.Name, node.ID, node.HTTPAddr, err)})
}

// stateLookup reads nodes and allocations from a server's replicated
// state (its own copy: a follower answers without asking the leader).
type stateLookup struct{ a *Agent }

func (s stateLookup) AllocNodeID(allocID string) (string, error) {
	al, err := s.a.State().Snapshot().AllocByID(allocID)
	if err != nil || al == nil {
		return "", err
	}
	return al.NodeID, nil
}

func (s stateLookup) Node(id string) (*structs.Node, error) {
	return s.a.State().Snapshot().NodeByID(id)
}

// clientRouter assembles the agent's /v1/client/ handler.
func (a *Agent) clientRouter() http.Handler {
	var (
		local  http.Handler
		holds  = func(string) bool { return false }
		nodeID string
		state  nodeLookup
	)
	if a.client != nil {
		local = newClientHandler(a.client, a.logger)
		holds = func(id string) bool { _, ok := a.client.Alloc(id); return ok }
		nodeID = a.client.NodeID()
	}
	if a.fsm != nil {
		state = stateLookup{a}
	}
	return newClientRouter(local, holds, nodeID, state, a.logger).withTLS(a.tls.NodeHTTPClient())
}
