package httpapi

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"slices"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/internal/keyring"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The ACL roles, binding rules and one-time tokens, Nomad's paths and
// shapes (website/api/acl.md):
//
//	GET      /v1/acl/roles                    → []ACLRoleListStub (management: all; others: their token's)
//	PUT|POST /v1/acl/role                     ACLRole → the new role (management)
//	GET      /v1/acl/role/{id}                → ACLRole (management, or a token that has it)
//	GET      /v1/acl/role/name/{name}         → ACLRole (management, or a token that has it)
//	PUT|POST /v1/acl/role/{id}                ACLRole → the updated role (management)
//	DELETE   /v1/acl/role/{id}                → null (management)
//	GET      /v1/acl/binding-rules            → []ACLBindingRuleListStub (management)
//	PUT|POST /v1/acl/binding-rule             ACLBindingRule → the new rule (management)
//	GET      /v1/acl/binding-rule/{id}        → ACLBindingRule (management)
//	PUT|POST /v1/acl/binding-rule/{id}        ACLBindingRule → the updated rule (management)
//	DELETE   /v1/acl/binding-rule/{id}        → null (management)
//	PUT|POST /v1/acl/token/onetime            → {"OneTimeToken"} (a token)
//	PUT|POST /v1/acl/token/onetime/exchange   {"OneTimeSecretID"} → {"Token"}, with its SecretID (anyone)
func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(
			route{m + " /v1/acl/role", writeRoute, management, (*Server).aclRoleCreate},
			route{m + " /v1/acl/role/{id}", writeRoute, management, (*Server).aclRoleUpdate},
			route{m + " /v1/acl/binding-rule", writeRoute, management, (*Server).aclBindingRuleCreate},
			route{m + " /v1/acl/binding-rule/{id}", writeRoute, management, (*Server).aclBindingRuleUpdate},
			route{m + " /v1/acl/token/onetime", writeRoute, anyToken, (*Server).aclOneTimeTokenCreate},
			route{m + " /v1/acl/token/onetime/exchange", writeRoute, public, (*Server).aclOneTimeTokenExchange},
		)
	}
	register(
		route{"GET /v1/acl/roles", readRoute, anyCaller, (*Server).aclRoles},
		route{"GET /v1/acl/role/{id}", readRoute, anyCaller, (*Server).aclRoleInfo},
		route{"GET /v1/acl/role/name/{name}", readRoute, anyCaller, (*Server).aclRoleInfo},
		route{"DELETE /v1/acl/role/{id}", writeRoute, management, (*Server).aclRoleDelete},
		route{"GET /v1/acl/binding-rules", readRoute, management, (*Server).aclBindingRules},
		route{"GET /v1/acl/binding-rule/{id}", readRoute, management, (*Server).aclBindingRuleInfo},
		route{"DELETE /v1/acl/binding-rule/{id}", writeRoute, management, (*Server).aclBindingRuleDelete},
	)
}

// tokenSecretLabel binds a token's sealed secret to its accessor.
func tokenSecretLabel(accessor string) string { return "acl-token/" + accessor }

// sealSecret seals secret under the keyring's active key (made first on
// the leader when there is none).
func (s *Server) sealSecret(ctx context.Context, label string, secret []byte) (*structs.SealedSecret, error) {
	key, err := s.ensureRootKey(ctx)
	if err != nil {
		return nil, err
	}
	nonce, err := keyring.NewNonce(rand.Reader)
	if err != nil {
		return nil, err
	}
	return keyring.SealSecret(key, nonce, label, secret)
}

// tokenSecret opens a stored token's sealed secret; "" for a token made
// before secrets were sealed, or whose key is gone.
func (s *Server) tokenSecret(snap *state.Snapshot, tok *structs.ACLToken) string {
	if tok == nil || tok.Sealed == nil {
		return ""
	}
	b, err := keyring.OpenSecret(tok.Sealed, tokenSecretLabel(tok.AccessorID), snap.RootKeyByID)
	if err != nil {
		s.logger.Warn("cannot open a token's sealed secret", "accessor", tok.AccessorID, "error", err)
		return ""
	}
	return string(b)
}

