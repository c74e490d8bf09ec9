package httpapi

import (
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/internal/keyring"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The ACL auth methods and logins, Nomad's paths and shapes
// (website/api/acl.md):
//
//	GET      /v1/acl/auth-methods            → []ACLAuthMethodListStub (anyone, as Nomad's)
//	PUT|POST /v1/acl/auth-method             ACLAuthMethod → the method (management)
//	GET      /v1/acl/auth-method/{name}      → ACLAuthMethod (management)
//	PUT|POST /v1/acl/auth-method/{name}      ACLAuthMethod → the method (management)
//	DELETE   /v1/acl/auth-method/{name}      → null, its binding rules deleted too (management)
//	PUT|POST /v1/acl/login                   {"AuthMethodName","LoginToken"} → a new ACLToken, with its SecretID (anyone)
//	PUT|POST /v1/acl/oidc/auth-url           → 400: drover has no OIDC browser flow
//	PUT|POST /v1/acl/oidc/complete-auth      → 400: drover has no OIDC browser flow
//	PUT|POST /v1/acl/identity/client-introduction-token → see node_identity.go
//
// JWT and OIDC methods are stored and checked; a login works with a JWT
// method: the JWT is verified against the method's public keys (its
// JWTValidationPubKeys, or the key set at its JWKSURL or its OIDC
// discovery document's jwks_uri, fetched by the leader and kept a
// minute, keySetTTL),
// bound audiences and issuers and leeways; its claims are mapped
// (ClaimMappings, ListClaimMappings), the method's binding rules are
// evaluated over them, and a token is made with the roles and policies
// they bind (or a management token), named by TokenNameFormat, expiring
// after MaxTokenTTL, global when TokenLocality is "global". The method's
// secrets (OIDCClientSecret, an OIDCClientAssertion's PemKey) are sealed
// under the keyring and answered as "redacted"; an update that sends
// "redacted" keeps the stored one. Neither they nor login tokens are
// logged.
func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(
			route{m + " /v1/acl/auth-method", writeRoute, management, (*Server).aclAuthMethodCreate},
			route{m + " /v1/acl/auth-method/{name}", writeRoute, management, (*Server).aclAuthMethodUpdate},
			route{m + " /v1/acl/login", writeRoute, public, (*Server).aclLogin},
			route{m + " /v1/acl/oidc/auth-url", localRoute, public, (*Server).aclOIDCUnsupported},
			route{m + " /v1/acl/oidc/complete-auth", localRoute, public, (*Server).aclOIDCUnsupported},
		)
	}
	register(
		route{"GET /v1/acl/auth-methods", readRoute, public, (*Server).aclAuthMethods},
		route{"GET /v1/acl/auth-method/{name}", readRoute, management, (*Server).aclAuthMethodInfo},
		route{"DELETE /v1/acl/auth-method/{name}", writeRoute, management, (*Server).aclAuthMethodDelete},
	)
}

// Nomad's default bounds of an auth method's MaxTokenTTL (its agent's
// acl.token_min_expiration_ttl and token_max_expiration_ttl).
const (
	minAuthMethodTokenTTL = time.Minute
	maxAuthMethodTokenTTL = 24 * time.Hour
)

// errOIDCUnsupported answers the OIDC browser flow's endpoints.
var errOIDCUnsupported = errors.New("the OIDC browser flow is not supported by drover; log in with a JWT auth method (PUT /v1/acl/login, drover login -type=JWT)")

func (s *Server) aclOIDCUnsupported(http.ResponseWriter, *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	return nil, Errorf(http.StatusBadRequest, "%s", errOIDCUnsupported)
}

func authMethodSecretLabel(name string) string { return "acl-auth-method/" + name }

// answerAuthMethod is a stored method as answered: its secrets are
// "redacted" (the stored configuration holds that marker, never them).
func answerAuthMethod(m *structs.ACLAuthMethod) *structs.ACLAuthMethod {
	c := m.Copy()
	c.Sealed = nil
	return c
}

