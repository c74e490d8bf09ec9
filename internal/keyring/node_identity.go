package keyring

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/droverhq/drover/structs"
)

// A node identity is a JWT the servers sign for a client node when it
// registers and again when it renews it, with the same keys as workload
// identities (RS256 with the active root key's RSA key, the key named in
// the header's "kid", verifiable through GET /.well-known/jwks.json). A
// client introduction token is a JWT the servers sign for an operator to
// hand to a new client, which presents it when it first registers. Both
// carry Nomad's claims: a node identity's subject is
// "node:<region>:<pool>:<node ID>:default", an introduction's
// "node-introduction:<region>:<pool>:<node name>:default", their audience
// Nomad's "nomadproject.io".

// NodeIdentityAudience is the audience of node identities and client
// introduction tokens, Nomad's.
const NodeIdentityAudience = "nomadproject.io"

// Subject prefixes of node identities and introduction tokens.
const (
	nodeSubjectPrefix  = "node:"
	introSubjectPrefix = "node-introduction:"
)

// ErrNodeIdentity: a token that is not a valid node identity; ErrIntroToken:
// one that is not a valid client introduction token.
var (
	ErrNodeIdentity = errors.New("invalid node identity")
	ErrIntroToken   = errors.New("invalid client introduction token")
)

// NodeIdentityClaims are what a node identity says: Nomad's claims.
type NodeIdentityClaims struct {
	NodeID         string `json:"nomad_node_id,omitempty"`
	NodePool       string `json:"nomad_node_pool,omitempty"`
	NodeClass      string `json:"nomad_node_class,omitempty"`
	NodeDatacenter string `json:"nomad_node_datacenter,omitempty"`
	// Audience is written as one string, as Nomad's ("aud":
	// "nomadproject.io"); it shadows RegisteredClaims' list.
	Audience Audience `json:"aud,omitempty"`
	jwt.RegisteredClaims
}

// GetAudience implements jwt.Claims.
func (c NodeIdentityClaims) GetAudience() (jwt.ClaimStrings, error) { return c.Audience.strings(), nil }

// IntroductionClaims are what a client introduction token says: the pool
// the new node may join and, when the operator named one, its name.
type IntroductionClaims struct {
	NodePool string   `json:"nomad_node_pool"`
	NodeName string   `json:"nomad_node_name"`
	Audience Audience `json:"aud,omitempty"`
	jwt.RegisteredClaims
}

// GetAudience implements jwt.Claims.
func (c IntroductionClaims) GetAudience() (jwt.ClaimStrings, error) { return c.Audience.strings(), nil }

// Audience is a JWT's audience of one, written as a string; a list is
// read too (its first element).
type Audience string

func (a Audience) strings() jwt.ClaimStrings {
	if a == "" {
		return nil
	}
	return jwt.ClaimStrings{string(a)}
}

// UnmarshalJSON reads a string or a list of strings.
func (a *Audience) UnmarshalJSON(data []byte) error {
	var cs jwt.ClaimStrings
	if err := cs.UnmarshalJSON(data); err != nil {
		return err
	}
	*a = ""
	if len(cs) > 0 {
		*a = Audience(cs[0])
	}
	return nil
}

// NewNodeIdentityClaims returns the claims of node's identity in region,
// issued at now with the ID jti, expiring ttl later (never when ttl <= 0).
func NewNodeIdentityClaims(node *structs.Node, region, jti string, now time.Time, ttl time.Duration) NodeIdentityClaims {
	return NodeIdentityClaims{
		NodeID: node.ID, NodePool: node.NodePool, NodeClass: node.NodeClass, NodeDatacenter: node.Datacenter,
		Audience:         NodeIdentityAudience,
		RegisteredClaims: registered(strings.Join([]string{"node", region, node.NodePool, node.ID, "default"}, ":"), jti, now, ttl),
	}
}

// NewIntroductionClaims returns the claims of an introduction token for a
// node of pool (named name, "" for any) in region.
func NewIntroductionClaims(name, pool, region, jti string, now time.Time, ttl time.Duration) IntroductionClaims {
	return IntroductionClaims{
		NodePool: pool, NodeName: name, Audience: NodeIdentityAudience,
		RegisteredClaims: registered(strings.Join([]string{"node-introduction", region, pool, name, "default"}, ":"), jti, now, ttl),
	}
}

