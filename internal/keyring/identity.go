package keyring

import (
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/droverhq/drover/structs"
)

// A workload identity is a JWT that the servers sign for one task of one
// allocation with the RSA key of the keyring's active root key (RS256, as
// Nomad's); its header names the root key ("kid"), so that identities
// signed before a rotation stay valid while the old key is kept, and the
// keys' public halves are published (PublicKeys, GET
// /.well-known/jwks.json) so that anything outside drover can verify
// them. A root key made before root keys had an RSA key signs HS256 with
// a key derived from its material (HMAC-SHA256 of the root key over
// identityLabel, so that the key that seals variables is never used as is
// to sign): those identities only the servers can verify. The claims are
// Nomad's names.

// identityLabel separates the HS256 signing key from the sealing key.
const identityLabel = "drover workload identity v1"

// IdentityAudience is the identities' audience, Nomad's.
const IdentityAudience = "nomad.io"

// ErrIdentity: a token that is not a valid workload identity.
var ErrIdentity = errors.New("invalid workload identity")

// IdentityClaims are what a workload identity says.
type IdentityClaims struct {
	Namespace    string `json:"nomad_namespace"`
	JobID        string `json:"nomad_job_id"`
	Group        string `json:"nomad_task_group"`
	Task         string `json:"nomad_task"`
	AllocationID string `json:"nomad_allocation_id"`
	jwt.RegisteredClaims
}

func signingKey(key *structs.RootKey) []byte {
	m := hmac.New(sha256.New, key.Key)
	m.Write([]byte(identityLabel))
	return m.Sum(nil)
}

// rsaKeys caches the parsed RSA keys of the keyring, by their DER form
// (a key's material never changes; parsing checks and precomputes).
var rsaKeys struct {
	sync.Mutex
	m map[string]*rsa.PrivateKey
}

// rsaKey returns key's parsed RSA key, nil for a key that has none.
func rsaKey(key *structs.RootKey) (*rsa.PrivateKey, error) {
	if len(key.RSAKey) == 0 {
		return nil, nil
	}
	rsaKeys.Lock()
	defer rsaKeys.Unlock()
	if k, ok := rsaKeys.m[string(key.RSAKey)]; ok {
		return k, nil
	}
	k, err := x509.ParsePKCS1PrivateKey(key.RSAKey)
	if err != nil {
		return nil, fmt.Errorf("keyring: root key %s: signing key: %w", key.KeyID, err)
	}
	if rsaKeys.m == nil || len(rsaKeys.m) >= 64 {
		rsaKeys.m = map[string]*rsa.PrivateKey{}
	}
	rsaKeys.m[string(key.RSAKey)] = k
	return k, nil
}

// SignIdentity returns the identity of c signed with key, issued at now:
// RS256 with the key's RSA key, HS256 for a key made without one.
func SignIdentity(key *structs.RootKey, c IdentityClaims, now time.Time) (string, error) {
	if key == nil || len(key.Key) != KeySize {
		return "", ErrNoKey
	}
	c.Subject = fmt.Sprintf("%s:%s:%s:%s", c.Namespace, c.JobID, c.Group, c.Task)
	c.Audience = jwt.ClaimStrings{IdentityAudience}
	c.IssuedAt = jwt.NewNumericDate(now)
	c.NotBefore = jwt.NewNumericDate(now)
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

// LooksLikeIdentity reports whether a presented token has a JWT's shape,
// so that resolving it as an ACL token's secret can be skipped.
func LooksLikeIdentity(token string) bool {
	dots := 0
	for i := 0; i < len(token); i++ {
		if token[i] == '.' {
			dots++
		}
	}
	return dots == 2 && len(token) > 3 && token[:3] == "eyJ"
}

// VerifyIdentity checks a workload identity's signature against the key
// its header names (lookup) and returns its claims. The caller checks
// that the allocation is still there and running.
func VerifyIdentity(token string, lookup func(id string) (*structs.RootKey, error), now time.Time) (*IdentityClaims, error) {
	var c IdentityClaims
	_, err := jwt.ParseWithClaims(token, &c, rootKeyFunc(lookup), validMethods, jwt.WithAudience(IdentityAudience),
		jwt.WithTimeFunc(func() time.Time { return now }), jwt.WithLeeway(time.Minute))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrIdentity, err)
	}
	if c.Namespace == "" || c.JobID == "" || c.AllocationID == "" || c.Task == "" {
		return nil, fmt.Errorf("%w: missing claims", ErrIdentity)
	}
	return &c, nil
}

// JWK is the public half of one root key's RSA key, as a JSON Web Key
// (RFC 7517, 7518): what GET /.well-known/jwks.json lists.
type JWK struct {
	KeyType   string `json:"kty"`
	Use       string `json:"use"`
	Algorithm string `json:"alg"`
	KeyID     string `json:"kid"`
	N         string `json:"n"`
	E         string `json:"e"`
}

// JWKS is a JSON Web Key Set.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// PublicKeys returns the public keys that verify the identities keys
// sign, active and inactive ones, in keys' order. A key without an RSA
// key (made before they had one) has no public key and is left out.
func PublicKeys(keys []*structs.RootKey) (JWKS, error) {
	out := JWKS{Keys: []JWK{}}
	for _, k := range keys {
		rk, err := rsaKey(k)
		if err != nil {
			return out, err
		}
		if rk == nil {
			continue
		}
		out.Keys = append(out.Keys, JWK{
			KeyType: "RSA", Use: "sig", Algorithm: jwt.SigningMethodRS256.Alg(), KeyID: k.KeyID,
			N: base64.RawURLEncoding.EncodeToString(rk.N.Bytes()),
			E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(rk.E)).Bytes()),
		})
	}
	return out, nil
}

// validMethods are the algorithms root keys sign with.
var validMethods = jwt.WithValidMethods([]string{jwt.SigningMethodRS256.Alg(), jwt.SigningMethodHS256.Alg()})

// rootKeyFunc finds the root key a token's header names (lookup) and
// answers its verifying key. Each root key verifies the one algorithm it
// signs with, so that no token can pass an HS256 signature off as a key's
// that signs RS256 (or the other way round).
func rootKeyFunc(lookup func(id string) (*structs.RootKey, error)) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		key, err := lookup(kid)
		if err != nil {
			return nil, err
		}
		if key == nil {
			return nil, fmt.Errorf("%w %q", ErrNoKey, kid)
		}
		rk, err := rsaKey(key)
		if err != nil {
			return nil, err
		}
		switch {
		case rk != nil && t.Method == jwt.SigningMethodRS256:
			return &rk.PublicKey, nil
		case rk == nil && t.Method == jwt.SigningMethodHS256:
			return signingKey(key), nil
		}
		return nil, fmt.Errorf("root key %s does not sign %s", kid, t.Method.Alg())
	}
}
