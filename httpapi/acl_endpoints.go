package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The ACL endpoints, Nomad's paths and shapes (api.ACLPolicy,
// api.ACLToken and their list stubs); see website/api/acl.md:
//
//	PUT|POST /v1/acl/bootstrap          {"BootstrapSecret"} (optional) → the management token, with its SecretID; once
//	GET      /v1/acl/policies           → []ACLPolicyListStub (management: all; others: their token's)
//	GET      /v1/acl/policy/self        → []ACLPolicyListStub: the caller's token's (its roles' too; management: all)
//	GET      /v1/acl/policy/{name}      → ACLPolicy (management, or a token that has it)
//	PUT|POST /v1/acl/policy/{name}      ACLPolicy → null (management)
//	DELETE   /v1/acl/policy/{name}      → null (management)
//	GET      /v1/acl/tokens             → []ACLTokenListStub (management)
//	PUT|POST /v1/acl/token              ACLToken → the new token, with its SecretID (management)
//	GET      /v1/acl/token/self         → the caller's token, with its SecretID
//	GET      /v1/acl/token/{accessor}   → ACLToken, with its SecretID (management, or the token itself)
//	PUT|POST /v1/acl/token/{accessor}   ACLToken → the updated token (management)
//	DELETE   /v1/acl/token/{accessor}   → null (management)
//
// The servers find a token by the SHA-256 of its SecretID and keep the
// SecretID itself sealed under the keyring (as variables are), so that,
// as Nomad's, it is answered to the request that creates the token, to
// the token itself and to management tokens; a token made before secrets
// were sealed is answered without it. A token's Roles link ACL roles
// (acl_roles.go), whose policies it is granted as they are on each
// request. With ACLs off every endpoint answers 400 "ACL support
// disabled".
//
// PUT /v1/internal/acl/resolve {"SecretID"} → structs.ACLResolveResponse
// is for client agents (node secret): what a token grants, so that a
// client checks the requests to its own endpoints.

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(
			route{m + " /v1/acl/bootstrap", writeRoute, public, (*Server).aclBootstrap},
			route{m + " /v1/acl/policy/{name}", writeRoute, management, (*Server).aclPolicyUpsert},
			route{m + " /v1/acl/token", writeRoute, management, (*Server).aclTokenCreate},
			route{m + " /v1/acl/token/{accessor}", writeRoute, management, (*Server).aclTokenUpdate},
		)
	}
	register(
		route{"GET /v1/acl/policies", readRoute, anyCaller, (*Server).aclPolicies},
		route{"GET /v1/acl/policy/{name}", readRoute, anyCaller, (*Server).aclPolicyInfo},
		route{"GET /v1/acl/policy/self", readRoute, anyToken, (*Server).aclPolicySelf},
		route{"DELETE /v1/acl/policy/{name}", writeRoute, management, (*Server).aclPolicyDelete},
		route{"GET /v1/acl/tokens", readRoute, management, (*Server).aclTokens},
		route{"GET /v1/acl/token/self", readRoute, anyToken, (*Server).aclTokenSelf},
		route{"GET /v1/acl/token/{accessor}", readRoute, anyToken, (*Server).aclTokenInfo},
		route{"DELETE /v1/acl/token/{accessor}", writeRoute, management, (*Server).aclTokenDelete},
		route{"PUT /v1/internal/acl/resolve", readRoute, nodeAny, (*Server).aclResolve},
	)
}

// ACLBootstrapResetter is what a Backend implements to allow Nomad's
// bootstrap reset: the index written in the server's reset file
// (data_dir/acl-bootstrap-reset), 0 when there is none.
type ACLBootstrapResetter interface {
	ACLBootstrapResetIndex() uint64
}

// Nomad's bounds of names and descriptions.
var policyNameRE = regexp.MustCompile(`^[a-zA-Z0-9-]{1,128}$`)

const (
	maxDescriptionLen = 256
	maxTokenNameLen   = 256
)