// tokenAnswer answers a stored token with its role links as they stand
// and secret as its SecretID.
func tokenAnswer(snap *state.Snapshot, tok *structs.ACLToken, secret string) (*structs.ACLToken, error) {
	fixed, err := snap.FixTokenRoleLinks(tok)
	if err != nil {
		return nil, err
	}
	return fixed.Public(secret), nil
}

// callerRoles says which roles a non-management caller may read: those
// its token links (none for the anonymous token).
func callerRoles(z *authz) (all bool, ids []string) {
	switch {
	case z.acl.IsManagement() || !z.enabled:
		return true, nil
	case z.token != nil:
		for _, l := range z.token.Roles {
			if l != nil {
				ids = append(ids, l.ID)
			}
		}
	}
	return false, ids
}

// checkRole checks what a role create or update may write.
func checkRole(r *structs.ACLRole) error {
	if !policyNameRE.MatchString(r.Name) {
		return Errorf(http.StatusBadRequest, "Name: invalid ACL role name %q: 1 to 128 letters, digits and dashes", r.Name)
	}
	if len(r.Description) > maxDescriptionLen {
		return Errorf(http.StatusBadRequest, "Description: longer than %d characters", maxDescriptionLen)
	}
	if len(r.Policies) == 0 {
		return Errorf(http.StatusBadRequest, "Policies: at least one policy should be specified")
	}
	// A role links its policies by name, as Nomad's tokens: a name of a
	// policy not written yet is accepted and grants nothing until then.
	for i, p := range r.Policies {
		if p == nil || p.Name == "" {
			return Errorf(http.StatusBadRequest, "Policies[%d]: empty policy name", i)
		}
	}
	return nil
}

func (s *Server) aclRoles(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	all, ids := callerRoles(authzOf(r))
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		roles, err := snap.ACLRoles(o.Prefix)
		if err != nil {
			return nil, 0, err
		}
		out := []*structs.ACLRoleListStub{}
		for _, role := range roles {
			if all || slices.Contains(ids, role.ID) {
				out = append(out, role.Stub())
			}
		}
		idx, err := snap.Index(state.TableACLRoles)
		return out, max(idx, 1), err
	})
}

func (s *Server) aclRoleInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	all, ids := callerRoles(authzOf(r))
	id, name := r.PathValue("id"), r.PathValue("name")
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		var role *structs.ACLRole
		var err error
		if name != "" {
			role, err = snap.ACLRoleByName(name)
		} else {
			role, err = snap.ACLRoleByID(id)
		}
		if err != nil {
			return nil, 0, err
		}
		idx, err := snap.Index(state.TableACLRoles)
		if err != nil {
			return nil, 0, err
		}
		if role == nil {
			if !all {
				return nil, idx, Errorf(http.StatusForbidden, "%s: reading a role needs a management token or a token that has it: %w", ErrPermissionDenied, ErrPermissionDenied)
			}
			return nil, idx, Errorf(http.StatusNotFound, "ACL role not found")
		}
		if !all && !slices.Contains(ids, role.ID) {
			return nil, idx, Errorf(http.StatusForbidden, "%s: reading a role needs a management token or a token that has it: %w", ErrPermissionDenied, ErrPermissionDenied)
		}
		return role, idx, nil
	})
}

func (s *Server) aclRoleCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	role, err := roleKind.decode(s, r)
	if err != nil {
		return nil, err
	}
	if role.ID != "" {
		return nil, Errorf(http.StatusBadRequest, "ID: cannot be set when creating a role (PUT /v1/acl/role/{id} updates one)")
	}
	role.ID = structs.GenerateUUID()
	return s.writeRole(w, r, role)
}

