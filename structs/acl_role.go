package structs

import (
	"encoding/json"
	"fmt"
	"time"
)

// ACLRole groups policies under a name, in Nomad's shape (api.ACLRole). A
// token that links a role is granted the role's policies as they are when
// the token is used: a change to the role takes effect at once. A role
// links its policies by name, and may name a policy that does not exist
// (yet); that name grants nothing until a policy of that name exists.
type ACLRole struct {
	ID          string
	Name        string
	Description string
	Policies    []*ACLRolePolicyLink

	CreateIndex uint64
	ModifyIndex uint64
}

// ACLRolePolicyLink links a policy to a role by name.
type ACLRolePolicyLink struct {
	Name string
}

// ACLRoleListStub is a role in a list (api.ACLRoleListStub).
type ACLRoleListStub struct {
	ID          string
	Name        string
	Description string
	Policies    []*ACLRolePolicyLink
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the role's list stub.
func (r *ACLRole) Stub() *ACLRoleListStub {
	return &ACLRoleListStub{ID: r.ID, Name: r.Name, Description: r.Description, Policies: r.Policies,
		CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}
}

// PolicyNames returns the names of the role's policies.
func (r *ACLRole) PolicyNames() []string {
	out := make([]string, 0, len(r.Policies))
	for _, p := range r.Policies {
		if p != nil {
			out = append(out, p.Name)
		}
	}
	return out
}

// Copy returns a copy that shares nothing mutable with r.
func (r *ACLRole) Copy() *ACLRole {
	if r == nil {
		return nil
	}
	c := *r
	c.Policies = nil
	for _, p := range r.Policies {
		if p != nil {
			l := *p
			c.Policies = append(c.Policies, &l)
		}
	}
	return &c
}

// ACL auth method types, token localities and binding rule bind types,
// as Nomad's.
const (
	ACLAuthMethodTypeOIDC            = "OIDC"
	ACLAuthMethodTypeJWT             = "JWT"
	ACLAuthMethodTokenLocalityLocal  = "local"
	ACLAuthMethodTokenLocalityGlobal = "global"
	ACLBindingRuleBindTypeRole       = "role"
	ACLBindingRuleBindTypePolicy     = "policy"
	ACLBindingRuleBindTypeManagement = "management"
	// ACLAuthMethodDefaultTokenNameFormat is the name of a token made by a
	// login when the method does not set TokenNameFormat, as Nomad's.
	ACLAuthMethodDefaultTokenNameFormat = "${auth_method_type}-${auth_method_name}"
	// RedactedSecret stands for a stored secret in every answer.
	RedactedSecret = "redacted"
)

// ACLAuthMethod is a way of logging in with an identity another system
// issued, in Nomad's shape (api.ACLAuthMethod). Its secrets
// (Config.OIDCClientSecret, Config.OIDCClientAssertion.PrivateKey.PemKey)
// are kept sealed under the keyring (Sealed) and answered as "redacted".
type ACLAuthMethod struct {
	Name            string
	Type            string
	TokenLocality   string
	TokenNameFormat string
	MaxTokenTTL     time.Duration
	Default         bool
	Config          *ACLAuthMethodConfig

	CreateTime  time.Time
	ModifyTime  time.Time
	CreateIndex uint64
	ModifyIndex uint64

	// Sealed holds the method's secrets (ACLAuthMethodSecrets as JSON)
	// sealed under the keyring; nil when it has none. Not part of the
	// JSON shape.
	Sealed *SealedSecret `json:"-" codec:"Sealed"`
}

// ACLAuthMethodSecrets are the secrets of a method's configuration, kept
// sealed.
type ACLAuthMethodSecrets struct {
	OIDCClientSecret string `json:",omitempty"`
	PemKey           string `json:",omitempty"`
}

// ACLAuthMethodConfig is an auth method's configuration, Nomad's fields.
type ACLAuthMethodConfig struct {
	JWTValidationPubKeys []string
	JWKSURL              string
	OIDCDiscoveryURL     string
	OIDCClientID         string
	OIDCClientSecret     string
	OIDCClientAssertion  *OIDCClientAssertion `json:",omitempty"`
	OIDCEnablePKCE       bool
	OIDCDisableUserInfo  bool
	OIDCScopes           []string
	BoundAudiences       []string
	BoundIssuer          []string
	AllowedRedirectURIs  []string
	DiscoveryCaPem       []string
	JWKSCACert           string
	SigningAlgs          []string
	ExpirationLeeway     time.Duration
	NotBeforeLeeway      time.Duration
	ClockSkewLeeway      time.Duration
	ClaimMappings        map[string]string
	ListClaimMappings    map[string]string
	VerboseLogging       bool
}

// OIDCClientAssertion is Nomad's private key JWT client assertion of an
// OIDC method; kept, not used (drover has no OIDC browser flow).
type OIDCClientAssertion struct {
	Audience     []string
	KeySource    string
	KeyAlgorithm string
	PrivateKey   *OIDCClientAssertionKey `json:",omitempty"`
	ExtraHeaders map[string]string
}

// OIDCClientAssertionKey is the key material of an OIDCClientAssertion.
type OIDCClientAssertionKey struct {
	PemKey      string
	PemKeyFile  string
	KeyIDHeader string
	KeyID       string
	PemCert     string
	PemCertFile string
}

// ACLAuthMethodListStub is an auth method in a list.
type ACLAuthMethodListStub struct {
	Name        string
	Type        string
	Default     bool
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the method's list stub.
func (m *ACLAuthMethod) Stub() *ACLAuthMethodListStub {
	return &ACLAuthMethodListStub{Name: m.Name, Type: m.Type, Default: m.Default,
		CreateIndex: m.CreateIndex, ModifyIndex: m.ModifyIndex}
}

// Copy returns a deep copy of m (through JSON for the configuration, which
// holds only plain data).
func (m *ACLAuthMethod) Copy() *ACLAuthMethod {
	if m == nil {
		return nil
	}
	c := *m
	if m.Config != nil {
		c.Config = m.Config.Copy()
	}
	if m.Sealed != nil {
		s := *m.Sealed
		s.Nonce = append([]byte(nil), m.Sealed.Nonce...)
		s.Data = append([]byte(nil), m.Sealed.Data...)
		c.Sealed = &s
	}
	return &c
}

// Copy returns a deep copy of c.
func (c *ACLAuthMethodConfig) Copy() *ACLAuthMethodConfig {
	if c == nil {
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("structs: copy auth method config: %v", err)) // plain data: cannot fail
	}
	var out ACLAuthMethodConfig
	if err := json.Unmarshal(b, &out); err != nil {
		panic(fmt.Sprintf("structs: copy auth method config: %v", err))
	}
	return &out
}

// SealedSecret is a secret sealed under a root key of the keyring
// (keyring.SealSecret).
type SealedSecret struct {
	KeyID string
	Nonce []byte
	Data  []byte
}

// durationField writes d as Nomad's duration string ("" for 0).
func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// parseDuration reads a duration given as a string ("1h") or a number of
// nanoseconds, as Nomad's API.
func parseDuration(field string, v any) (time.Duration, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case string:
		if v == "" {
			return 0, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return 0, &json.UnmarshalTypeError{Value: "string " + v, Type: durationType, Field: field}
		}
		return d, nil
	case float64:
		return time.Duration(v), nil
	}
	return 0, &json.UnmarshalTypeError{Value: field, Type: durationType, Field: field}
}