// uuidRE is the form of SecretIDs and AccessorIDs.
var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func (s *Server) aclOn() error {
	if !s.aclConfig.Enabled {
		return Errorf(http.StatusBadRequest, "%s", ErrACLDisabled)
	}
	return nil
}

// applyACL writes one ACL entry and sets the index header.
func (s *Server) applyACL(w http.ResponseWriter, r *http.Request, t fsm.MessageType, req any) (uint64, error) {
	_, index, err := s.backend.Apply(r.Context(), t, req)
	if err != nil {
		return 0, err
	}
	s.setMeta(w, index)
	return index, nil
}

func (s *Server) aclBootstrap(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	var req struct{ BootstrapSecret string }
	if err := decodeOptionalBody(r, &req); err != nil {
		return nil, err
	}
	secret := req.BootstrapSecret
	if secret == "" {
		secret = structs.GenerateUUID()
	} else if !uuidRE.MatchString(secret) {
		// Nomad's words for a BootstrapSecret that is not a UUID.
		return nil, Errorf(http.StatusBadRequest, "invalid acl token")
	}
	var reset uint64
	if rs, ok := s.backend.(ACLBootstrapResetter); ok {
		reset = rs.ACLBootstrapResetIndex()
	}
	tok := &structs.ACLToken{
		AccessorID: structs.GenerateUUID(), SecretHash: structs.HashSecret(secret), Name: "Bootstrap Token",
		Type: structs.ACLTokenTypeManagement, Global: true, CreateTime: s.now().UTC(),
	}
	sealed, err := s.sealSecret(r.Context(), tokenSecretLabel(tok.AccessorID), []byte(secret))
	if err != nil {
		return nil, err
	}
	tok.Sealed = sealed
	_, err = s.applyACL(w, r, fsm.ACLTokenBootstrapRequestType, &structs.ACLTokenBootstrapRequest{Token: tok, ResetIndex: reset})
	if errors.Is(err, state.ErrACLBootstrapped) {
		return nil, Errorf(http.StatusBadRequest, "%s", err)
	}
	if err != nil {
		return nil, err
	}
	return s.storedToken(tok.AccessorID, secret)
}

// storedToken answers the token as stored, with secret as its SecretID.
func (s *Server) storedToken(accessor, secret string) (*structs.ACLToken, error) {
	snap := s.backend.State().Snapshot()
	tok, err := snap.ACLTokenByAccessor(accessor)
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, Errorf(http.StatusNotFound, "ACL token not found")
	}
	return tokenAnswer(snap, tok, secret)
}

// callerPolicies says which policies a non-management caller may read:
// those of its token (its own and its roles'), "anonymous" for a request
// without one.
func callerPolicies(z *authz, snap *state.Snapshot) (all bool, names []string, err error) {
	switch {
	case z.acl.IsManagement():
		return true, nil, nil
	case z.token != nil:
		names, err = snap.TokenPolicyNames(z.token)
		return false, names, err
	}
	return false, []string{structs.AnonymousPolicy}, nil
}

func (s *Server) aclPolicies(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		all, names, err := callerPolicies(authzOf(r), snap)
		if err != nil {
			return nil, 0, err
		}
		ps, err := snap.ACLPoliciesByPrefix(o.Prefix)
		if err != nil {
			return nil, 0, err
		}
		out := []*structs.ACLPolicyListStub{}
		for _, p := range ps {
			if all || slices.Contains(names, p.Name) {
				out = append(out, p.Stub())
			}
		}
		idx, err := snap.Index(state.TableACLPolicies)
		// Nomad floors its ACL lists' index at 1 (the evaluations' and
		// allocations' lists answer 0 while empty).
		return out, max(idx, 1), err
	})
}

// aclPolicySelf lists the policies of the caller's token, those of its
// roles included, as Nomad's (a management token: every policy).
func (s *Server) aclPolicySelf(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.aclPolicies(w, r)
}

