package keyring

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/droverhq/drover/structs"
)

// A workload identity is a JWT (HS256) that the servers sign for one task
// of one allocation, with a key derived from a root key of the keyring
// (HMAC-SHA256 of the root key over identityLabel, so that the key that
// seals variables is never used as is to sign); its header names the root
// key ("kid"), so that identities signed before a rotation stay valid
// while the old key is kept. The claims are Nomad's names.

// identityLabel separates the signing key from the sealing key.
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

// SignIdentity returns the identity of c signed with key, issued at now.
func SignIdentity(key *structs.RootKey, c IdentityClaims, now time.Time) (string, error) {
	if key == nil || len(key.Key) != KeySize {
		return "", ErrNoKey
	}
	c.Subject = fmt.Sprintf("%s:%s:%s:%s", c.Namespace, c.JobID, c.Group, c.Task)
	c.Audience = jwt.ClaimStrings{IdentityAudience}
	c.IssuedAt = jwt.NewNumericDate(now)
	c.NotBefore = jwt.NewNumericDate(now)
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	t.Header["kid"] = key.KeyID
	return t.SignedString(signingKey(key))
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
	_, err := jwt.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		key, err := lookup(kid)
		if err != nil {
			return nil, err
		}
		if key == nil {
			return nil, fmt.Errorf("%w %q", ErrNoKey, kid)
		}
		return signingKey(key), nil
	}, jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithAudience(IdentityAudience),
		jwt.WithTimeFunc(func() time.Time { return now }), jwt.WithLeeway(time.Minute))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrIdentity, err)
	}
	if c.Namespace == "" || c.JobID == "" || c.AllocationID == "" || c.Task == "" {
		return nil, fmt.Errorf("%w: missing claims", ErrIdentity)
	}
	return &c, nil
}
