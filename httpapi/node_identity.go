package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/droverhq/drover/internal/keyring"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// Node identities and client introduction tokens, as Nomad's
// (website/api/acl.md, website/api/client.md):
//
//	PUT      /v1/internal/node/{id}/identity → NodeIdentityResponse {"JWT"}:
//	         a new identity of the node, signed by the keyring (the node's
//	         own secret); a client asks for one once registered and again
//	         before it expires
//	PUT|POST /v1/acl/identity/client-introduction-token
//	         {"TTL", "NodeName", "NodePool"} → {"JWT"} (node:write)
//
// A node identity carries Nomad's claims (keyring.NodeIdentityClaims)
// and expires after its node pool's node_identity_ttl (24h by default).
// An introduction token is for a node of NodePool ("default" when
// unset), named NodeName when set; its TTL is the request's, or
// client_introduction.default_identity_ttl (5m), at most
// max_identity_ttl (30m: a longer request gets the maximum, as Nomad's).
// A registering node presents it in ClientIntroTokenHeader; the servers'
// client_introduction.enforcement says what becomes of a new node
// without a valid one (see introductionVerdict). Signing writes nothing
// to Raft: an identity is verified by its signature and expiry alone.
func init() {
	register(route{"PUT /v1/internal/node/{id}/identity", readRoute, nodeSelf, (*Server).nodeIdentity})
	for _, m := range []string{"PUT", "POST"} {
		register(route{m + " /v1/acl/identity/client-introduction-token", localRoute, nodeWrite, (*Server).aclClientIntroduction})
	}
}

// WithClientIntroduction sets the servers' client_introduction block
// (default: structs.DefaultClientIntroductionConfig).
func WithClientIntroduction(c structs.ClientIntroductionConfig) Option {
	return func(s *Server) { s.intro = c }
}

func (s *Server) introConfig() structs.ClientIntroductionConfig {
	if s.intro.Enforcement == "" {
		return structs.DefaultClientIntroductionConfig()
	}
	return s.intro
}

// errNoIntroToken: a registration without an introduction token.
var errNoIntroToken = errors.New("no client introduction token presented")

// introductionVerdict decides on a registering node under enforcement:
// known is whether it presented the secret of the node already
// registered under its ID; tokenErr what is wrong with its introduction
// token (nil for a valid one). It returns whether to log a warning and
// the error that refuses the node (nil: admitted).
func introductionVerdict(enforcement string, known bool, tokenErr error) (warn bool, refuse error) {
	if known || tokenErr == nil || enforcement == structs.ClientIntroductionEnforcementNone {
		return false, nil
	}
	if enforcement == structs.ClientIntroductionEnforcementStrict {
		return false, tokenErr
	}
	return true, nil
}

// checkIntroduction applies the enforcement to a registering node n.
func (s *Server) checkIntroduction(r *http.Request, n *structs.Node) error {
	cfg := s.introConfig()
	if cfg.Enforcement == structs.ClientIntroductionEnforcementNone {
		return nil
	}
	snap := s.backend.State().Snapshot()
	old, err := snap.NodeByID(n.ID)
	if err != nil {
		return err
	}
	known := old != nil && old.SecretHash != "" && structs.SecretMatches(TokenFromRequest(r), old.SecretHash)
	tokenErr := errNoIntroToken
	if tok := r.Header.Get(structs.ClientIntroTokenHeader); tok != "" {
		c, err := keyring.VerifyIntroduction(tok, snap.RootKeyByID, s.now())
		if err == nil {
			err = c.Admits(n)
		}
		tokenErr = err
	}
	warn, refuse := introductionVerdict(cfg.Enforcement, known, tokenErr)
	if warn {
		s.logger.Warn("node registered without a valid client introduction token", "node_id", n.ID, "node_name", n.Name,
			"node_pool", n.NodePool, "reason", tokenErr.Error(), "enforcement", cfg.Enforcement)
	}
	if refuse != nil {
		return Errorf(http.StatusForbidden, "%s: node %s (%s): client introduction enforcement is strict: %s: %w",
			ErrPermissionDenied, n.Name, n.ID, refuse.Error(), ErrPermissionDenied)
	}
	return nil
}