func (s *Server) aclPolicyInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	all, names, err := callerPolicies(authzOf(r), s.backend.State().Snapshot())
	if err != nil {
		return nil, err
	}
	if !all && !slices.Contains(names, name) {
		return nil, Errorf(http.StatusForbidden, "%s: reading policy %q needs a management token or a token that has it: %w",
			ErrPermissionDenied, name, ErrPermissionDenied)
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		p, err := snap.ACLPolicyByName(name)
		if err != nil {
			return nil, 0, err
		}
		idx, err := snap.Index(state.TableACLPolicies)
		if err != nil {
			return nil, 0, err
		}
		if p == nil {
			return nil, idx, Errorf(http.StatusNotFound, "ACL policy not found")
		}
		return p, idx, nil
	})
}

func (s *Server) aclPolicyUpsert(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	var p structs.ACLPolicy
	if err := decodeBody(r, &p); err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	switch {
	case p.Name == "":
		p.Name = name
	case p.Name != name:
		return nil, Errorf(http.StatusBadRequest, "Name: policy name %q does not match request path %q", p.Name, name)
	}
	if !policyNameRE.MatchString(p.Name) {
		return nil, Errorf(http.StatusBadRequest, "Name: invalid policy name %q: 1 to 128 letters, digits and dashes", p.Name)
	}
	if len(p.Description) > maxDescriptionLen {
		return nil, Errorf(http.StatusBadRequest, "Description: longer than %d characters", maxDescriptionLen)
	}
	if _, err := acl.Parse(p.Name, fmt.Sprintf("policy %q", p.Name), p.Rules); err != nil {
		return nil, Errorf(http.StatusBadRequest, "Rules: %w", err)
	}
	p.CreateIndex, p.ModifyIndex = 0, 0
	_, err := s.applyACL(w, r, fsm.ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{&p}})
	return nil, err
}

func (s *Server) aclPolicyDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	_, err := s.applyACL(w, r, fsm.ACLPolicyDeleteRequestType, &structs.ACLPolicyDeleteRequest{Names: []string{r.PathValue("name")}})
	if errors.Is(err, state.ErrNotFound) {
		return nil, Errorf(http.StatusNotFound, "ACL policy not found: %w", err)
	}
	return nil, err
}

func (s *Server) aclTokens(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		toks, err := snap.ACLTokensByPrefix(o.Prefix)
		if err != nil {
			return nil, 0, err
		}
		out := make([]*structs.ACLTokenListStub, 0, len(toks))
		for _, t := range toks {
			if t, err = snap.FixTokenRoleLinks(t); err != nil {
				return nil, 0, err
			}
			out = append(out, t.Stub())
		}
		idx, err := snap.Index(state.TableACLTokens)
		// Nomad floors its ACL lists' index at 1 (the evaluations' and
		// allocations' lists answer 0 while empty).
		return out, max(idx, 1), err
	})
}

func (s *Server) aclTokenSelf(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	tok := authzOf(r).token
	s.setMeta(w, tok.ModifyIndex)
	// The caller presented its secret: answering it tells it nothing new.
	return tokenAnswer(s.backend.State().Snapshot(), tok, TokenFromRequest(r))
}

func (s *Server) aclTokenInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	z, accessor := authzOf(r), r.PathValue("accessor")
	if !z.acl.IsManagement() && z.token.AccessorID != accessor {
		return nil, Errorf(http.StatusForbidden, "%s: reading another token needs a management token: %w", ErrPermissionDenied, ErrPermissionDenied)
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		tok, err := snap.ACLTokenByAccessor(accessor)
		if err != nil {
			return nil, 0, err
		}
		idx, err := snap.Index(state.TableACLTokens)
		if err != nil {
			return nil, 0, err
		}
		if tok == nil {
			return nil, idx, Errorf(http.StatusNotFound, "ACL token not found")
		}
		secret := TokenFromRequest(r)
		if z.acl.IsManagement() && !structs.SecretMatches(secret, tok.SecretHash) {
			secret = s.tokenSecret(snap, tok)
		}
		if !structs.SecretMatches(secret, tok.SecretHash) {
			secret = ""
		}
		a, err := tokenAnswer(snap, tok, secret)
		return a, idx, err
	})
}