func (s *Server) aclAuthMethods(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		ms, err := snap.ACLAuthMethods()
		if err != nil {
			return nil, 0, err
		}
		out := make([]*structs.ACLAuthMethodListStub, 0, len(ms))
		for _, m := range ms {
			out = append(out, m.Stub())
		}
		idx, err := snap.Index(state.TableACLAuthMethods)
		return out, max(idx, 1), err
	})
}

func (s *Server) aclAuthMethodInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	name := r.PathValue("name")
	return authMethodKind.read(s, w, r, func(snap *state.Snapshot) (*structs.ACLAuthMethod, error) {
		return snap.ACLAuthMethodByName(name)
	}, answerAuthMethod)
}

// checkAuthMethod checks what an auth method create or update may write,
// and fills in Nomad's defaults.
func checkAuthMethod(m *structs.ACLAuthMethod) error {
	if !policyNameRE.MatchString(m.Name) {
		return Errorf(http.StatusBadRequest, "Name: invalid name %q: 1 to 128 letters, digits and dashes", m.Name)
	}
	switch m.Type {
	case structs.ACLAuthMethodTypeJWT, structs.ACLAuthMethodTypeOIDC:
	default:
		return Errorf(http.StatusBadRequest, "Type: invalid auth method type %q (JWT or OIDC)", m.Type)
	}
	switch m.TokenLocality {
	case structs.ACLAuthMethodTokenLocalityLocal, structs.ACLAuthMethodTokenLocalityGlobal:
	default:
		return Errorf(http.StatusBadRequest, "TokenLocality: invalid token locality %q (local or global)", m.TokenLocality)
	}
	if m.MaxTokenTTL < minAuthMethodTokenTTL || m.MaxTokenTTL > maxAuthMethodTokenTTL {
		return Errorf(http.StatusBadRequest, "MaxTokenTTL: invalid MaxTokenTTL value '%s' (should be between %s and %s)",
			m.MaxTokenTTL, minAuthMethodTokenTTL, maxAuthMethodTokenTTL)
	}
	if m.TokenNameFormat == "" {
		m.TokenNameFormat = structs.ACLAuthMethodDefaultTokenNameFormat
	}
	if err := acl.CheckTemplate(m.TokenNameFormat, "auth_method_type", "auth_method_name"); err != nil {
		return Errorf(http.StatusBadRequest, "TokenNameFormat: %s", err)
	}
	c := m.Config
	if c == nil {
		return Errorf(http.StatusBadRequest, "Config: missing auth method configuration")
	}
	for i, alg := range c.SigningAlgs {
		if !slices.Contains(acl.SupportedSigningAlgs, alg) {
			return Errorf(http.StatusBadRequest, "Config.SigningAlgs[%d]: unsupported signing algorithm %q (%s)", i, alg, strings.Join(acl.SupportedSigningAlgs, ", "))
		}
	}
	for _, u := range []struct{ field, value string }{{"JWKSURL", c.JWKSURL}, {"OIDCDiscoveryURL", c.OIDCDiscoveryURL}} {
		if u.value == "" {
			continue
		}
		p, err := url.Parse(u.value)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return Errorf(http.StatusBadRequest, "Config.%s: %q is not an http or https URL", u.field, u.value)
		}
	}
	if c.JWKSCACert != "" {
		if !x509.NewCertPool().AppendCertsFromPEM([]byte(c.JWKSCACert)) {
			return Errorf(http.StatusBadRequest, "Config.JWKSCACert: no PEM certificate")
		}
	}
	if _, err := acl.ParsePublicKeys(c.JWTValidationPubKeys); err != nil {
		return Errorf(http.StatusBadRequest, "Config.%s", err)
	}
	if c.ExpirationLeeway < 0 && c.ExpirationLeeway != -1 || c.NotBeforeLeeway < 0 && c.NotBeforeLeeway != -1 || c.ClockSkewLeeway < 0 && c.ClockSkewLeeway != -1 {
		return Errorf(http.StatusBadRequest, "Config: leeways must not be negative (-1 turns one off)")
	}
	switch m.Type {
	case structs.ACLAuthMethodTypeJWT:
		set := 0
		for _, b := range []bool{len(c.JWTValidationPubKeys) > 0, c.JWKSURL != "", c.OIDCDiscoveryURL != ""} {
			if b {
				set++
			}
		}
		if set != 1 {
			return Errorf(http.StatusBadRequest, "Config: exactly one of JWTValidationPubKeys, JWKSURL or OIDCDiscoveryURL must be set for a JWT auth method")
		}
	case structs.ACLAuthMethodTypeOIDC:
		if c.OIDCDiscoveryURL == "" {
			return Errorf(http.StatusBadRequest, "Config.OIDCDiscoveryURL: missing for an OIDC auth method")
		}
		if c.OIDCClientID == "" {
			return Errorf(http.StatusBadRequest, "Config.OIDCClientID: missing for an OIDC auth method")
		}
	}
	return nil
}