func (s *Server) aclRoleUpdate(w http.ResponseWriter, r *http.Request) (any, error) {
	role, err := roleKind.decode(s, r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	if !samePathID(&role.ID, id) {
		return nil, Errorf(http.StatusBadRequest, "ID: ACL role ID in URL must match role ID in body")
	}
	if _, err := roleKind.found(s.backend.State().Snapshot().ACLRoleByID(id)); err != nil {
		return nil, err
	}
	return s.writeRole(w, r, role)
}

func (s *Server) writeRole(w http.ResponseWriter, r *http.Request, role *structs.ACLRole) (any, error) {
	if err := checkRole(role); err != nil {
		return nil, err
	}
	role.CreateIndex, role.ModifyIndex = 0, 0
	_, err := s.applyACL(w, r, fsm.ACLRoleUpsertRequestType, &structs.ACLRoleUpsertRequest{Roles: []*structs.ACLRole{role}})
	if errors.Is(err, state.ErrConflict) {
		return nil, Errorf(http.StatusBadRequest, "Name: %s", strings.TrimSuffix(err.Error(), ": "+state.ErrConflict.Error()))
	}
	if err != nil {
		return nil, err
	}
	return roleKind.found(s.backend.State().Snapshot().ACLRoleByID(role.ID))
}

func (s *Server) aclRoleDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	return roleKind.delete(s, w, r, fsm.ACLRoleDeleteRequestType, &structs.ACLRoleDeleteRequest{IDs: []string{r.PathValue("id")}})
}

func (s *Server) aclBindingRules(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		rules, err := snap.ACLBindingRules(o.Prefix)
		if err != nil {
			return nil, 0, err
		}
		out := make([]*structs.ACLBindingRuleListStub, 0, len(rules))
		for _, b := range rules {
			out = append(out, b.Stub())
		}
		idx, err := snap.Index(state.TableACLBindingRules)
		return out, max(idx, 1), err
	})
}

func (s *Server) aclBindingRuleInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	return bindingRuleKind.read(s, w, r, func(snap *state.Snapshot) (*structs.ACLBindingRule, error) {
		return snap.ACLBindingRuleByID(id)
	}, asStored)
}

// checkBindingRule checks what a binding rule create or update may write.
func checkBindingRule(b *structs.ACLBindingRule) error {
	if b.AuthMethod == "" {
		return Errorf(http.StatusBadRequest, "AuthMethod: auth method is missing")
	}
	if len(b.Description) > maxDescriptionLen {
		return Errorf(http.StatusBadRequest, "Description: longer than %d characters", maxDescriptionLen)
	}
	if err := acl.CheckSelector(b.Selector); err != nil {
		return Errorf(http.StatusBadRequest, "Selector: %s", err)
	}
	switch b.BindType {
	case structs.ACLBindingRuleBindTypeRole, structs.ACLBindingRuleBindTypePolicy:
		if b.BindName == "" {
			return Errorf(http.StatusBadRequest, "BindName: bind name is missing")
		}
		if err := acl.CheckTemplate(b.BindName); err != nil {
			return Errorf(http.StatusBadRequest, "BindName: %s", err)
		}
	case structs.ACLBindingRuleBindTypeManagement:
		if b.BindName != "" {
			return Errorf(http.StatusBadRequest, "BindName: must be empty for the management bind type")
		}
	default:
		return Errorf(http.StatusBadRequest, "BindType: unsupported bind type %q (role, policy or management)", b.BindType)
	}
	return nil
}

func (s *Server) aclBindingRuleCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	b, err := bindingRuleKind.decode(s, r)
	if err != nil {
		return nil, err
	}
	if b.ID != "" {
		return nil, Errorf(http.StatusBadRequest, "ID: cannot be set when creating a binding rule (PUT /v1/acl/binding-rule/{id} updates one)")
	}
	b.ID = structs.GenerateUUID()
	b.CreateTime = s.now().UTC()
	return s.writeBindingRule(w, r, b)
}

func (s *Server) aclBindingRuleUpdate(w http.ResponseWriter, r *http.Request) (any, error) {
	b, err := bindingRuleKind.decode(s, r)
	if err != nil {
		return nil, err
	}
	id := r.PathValue("id")
	if !samePathID(&b.ID, id) {
		return nil, Errorf(http.StatusBadRequest, "ID: ACL binding rule ID in URL must match binding rule ID in body")
	}
	old, err := bindingRuleKind.found(s.backend.State().Snapshot().ACLBindingRuleByID(id))
	if err != nil {
		return nil, err
	}
	if b.AuthMethod != old.AuthMethod && b.AuthMethod != "" {
		return nil, Errorf(http.StatusBadRequest, "AuthMethod: cannot change the auth method of a binding rule")
	}
	b.AuthMethod = old.AuthMethod
	return s.writeBindingRule(w, r, b)
}