// checkToken checks what a token create or update may write.
func (s *Server) checkToken(t *structs.ACLToken) error {
	switch t.Type {
	case structs.ACLTokenTypeClient:
		if len(t.Policies) == 0 && len(t.Roles) == 0 {
			return Errorf(http.StatusBadRequest, "Policies: client token missing policies or roles")
		}
	case structs.ACLTokenTypeManagement:
		if len(t.Policies) > 0 || len(t.Roles) > 0 {
			return Errorf(http.StatusBadRequest, "Policies: management token cannot be associated with policies or roles")
		}
	default:
		return Errorf(http.StatusBadRequest, "Type: token type must be client or management (got %q)", t.Type)
	}
	for i, l := range t.Roles {
		if l == nil || (l.ID == "" && l.Name == "") {
			return Errorf(http.StatusBadRequest, "Roles[%d]: a role link needs an ID or a Name", i)
		}
	}
	if len(t.Name) > maxTokenNameLen {
		return Errorf(http.StatusBadRequest, "Name: longer than %d characters", maxTokenNameLen)
	}
	// A token links its policies by name, as Nomad's: one that names a
	// policy not written yet (or deleted) is accepted, and that name
	// grants nothing until a policy of that name exists.
	for i, name := range t.Policies {
		if name == "" {
			return Errorf(http.StatusBadRequest, "Policies[%d]: empty policy name", i)
		}
	}
	return nil
}

func (s *Server) aclTokenCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	var t structs.ACLToken
	if err := decodeBody(r, &t); err != nil {
		return nil, err
	}
	if t.AccessorID != "" {
		return nil, Errorf(http.StatusBadRequest, "AccessorID: cannot be set when creating a token (PUT /v1/acl/token/{accessor} uploads one)")
	}
	return s.createToken(w, r, &t, structs.GenerateUUID(), structs.GenerateUUID())
}

// createToken writes a new token with the given IDs and answers it with
// its secret.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request, t *structs.ACLToken, accessor, secret string) (any, error) {
	if err := s.checkToken(t); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	switch {
	case t.ExpirationTTL < 0:
		return nil, Errorf(http.StatusBadRequest, "ExpirationTTL: must not be negative")
	case t.ExpirationTTL > 0 && t.ExpirationTime != nil:
		return nil, Errorf(http.StatusBadRequest, "ExpirationTTL: cannot be set with ExpirationTime")
	case t.ExpirationTTL > 0:
		at := now.Add(t.ExpirationTTL)
		t.ExpirationTime = &at
	case t.ExpirationTime != nil && !t.ExpirationTime.After(now):
		return nil, Errorf(http.StatusBadRequest, "ExpirationTime: %s is in the past", t.ExpirationTime.Format("2006-01-02T15:04:05Z07:00"))
	}
	t.AccessorID, t.SecretID, t.SecretHash = accessor, "", structs.HashSecret(secret)
	t.CreateTime, t.CreateIndex, t.ModifyIndex = now, 0, 0
	sealed, err := s.sealSecret(r.Context(), tokenSecretLabel(accessor), []byte(secret))
	if err != nil {
		return nil, err
	}
	t.Sealed = sealed
	if err := s.writeToken(w, r, t); err != nil {
		return nil, err
	}
	return s.storedToken(accessor, secret)
}