type aclAuthMethodAlias ACLAuthMethod

// MarshalJSON writes MaxTokenTTL as a duration string, as Nomad's.
func (m *ACLAuthMethod) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		MaxTokenTTL string
		*aclAuthMethodAlias
	}{durationString(m.MaxTokenTTL), (*aclAuthMethodAlias)(m)})
}

// UnmarshalJSON reads MaxTokenTTL as a duration string or nanoseconds.
func (m *ACLAuthMethod) UnmarshalJSON(b []byte) error {
	aux := struct {
		MaxTokenTTL any
		*aclAuthMethodAlias
	}{aclAuthMethodAlias: (*aclAuthMethodAlias)(m)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	d, err := parseDuration("MaxTokenTTL", aux.MaxTokenTTL)
	m.MaxTokenTTL = d
	return err
}

type aclAuthMethodConfigAlias ACLAuthMethodConfig

// MarshalJSON writes the leeways as duration strings, as Nomad's.
func (c *ACLAuthMethodConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ExpirationLeeway string
		NotBeforeLeeway  string
		ClockSkewLeeway  string
		*aclAuthMethodConfigAlias
	}{durationString(c.ExpirationLeeway), durationString(c.NotBeforeLeeway), durationString(c.ClockSkewLeeway),
		(*aclAuthMethodConfigAlias)(c)})
}