func (s *Server) aclAuthMethodCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	m, err := authMethodKind.decode(s, r)
	if err != nil {
		return nil, err
	}
	return s.writeAuthMethod(w, r, m)
}

func (s *Server) aclAuthMethodUpdate(w http.ResponseWriter, r *http.Request) (any, error) {
	m, err := authMethodKind.decode(s, r)
	if err != nil {
		return nil, err
	}
	if name := r.PathValue("name"); !samePathID(&m.Name, name) {
		return nil, Errorf(http.StatusBadRequest, "Name: auth method name %q does not match request path %q", m.Name, name)
	}
	return s.writeAuthMethod(w, r, m)
}

// sealAuthMethodSecrets moves m's secrets out of its configuration into
// m.Sealed, leaving "redacted" where one is set; "redacted" sent back
// keeps the stored secret.
func (s *Server) sealAuthMethodSecrets(ctx context.Context, m, old *structs.ACLAuthMethod) error {
	var prev structs.ACLAuthMethodSecrets
	if old != nil && old.Sealed != nil {
		b, err := keyring.OpenSecret(old.Sealed, authMethodSecretLabel(old.Name), s.backend.State().Snapshot().RootKeyByID)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &prev); err != nil {
			return err
		}
	}
	c := m.Config
	next := structs.ACLAuthMethodSecrets{OIDCClientSecret: c.OIDCClientSecret}
	if next.OIDCClientSecret == structs.RedactedSecret {
		next.OIDCClientSecret = prev.OIDCClientSecret
	}
	c.OIDCClientSecret = ""
	if next.OIDCClientSecret != "" {
		c.OIDCClientSecret = structs.RedactedSecret
	}
	if a := c.OIDCClientAssertion; a != nil && a.PrivateKey != nil {
		next.PemKey = a.PrivateKey.PemKey
		if next.PemKey == structs.RedactedSecret {
			next.PemKey = prev.PemKey
		}
		a.PrivateKey.PemKey = ""
		if next.PemKey != "" {
			a.PrivateKey.PemKey = structs.RedactedSecret
		}
	}
	m.Sealed = nil
	if next == (structs.ACLAuthMethodSecrets{}) {
		return nil
	}
	b, err := json.Marshal(next)
	if err != nil {
		return err
	}
	m.Sealed, err = s.sealSecret(ctx, authMethodSecretLabel(m.Name), b)
	clear(b)
	return err
}

func (s *Server) writeAuthMethod(w http.ResponseWriter, r *http.Request, m *structs.ACLAuthMethod) (any, error) {
	if err := checkAuthMethod(m); err != nil {
		return nil, err
	}
	old, err := s.backend.State().Snapshot().ACLAuthMethodByName(m.Name)
	if err != nil {
		return nil, err
	}
	if err := s.sealAuthMethodSecrets(r.Context(), m, old); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	m.CreateTime, m.ModifyTime, m.CreateIndex, m.ModifyIndex = now, now, 0, 0
	_, err = s.applyACL(w, r, fsm.ACLAuthMethodUpsertRequestType, &structs.ACLAuthMethodUpsertRequest{Methods: []*structs.ACLAuthMethod{m}})
	if errors.Is(err, state.ErrConflict) {
		return nil, Errorf(http.StatusBadRequest, "Default: %s", strings.TrimSuffix(err.Error(), ": "+state.ErrConflict.Error()))
	}
	if err != nil {
		return nil, err
	}
	out, err := authMethodKind.found(s.backend.State().Snapshot().ACLAuthMethodByName(m.Name))
	if err != nil {
		return nil, err
	}
	return answerAuthMethod(out), nil
}