func (s *Server) aclTokenUpdate(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	var t structs.ACLToken
	if err := decodeBody(r, &t); err != nil {
		return nil, err
	}
	accessor := r.PathValue("accessor")
	switch {
	case t.AccessorID == "":
		t.AccessorID = accessor
	case t.AccessorID != accessor:
		return nil, Errorf(http.StatusBadRequest, "AccessorID: %q does not match request path %q", t.AccessorID, accessor)
	}
	old, err := s.backend.State().Snapshot().ACLTokenByAccessor(accessor)
	if err != nil {
		return nil, err
	}
	if old == nil {
		// Nomad's upload: a client token with the caller's IDs.
		if t.SecretID == "" {
			return nil, Errorf(http.StatusNotFound, "ACL token not found")
		}
		if !uuidRE.MatchString(accessor) || !uuidRE.MatchString(t.SecretID) {
			return nil, Errorf(http.StatusBadRequest, "an uploaded token's AccessorID and SecretID must be UUIDs")
		}
		if t.Type == structs.ACLTokenTypeManagement {
			return nil, Errorf(http.StatusBadRequest, "Type: management tokens cannot be uploaded")
		}
		secret := t.SecretID
		return s.createToken(w, r, &t, accessor, secret)
	}
	if t.Type != old.Type {
		return nil, Errorf(http.StatusBadRequest, "Type: cannot change a %s token into a %s token", old.Type, t.Type)
	}
	// A token's expiry is set when it is made, as Nomad's: an update that
	// gives a TTL or another expiration time is refused.
	if t.ExpirationTTL != 0 || (t.ExpirationTime != nil && (old.ExpirationTime == nil || !t.ExpirationTime.Equal(*old.ExpirationTime))) {
		return nil, Errorf(http.StatusBadRequest, "Cannot change expiration time")
	}
	if err := s.checkToken(&t); err != nil {
		return nil, err
	}
	up := old.Copy()
	up.Name, up.Policies, up.Roles, up.Global = t.Name, t.Policies, t.Roles, t.Global
	if err := s.writeToken(w, r, up); err != nil {
		return nil, err
	}
	snap := s.backend.State().Snapshot()
	return s.storedToken(accessor, s.tokenSecret(snap, old))
}

// writeToken writes one token; a role link to a role that does not exist
// is a 400, as a secret already in use.
func (s *Server) writeToken(w http.ResponseWriter, r *http.Request, t *structs.ACLToken) error {
	_, err := s.applyACL(w, r, fsm.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{t}})
	switch {
	case errors.Is(err, state.ErrConflict):
		return Errorf(http.StatusBadRequest, "SecretID: already in use")
	case errors.Is(err, state.ErrNotFound):
		return Errorf(http.StatusBadRequest, "Roles: %s", strings.TrimSuffix(err.Error(), ": "+state.ErrNotFound.Error()))
	}
	return err
}

func (s *Server) aclTokenDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	_, err := s.applyACL(w, r, fsm.ACLTokenDeleteRequestType, &structs.ACLTokenDeleteRequest{AccessorIDs: []string{r.PathValue("accessor")}})
	if errors.Is(err, state.ErrNotFound) {
		return nil, Errorf(http.StatusNotFound, "ACL token not found: %w", err)
	}
	return nil, err
}

// aclResolve answers a client agent what a token grants.
func (s *Server) aclResolve(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	var req structs.ACLResolveRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	snap := s.backend.State().Snapshot()
	idx, err := snap.MaxIndex(state.TableACLTokens, state.TableACLPolicies, state.TableACLRoles)
	if err != nil {
		return nil, err
	}
	s.setMeta(w, idx)
	out := &structs.ACLResolveResponse{}
	names := []string{structs.AnonymousPolicy}
	if strings.TrimSpace(req.SecretID) != "" {
		tok, err := snap.ACLTokenBySecretHash(structs.HashSecret(req.SecretID))
		if err != nil {
			return nil, err
		}
		if tok == nil || tok.Expired(s.now()) {
			return out, nil
		}
		out.AccessorID, out.Management, out.ExpirationTime = tok.AccessorID, tok.Management(), tok.ExpirationTime
		if names, err = snap.TokenPolicyNames(tok); err != nil {
			return nil, err
		}
	}
	out.Found = true
	if out.Management {
		return out, nil
	}
	for _, n := range names {
		p, err := snap.ACLPolicyByName(n)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out.Policies = append(out.Policies, p)
		}
	}
	return out, nil
}
