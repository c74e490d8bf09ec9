package structs

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"time"
)

// ACL token types, as Nomad's.
const (
	ACLTokenTypeClient     = "client"
	ACLTokenTypeManagement = "management"
)

// AnonymousPolicy is the name of the policy that applies to requests
// without a token, as Nomad's.
const AnonymousPolicy = "anonymous"

// ACLPolicy is a named set of rules in Nomad's HCL policy language (see
// package acl), in Nomad's shape (api.ACLPolicy). JobACL (a policy
// attached to a job's workload identity) is accepted and kept but grants
// nothing: drover has no workload identities.
type ACLPolicy struct {
	Name        string
	Description string
	Rules       string
	JobACL      *JobACL `json:",omitempty"`

	CreateIndex uint64
	ModifyIndex uint64
}

// JobACL is Nomad's attachment of a policy to a job, group or task.
type JobACL struct {
	Namespace string
	JobID     string
	Group     string
	Task      string
}

// ACLPolicyListStub is a policy in a list (api.ACLPolicyListStub).
type ACLPolicyListStub struct {
	Name        string
	Description string
	JobACL      *JobACL
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the policy's list stub.
func (p *ACLPolicy) Stub() *ACLPolicyListStub {
	return &ACLPolicyListStub{Name: p.Name, Description: p.Description, JobACL: p.JobACL,
		CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
}

// ACLToken is a token in Nomad's shape (api.ACLToken). The state keeps
// SecretHash, to find a token by its secret, and the secret sealed under
// the keyring (Sealed), never SecretID in the clear: SecretID is set in
// the answer to the request that created the token, to the token itself
// (self) and to a management token, as Nomad's. SecretHash and Sealed
// are not part of the JSON shape.
type ACLToken struct {
	AccessorID string
	SecretID   string
	Name       string
	Type       string
	Policies   []string
	// Roles links ACL roles: the token is granted their policies as they
	// are when it is used. The state fills in each link's ID and Name.
	Roles []*ACLTokenRoleLink
	// Global is accepted and kept: drover has one region, where every
	// token is global.
	Global     bool
	CreateTime time.Time
	// ExpirationTime, when set, is when the token stops working.
	ExpirationTime *time.Time `json:",omitempty"`
	// ExpirationTTL, given at creation, sets ExpirationTime to
	// CreateTime+ExpirationTTL.
	ExpirationTTL time.Duration `json:",omitempty"`

	// SecretHash is HashSecret(SecretID), the only form of the secret the
	// state holds.
	SecretHash string `json:"-" codec:"SecretHash"`
	// Sealed is the SecretID sealed under the keyring, so that a
	// management token can read it again (as Nomad's); nil for a token
	// made before secrets were sealed. Not part of the JSON shape.
	Sealed *SealedSecret `json:"-" codec:"Sealed"`

	CreateIndex uint64
	ModifyIndex uint64
}

// ACLTokenRoleLink links a token to a role, by ID or by name.
type ACLTokenRoleLink struct {
	ID   string
	Name string
}

// ACLTokenListStub is a token in a list (api.ACLTokenListStub): no secret.
type ACLTokenListStub struct {
	AccessorID     string
	Name           string
	Type           string
	Policies       []string
	Roles          []*ACLTokenRoleLink
	Global         bool
	CreateTime     time.Time
	ExpirationTime *time.Time `json:",omitempty"`
	CreateIndex    uint64
	ModifyIndex    uint64
}

// Stub returns the token's list stub.
func (t *ACLToken) Stub() *ACLTokenListStub {
	return &ACLTokenListStub{AccessorID: t.AccessorID, Name: t.Name, Type: t.Type, Policies: t.Policies,
		Roles: t.Roles, Global: t.Global, CreateTime: t.CreateTime, ExpirationTime: t.ExpirationTime,
		CreateIndex: t.CreateIndex, ModifyIndex: t.ModifyIndex}
}

// Management reports whether the token is a management token.
func (t *ACLToken) Management() bool { return t != nil && t.Type == ACLTokenTypeManagement }

// Expired reports whether the token has expired at now.
func (t *ACLToken) Expired(now time.Time) bool {
	return t != nil && t.ExpirationTime != nil && !now.Before(*t.ExpirationTime)
}

// Copy returns a copy that shares nothing mutable with t.
func (t *ACLToken) Copy() *ACLToken {
	if t == nil {
		return nil
	}
	c := *t
	c.Policies = append([]string(nil), t.Policies...)
	c.Roles = nil
	for _, r := range t.Roles {
		if r != nil {
			l := *r
			c.Roles = append(c.Roles, &l)
		}
	}
	if t.ExpirationTime != nil {
		e := *t.ExpirationTime
		c.ExpirationTime = &e
	}
	return &c
}

// Public returns a copy without the secret's hash and with secretID as
// its SecretID ("" everywhere but the answer that creates the token).
func (t *ACLToken) Public(secretID string) *ACLToken {
	c := t.Copy()
	c.SecretHash, c.Sealed = "", nil
	c.SecretID = secretID
	return c
}

type aclTokenAlias ACLToken

var durationType = reflect.TypeOf(time.Duration(0))

// MarshalJSON writes ExpirationTTL as a duration string, as Nomad's.
func (t *ACLToken) MarshalJSON() ([]byte, error) {
	out := struct {
		ExpirationTTL string `json:",omitempty"`
		*aclTokenAlias
	}{aclTokenAlias: (*aclTokenAlias)(t)}
	if t.ExpirationTTL != 0 {
		out.ExpirationTTL = t.ExpirationTTL.String()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads ExpirationTTL as a duration string ("1h") or a
// number of nanoseconds, as Nomad's.
func (t *ACLToken) UnmarshalJSON(b []byte) error {
	aux := struct {
		ExpirationTTL any
		*aclTokenAlias
	}{aclTokenAlias: (*aclTokenAlias)(t)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	switch v := aux.ExpirationTTL.(type) {
	case string:
		if v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return &json.UnmarshalTypeError{Value: "string " + v, Type: durationType, Field: "ExpirationTTL"}
			}
			t.ExpirationTTL = d
		}
	case float64:
		t.ExpirationTTL = time.Duration(v)
	case nil:
	default:
		return &json.UnmarshalTypeError{Value: "ExpirationTTL", Type: durationType, Field: "ExpirationTTL"}
	}
	return nil
}

// HashSecret returns the form of a secret (an ACL token's SecretID, a
// node's secret) that the state keeps: its SHA-256, hex-encoded. Secrets
// are random 128-bit UUIDs, not passwords, so a fast hash is enough: no
// dictionary narrows the search, and 2^122 guesses stay out of reach
// however fast each one is.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// SecretMatches reports, in constant time, whether secret hashes to hash.
func SecretMatches(secret, hash string) bool {
	if hash == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(HashSecret(secret)), []byte(hash)) == 1
}

// ACLPolicyUpsertRequest creates or replaces policies (their rules are
// checked before the request is written).
type ACLPolicyUpsertRequest struct {
	Policies []*ACLPolicy
}

// ACLPolicyDeleteRequest deletes policies by name.
type ACLPolicyDeleteRequest struct {
	Names []string
}

// ACLTokenUpsertRequest creates or replaces tokens. Each token carries
// its SecretHash and no SecretID; the leader stamps AccessorID,
// SecretHash and CreateTime of new tokens.
type ACLTokenUpsertRequest struct {
	Tokens []*ACLToken
}

// ACLTokenDeleteRequest deletes tokens by AccessorID.
type ACLTokenDeleteRequest struct {
	AccessorIDs []string
}

// ACLTokenBootstrapRequest writes the first management token, once: the
// state refuses it when the cluster was bootstrapped already, unless
// ResetIndex is the index of that bootstrap (Nomad's reset).
type ACLTokenBootstrapRequest struct {
	Token      *ACLToken
	ResetIndex uint64
}

// ACLResolveRequest asks the servers what a token grants (a client agent
// checking a request to its own endpoints).
type ACLResolveRequest struct {
	SecretID string
}

// ACLResolveResponse is what a token grants: whether it is a management
// token, and the rules of its policies (those that exist). Found is false
// for an unknown or expired token, which grants nothing.
type ACLResolveResponse struct {
	Found          bool
	Management     bool
	AccessorID     string
	Policies       []*ACLPolicy
	ExpirationTime *time.Time `json:",omitempty"`
}