func (s *Server) aclAuthMethodDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	return authMethodKind.delete(s, w, r, fsm.ACLAuthMethodDeleteRequestType, &structs.ACLAuthMethodDeleteRequest{Names: []string{r.PathValue("name")}})
}

// loginRequest is Nomad's api.ACLLoginRequest.
type loginRequest struct {
	AuthMethodName string
	LoginToken     string
}

// maxKeySetBytes bounds a fetched key set or discovery document.
const maxKeySetBytes = 1 << 20

// keySetTTL is how long a fetched key set serves logins before it is
// fetched again; a JWT that its cached keys do not verify has them
// fetched at once (the provider may have rotated its keys).
const keySetTTL = time.Minute

// keySetMinRefetch bounds how often JWTs that do not verify make the
// leader fetch a key set again.
const keySetMinRefetch = 5 * time.Second

// keySets caches fetched key sets by where they come from, so that
// logins do not each make the leader fetch one.
var keySets struct {
	sync.Mutex
	m map[string]cachedKeySet
}

type cachedKeySet struct {
	keys []crypto.PublicKey
	at   time.Time
}

// loginKeys returns the public keys that verify a method's JWTs: its
// own, or those of its key set (JWKSURL, or its OIDC discovery
// document's jwks_uri), from the cache unless fresh, or fetched now.
// cached reports whether they came from the cache.
func (s *Server) loginKeys(ctx context.Context, c *structs.ACLAuthMethodConfig, fresh bool) (keys []crypto.PublicKey, cached bool, err error) {
	if len(c.JWTValidationPubKeys) > 0 {
		keys, err = acl.ParsePublicKeys(c.JWTValidationPubKeys)
		return keys, false, err
	}
	src := c.JWKSURL + "\x00" + c.OIDCDiscoveryURL + "\x00" + c.JWKSCACert
	now := s.now()
	keySets.Lock()
	ks, ok := keySets.m[src]
	keySets.Unlock()
	if age := now.Sub(ks.at); ok && age >= 0 && (age < keySetMinRefetch || !fresh && age < keySetTTL) {
		return ks.keys, true, nil
	}
	if keys, err = s.fetchKeySet(ctx, c); err != nil {
		return nil, false, err
	}
	keySets.Lock()
	if keySets.m == nil || len(keySets.m) >= 64 {
		keySets.m = map[string]cachedKeySet{}
	}
	keySets.m[src] = cachedKeySet{keys: keys, at: now}
	keySets.Unlock()
	return keys, false, nil
}

// fetchKeySet fetches the key set of a method's JWKSURL, or of its OIDC
// discovery document's jwks_uri.
func (s *Server) fetchKeySet(ctx context.Context, c *structs.ACLAuthMethodConfig) ([]crypto.PublicKey, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	if c.JWKSCACert != "" {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM([]byte(c.JWKSCACert))
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	}
	get := func(u string, out any) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		return json.NewDecoder(io.LimitReader(resp.Body, maxKeySetBytes)).Decode(out)
	}
	jwksURL := c.JWKSURL
	if jwksURL == "" {
		var doc struct {
			JWKSURI string `json:"jwks_uri"`
		}
		if err := get(strings.TrimSuffix(c.OIDCDiscoveryURL, "/")+"/.well-known/openid-configuration", &doc); err != nil {
			return nil, fmt.Errorf("OIDC discovery: %w", err)
		}
		if doc.JWKSURI == "" {
			return nil, errors.New("OIDC discovery: no jwks_uri")
		}
		jwksURL = doc.JWKSURI
	}
	var set jose.JSONWebKeySet
	if err := get(jwksURL, &set); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	var keys []crypto.PublicKey
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		if pub := k.Public(); pub.Key != nil {
			keys = append(keys, pub.Key)
		}
	}
	return keys, nil
}