// UnmarshalJSON reads the leeways as duration strings or nanoseconds.
func (c *ACLAuthMethodConfig) UnmarshalJSON(b []byte) error {
	aux := struct {
		ExpirationLeeway any
		NotBeforeLeeway  any
		ClockSkewLeeway  any
		*aclAuthMethodConfigAlias
	}{aclAuthMethodConfigAlias: (*aclAuthMethodConfigAlias)(c)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	var err error
	if c.ExpirationLeeway, err = parseDuration("ExpirationLeeway", aux.ExpirationLeeway); err != nil {
		return err
	}
	if c.NotBeforeLeeway, err = parseDuration("NotBeforeLeeway", aux.NotBeforeLeeway); err != nil {
		return err
	}
	c.ClockSkewLeeway, err = parseDuration("ClockSkewLeeway", aux.ClockSkewLeeway)
	return err
}

// ACLBindingRule maps the claims of a login to a role, a policy or a
// management token, in Nomad's shape (api.ACLBindingRule).
type ACLBindingRule struct {
	ID          string
	Description string
	AuthMethod  string
	Selector    string
	BindType    string
	BindName    string

	CreateTime  time.Time
	ModifyTime  time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLBindingRuleListStub is a binding rule in a list.
type ACLBindingRuleListStub struct {
	ID          string
	Description string
	AuthMethod  string
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the rule's list stub.
func (b *ACLBindingRule) Stub() *ACLBindingRuleListStub {
	return &ACLBindingRuleListStub{ID: b.ID, Description: b.Description, AuthMethod: b.AuthMethod,
		CreateIndex: b.CreateIndex, ModifyIndex: b.ModifyIndex}
}

// OneTimeToken is Nomad's one-time token: a secret that can be exchanged,
// once and before ExpiresAt, for the secret of the token that asked for
// it. The state keeps its SecretHash, never the OneTimeSecretID.
type OneTimeToken struct {
	OneTimeSecretID string
	AccessorID      string
	ExpiresAt       time.Time
	SecretHash      string `json:"-" codec:"SecretHash"`
	CreateIndex     uint64
	ModifyIndex     uint64
}

// OneTimeTokenTTL is how long a one-time token can be exchanged, as
// Nomad's.
const OneTimeTokenTTL = 10 * time.Minute

// ACLRoleUpsertRequest creates or replaces roles; the leader stamps the
// IDs of new ones.
type ACLRoleUpsertRequest struct {
	Roles []*ACLRole
}

// ACLRoleDeleteRequest deletes roles by ID.
type ACLRoleDeleteRequest struct {
	IDs []string
}

// ACLAuthMethodUpsertRequest creates or replaces auth methods.
type ACLAuthMethodUpsertRequest struct {
	Methods []*ACLAuthMethod
}

// ACLAuthMethodDeleteRequest deletes auth methods by name, and their
// binding rules.
type ACLAuthMethodDeleteRequest struct {
	Names []string
}

// ACLBindingRuleUpsertRequest creates or replaces binding rules.
type ACLBindingRuleUpsertRequest struct {
	Rules []*ACLBindingRule
}

// ACLBindingRuleDeleteRequest deletes binding rules by ID.
type ACLBindingRuleDeleteRequest struct {
	IDs []string
}

// OneTimeTokenUpsertRequest writes a one-time token; the state deletes
// the one-time tokens that expired before Now (stamped by the leader).
type OneTimeTokenUpsertRequest struct {
	Token *OneTimeToken
	Now   time.Time
}

// OneTimeTokenExchangeRequest deletes the one-time token whose secret
// hashes to SecretHash: the exchange uses it up.
type OneTimeTokenExchangeRequest struct {
	SecretHash string
}
