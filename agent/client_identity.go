package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/droverhq/drover/config"
	"github.com/droverhq/drover/structs"
)

// The node identity endpoints, as Nomad's:
//
//	GET      /v1/client/identity[?node_id=N]        → {"Claims": {…}}: the claims of
//	         the node's identity (node:read)
//	PUT|POST /v1/client/identity/renew[?node_id=N]  {"NodeID": N} → {}: the node asks
//	         the servers for a new identity now (node:write)
//
// Like GET /v1/client/stats, they are about one node: this agent's client
// when node_id is unset or names it, else the node is found in the
// servers' state and the request forwarded to it (client_forward.go).

// identitySource is what the identity endpoints need of the client.
type identitySource interface {
	NodeID() string
	NodeIdentityClaims() (map[string]any, error)
	WaitNodeIdentity(ctx context.Context) bool
	RenewNodeIdentity()
}

// identityWait bounds how long a request waits for a node that has just
// registered to get its first identity.
const identityWait = 5 * time.Second

// maxRenewBody bounds the renew request's body.
const maxRenewBody = 64 << 10

// identityPaths are the identity endpoints' paths under /v1/client/ and
// the capability each needs.
var identityPaths = map[string]string{"identity": "node:read", "identity/renew": "node:write"}

// identityNodeID returns the node an identity request is about: its
// node_id, or the NodeID of a renew request's body (read, bounded, and
// put back for the handler).
func identityNodeID(r *http.Request, rest string) string {
	if id := r.URL.Query().Get("node_id"); id != "" || rest != "identity/renew" || r.Body == nil {
		return id
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxRenewBody+1))
	r.Body = io.NopCloser(bytes.NewReader(data))
	if err != nil || len(data) > maxRenewBody {
		return ""
	}
	var req structs.NodeIdentityRenewRequest
	if json.Unmarshal(data, &req) != nil {
		return ""
	}
	return req.NodeID
}

func (h *clientHandler) identityRoutes(mux *http.ServeMux, src identitySource) {
	mux.HandleFunc("GET /v1/client/identity", func(w http.ResponseWriter, r *http.Request) {
		if !h.ownNode(w, r, src.NodeID(), "identity") {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), identityWait)
		defer cancel()
		if !src.WaitNodeIdentity(ctx) {
			writeClientError(w, &httpError{code: http.StatusNotFound, msg: "node does not have a JWT identity token (yet)"})
			return
		}
		claims, err := src.NodeIdentityClaims()
		if err != nil {
			writeClientError(w, err)
			return
		}
		writeJSON(w, &structs.NodeIdentityGetResponse{Claims: claims})
	})
	renew := func(w http.ResponseWriter, r *http.Request) {
		if !h.ownNode(w, r, src.NodeID(), "identity/renew") {
			return
		}
		src.RenewNodeIdentity()
		writeJSON(w, &structs.NodeIdentityRenewResponse{})
	}
	mux.HandleFunc("PUT /v1/client/identity/renew", renew)
	mux.HandleFunc("POST /v1/client/identity/renew", renew)
}

// ownNode checks that a request names this client's node (or none).
func (h *clientHandler) ownNode(w http.ResponseWriter, r *http.Request, own, rest string) bool {
	if id := identityNodeID(r, rest); id != "" && id != own {
		writeClientError(w, &httpError{code: http.StatusNotFound, msg: fmt.Sprintf("unknown node %q: this client is node %q", id, own)})
		return false
	}
	return true
}

// clientIntroduction is the servers' client_introduction block with
// Nomad's defaults in place of unset values.
func clientIntroduction(c config.ClientIntroduction) structs.ClientIntroductionConfig {
	r := c.Resolved()
	return structs.ClientIntroductionConfig{Enforcement: r.Enforcement, DefaultIdentityTTL: r.DefaultIdentityTTL, MaxIdentityTTL: r.MaxIdentityTTL}
}