func registered(subject, jti string, now time.Time, ttl time.Duration) jwt.RegisteredClaims {
	now = now.UTC()
	c := jwt.RegisteredClaims{
		ID: jti, Subject: subject,
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now),
	}
	if ttl > 0 {
		c.ExpiresAt = jwt.NewNumericDate(now.Add(ttl))
	}
	return c
}

// SignNodeIdentity signs a node identity with key.
func SignNodeIdentity(key *structs.RootKey, c NodeIdentityClaims) (string, error) {
	return signClaims(key, c)
}

// SignIntroduction signs a client introduction token with key.
func SignIntroduction(key *structs.RootKey, c IntroductionClaims) (string, error) {
	return signClaims(key, c)
}

// signClaims signs c with key: RS256 with its RSA key, HS256 (with the
// identity signing key derived from it) for a key made without one.
func signClaims(key *structs.RootKey, c jwt.Claims) (string, error) {
	if key == nil || len(key.Key) != KeySize {
		return "", ErrNoKey
	}
	rk, err := rsaKey(key)
	if err != nil {
		return "", err
	}
	if rk == nil {
		t := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
		t.Header["kid"] = key.KeyID
		return t.SignedString(signingKey(key))
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	t.Header["kid"] = key.KeyID
	return t.SignedString(rk)
}

// verifyClaims checks token's signature against the root key its header
// names and its audience and times at now, filling c.
func verifyClaims(token string, c jwt.Claims, lookup func(id string) (*structs.RootKey, error), now time.Time) error {
	_, err := jwt.ParseWithClaims(token, c, rootKeyFunc(lookup), validMethods,
		jwt.WithAudience(NodeIdentityAudience), jwt.WithTimeFunc(func() time.Time { return now }),
		jwt.WithLeeway(time.Minute))
	return err
}

// VerifyNodeIdentity checks a node identity and returns its claims.
func VerifyNodeIdentity(token string, lookup func(id string) (*structs.RootKey, error), now time.Time) (*NodeIdentityClaims, error) {
	var c NodeIdentityClaims
	if err := verifyClaims(token, &c, lookup, now); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNodeIdentity, err)
	}
	if c.NodeID == "" || !strings.HasPrefix(c.Subject, nodeSubjectPrefix) {
		return nil, fmt.Errorf("%w: not a node identity", ErrNodeIdentity)
	}
	return &c, nil
}

// VerifyIntroduction checks a client introduction token and returns its
// claims.
func VerifyIntroduction(token string, lookup func(id string) (*structs.RootKey, error), now time.Time) (*IntroductionClaims, error) {
	var c IntroductionClaims
	if err := verifyClaims(token, &c, lookup, now); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrIntroToken, err)
	}
	if c.NodePool == "" || !strings.HasPrefix(c.Subject, introSubjectPrefix) {
		return nil, fmt.Errorf("%w: not a client introduction token", ErrIntroToken)
	}
	return &c, nil
}

// Admits reports whether an introduction token admits node: the node is
// in the token's pool and, when the token names a node, has its name.
func (c *IntroductionClaims) Admits(node *structs.Node) error {
	pool := node.NodePool
	if pool == "" {
		pool = structs.NodePoolDefault
	}
	switch {
	case c.NodePool != pool:
		return fmt.Errorf("%w: it is for node pool %q, not %q", ErrIntroToken, c.NodePool, pool)
	case c.NodeName != "" && c.NodeName != node.Name:
		return fmt.Errorf("%w: it is for node %q, not %q", ErrIntroToken, c.NodeName, node.Name)
	}
	return nil
}

// RenewAt is when a client renews an identity issued at iat that expires
// at exp: once two thirds of its life have passed, as Nomad's (which
// renews within a third of the TTL of expiry). The zero time for an
// identity that never expires.
func RenewAt(iat, exp time.Time) time.Time {
	if exp.IsZero() {
		return time.Time{}
	}
	if !exp.After(iat) {
		return iat
	}
	return iat.Add(exp.Sub(iat) * 2 / 3)
}