// aclLogin exchanges a JWT for a new ACL token, as Nomad's ACL.Login.
func (s *Server) aclLogin(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.aclOn(); err != nil {
		return nil, err
	}
	var req loginRequest
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if req.LoginToken == "" {
		return nil, Errorf(http.StatusBadRequest, "LoginToken: missing login token")
	}
	snap := s.backend.State().Snapshot()
	m, err := s.loginMethod(snap, req.AuthMethodName)
	if err != nil {
		return nil, err
	}
	keys, cached, err := s.loginKeys(r.Context(), m.Config, false)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, "auth-method %q: cannot get the keys that verify its tokens: %s", m.Name, err)
	}
	now := s.now().UTC()
	verified, err := acl.VerifyJWT(req.LoginToken, keys, m.Config, now)
	if err != nil && cached {
		// The provider may have rotated its keys since they were fetched.
		if keys, _, err = s.loginKeys(r.Context(), m.Config, true); err != nil {
			return nil, Errorf(http.StatusBadRequest, "auth-method %q: cannot get the keys that verify its tokens: %s", m.Name, err)
		}
		verified, err = acl.VerifyJWT(req.LoginToken, keys, m.Config, now)
	}
	if err != nil {
		return nil, Errorf(http.StatusForbidden, "%s", err)
	}
	claims, err := acl.MapClaims(verified, m.Config)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, "%s", err)
	}
	rules, err := snap.ACLBindingRulesByAuthMethod(m.Name)
	if err != nil {
		return nil, err
	}
	bound, err := acl.Bind(rules, claims, func(name string) (bool, error) {
		role, err := snap.ACLRoleByName(name)
		return role != nil, err
	})
	switch {
	case errors.Is(err, acl.ErrNoBindings):
		return nil, Errorf(http.StatusForbidden, "%s", err)
	case err != nil:
		return nil, Errorf(http.StatusBadRequest, "%s", err)
	}
	vars := claims.Vars()
	vars["auth_method_type"], vars["auth_method_name"] = m.Type, m.Name
	name, err := acl.Interpolate(m.TokenNameFormat, vars)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, "TokenNameFormat: %s", err)
	}
	if len(name) > maxTokenNameLen {
		name = name[:maxTokenNameLen]
	}
	tok := &structs.ACLToken{
		Name: name, Type: structs.ACLTokenTypeClient, Policies: bound.Policies,
		Global: m.TokenLocality == structs.ACLAuthMethodTokenLocalityGlobal, ExpirationTTL: m.MaxTokenTTL,
	}
	for _, role := range bound.Roles {
		tok.Roles = append(tok.Roles, &structs.ACLTokenRoleLink{Name: role})
	}
	if bound.Management {
		tok.Type, tok.Policies, tok.Roles = structs.ACLTokenTypeManagement, nil, nil
	}
	return s.createToken(w, r, tok, structs.GenerateUUID(), structs.GenerateUUID())
}

// loginMethod returns the JWT method a login names, or the default JWT
// method when it names none.
func (s *Server) loginMethod(snap *state.Snapshot, name string) (*structs.ACLAuthMethod, error) {
	var m *structs.ACLAuthMethod
	if name == "" {
		ms, err := snap.ACLAuthMethods()
		if err != nil {
			return nil, err
		}
		for _, c := range ms {
			if c.Default && c.Type == structs.ACLAuthMethodTypeJWT {
				m = c
			}
		}
		if m == nil {
			return nil, Errorf(http.StatusBadRequest, "AuthMethodName: missing auth method name, and there is no default JWT auth method")
		}
	} else {
		var err error
		if m, err = snap.ACLAuthMethodByName(name); err != nil {
			return nil, err
		}
		if m == nil {
			return nil, Errorf(http.StatusNotFound, "auth-method %q not found", name)
		}
	}
	if m.Type != structs.ACLAuthMethodTypeJWT {
		return nil, Errorf(http.StatusBadRequest, "auth-method %q is of type %s: %s", m.Name, m.Type, errOIDCUnsupported)
	}
	return m, nil
}