func (s *Server) writeBindingRule(w http.ResponseWriter, r *http.Request, b *structs.ACLBindingRule) (any, error) {
	if err := checkBindingRule(b); err != nil {
		return nil, err
	}
	b.ModifyTime = s.now().UTC()
	if b.CreateTime.IsZero() {
		b.CreateTime = b.ModifyTime
	}
	b.CreateIndex, b.ModifyIndex = 0, 0
	_, err := s.applyACL(w, r, fsm.ACLBindingRuleUpsertRequestType, &structs.ACLBindingRuleUpsertRequest{Rules: []*structs.ACLBindingRule{b}})
	if errors.Is(err, state.ErrNotFound) {
		return nil, Errorf(http.StatusBadRequest, "AuthMethod: ACL auth-method %q not found", b.AuthMethod)
	}
	if err != nil {
		return nil, err
	}
	return bindingRuleKind.found(s.backend.State().Snapshot().ACLBindingRuleByID(b.ID))
}

func (s *Server) aclBindingRuleDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	return bindingRuleKind.delete(s, w, r, fsm.ACLBindingRuleDeleteRequestType, &structs.ACLBindingRuleDeleteRequest{IDs: []string{r.PathValue("id")}})
}

// aclOneTimeTokenCreate makes a one-time token for the caller's token.
func (s *Server) aclOneTimeTokenCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	z := authzOf(r)
	if z.token == nil {
		return nil, Errorf(http.StatusForbidden, "%s: a one-time token needs a token: %w", ErrPermissionDenied, ErrPermissionDenied)
	}
	secret, now := structs.GenerateUUID(), s.now().UTC()
	ott := &structs.OneTimeToken{AccessorID: z.token.AccessorID, SecretHash: structs.HashSecret(secret), ExpiresAt: now.Add(structs.OneTimeTokenTTL)}
	if _, err := s.applyACL(w, r, fsm.OneTimeTokenUpsertRequestType, &structs.OneTimeTokenUpsertRequest{Token: ott, Now: now}); err != nil {
		return nil, err
	}
	stored, err := s.backend.State().Snapshot().OneTimeTokenBySecretHash(ott.SecretHash)
	if err != nil {
		return nil, err
	}
	if stored == nil {
		return nil, Errorf(http.StatusNotFound, "one-time token not found")
	}
	out := *stored
	out.OneTimeSecretID = secret
	return map[string]any{"OneTimeToken": &out}, nil
}

// aclOneTimeTokenExchange uses a one-time token up and answers the token
// that asked for it, with its secret.
func (s *Server) aclOneTimeTokenExchange(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	var req struct{ OneTimeSecretID string }
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if req.OneTimeSecretID == "" {
		return nil, Errorf(http.StatusBadRequest, "OneTimeSecretID: missing secret ID")
	}
	hash := structs.HashSecret(req.OneTimeSecretID)
	ott, err := s.backend.State().Snapshot().UsableOneTimeToken(hash, s.now())
	if err != nil {
		return nil, err
	}
	if ott == nil {
		return nil, Errorf(http.StatusForbidden, "%s: one-time token not found or expired: %w", ErrPermissionDenied, ErrPermissionDenied)
	}
	if _, err := s.applyACL(w, r, fsm.OneTimeTokenExchangeRequestType, &structs.OneTimeTokenExchangeRequest{SecretHash: hash}); err != nil {
		if errors.Is(err, state.ErrNotFound) {
			return nil, Errorf(http.StatusForbidden, "%s: one-time token not found or expired: %w", ErrPermissionDenied, ErrPermissionDenied)
		}
		return nil, err
	}
	snap := s.backend.State().Snapshot()
	tok, err := snap.ACLTokenByAccessor(ott.AccessorID)
	if err != nil {
		return nil, err
	}
	if tok == nil || tok.Expired(s.now()) {
		return nil, Errorf(http.StatusForbidden, "%s: %w", ErrTokenNotFound, ErrTokenNotFound)
	}
	out, err := tokenAnswer(snap, tok, s.tokenSecret(snap, tok))
	if err != nil {
		return nil, err
	}
	return map[string]any{"Token": out}, nil
}