// nodeIdentity signs a new identity for the node the path names.
func (s *Server) nodeIdentity(_ http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	snap := s.backend.State().Snapshot()
	node, err := snap.NodeByID(id)
	if err != nil {
		return nil, err
	}
	if node == nil {
		return nil, Errorf(http.StatusNotFound, "node %q not found: %w", id, ErrUnknownNode)
	}
	// With ACLs on the route's check let in the node's own secret only;
	// without, a node registered with a secret must still present it.
	if node.SecretHash != "" && !structs.SecretMatches(TokenFromRequest(r), node.SecretHash) {
		return nil, Errorf(http.StatusForbidden, "%s: node %s: a node's identity is given to the node itself (its node secret): %w",
			ErrPermissionDenied, id, ErrPermissionDenied)
	}
	ttl, err := nodeIdentityTTL(snap, node.NodePool)
	if err != nil {
		return nil, err
	}
	key, err := s.ensureRootKey(r.Context())
	if err != nil {
		return nil, err
	}
	jwt, err := keyring.SignNodeIdentity(key, keyring.NewNodeIdentityClaims(node, s.regionName(), structs.GenerateUUID(), s.now(), ttl))
	if err != nil {
		return nil, err
	}
	return &structs.NodeIdentityResponse{JWT: jwt}, nil
}

// nodeIdentityTTL is the node_identity_ttl of pool (24h for a pool not
// stored or without one).
func nodeIdentityTTL(snap *state.Snapshot, pool string) (ttl time.Duration, err error) {
	if pool == "" {
		pool = structs.NodePoolDefault
	}
	p, err := snap.NodePoolByName(pool)
	if err != nil {
		return 0, err
	}
	if p == nil || p.NodeIdentityTTL <= 0 {
		return structs.DefaultNodePoolNodeIdentityTTL, nil
	}
	return p.NodeIdentityTTL, nil
}

// aclClientIntroduction signs a client introduction token.
func (s *Server) aclClientIntroduction(_ http.ResponseWriter, r *http.Request) (any, error) {
	var req structs.ClientIntroductionTokenRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		return nil, err
	}
	if req.TTL < 0 {
		return nil, Errorf(http.StatusBadRequest, "TTL: must not be negative (got %s)", req.TTL)
	}
	if req.NodePool == "" {
		req.NodePool = structs.NodePoolDefault
	}
	if err := structs.ValidateNodePoolName(req.NodePool); err != nil {
		return nil, Errorf(http.StatusBadRequest, "NodePool: %s", err)
	}
	if req.NodePool == structs.NodePoolAll {
		return nil, Errorf(http.StatusBadRequest, "NodePool: a node is not allowed to register in node pool %q", structs.NodePoolAll)
	}
	if len(req.NodeName) > 256 {
		return nil, Errorf(http.StatusBadRequest, "NodeName: longer than 256 characters")
	}
	ttl, capped := s.introConfig().IdentityTTL(req.TTL)
	if capped {
		s.logger.Warn("client introduction token TTL request exceeds the server maximum, using the maximum",
			"requested_ttl", req.TTL, "server_max_ttl", ttl)
	}
	key, err := s.ensureRootKey(r.Context())
	if err != nil {
		return nil, err
	}
	jwt, err := keyring.SignIntroduction(key, keyring.NewIntroductionClaims(req.NodeName, req.NodePool, s.regionName(), structs.GenerateUUID(), s.now(), ttl))
	if err != nil {
		return nil, fmt.Errorf("signing the client introduction token: %w", err)
	}
	return &structs.ClientIntroductionTokenResponse{JWT: jwt}, nil
}
