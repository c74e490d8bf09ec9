package keyring

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/droverhq/drover/structs"
)

func key(t *testing.T, id string) *structs.RootKey {
	t.Helper()
	k, err := NewRootKey(id, time.Unix(1, 0), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	k := key(t, "k")
	lookup := func(id string) (*structs.RootKey, error) {
		if id == k.KeyID {
			return k, nil
		}
		return nil, nil
	}
	nonce, _ := NewNonce(rand.Reader)
	v := &structs.Variable{Namespace: "default", Path: "app/db", ModifyIndex: 4, Items: structs.VariableItems{"pw": "s3cret-value"}}
	ve, err := Seal(k, nonce, v)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(ve.Data, []byte("s3cret-value")) || ve.KeyID != "k" {
		t.Fatalf("sealed: %+v", ve)
	}
	got, err := Open(ve, lookup)
	if err != nil || got.Items["pw"] != "s3cret-value" || got.ModifyIndex != 4 {
		t.Fatalf("open: %+v %v", got, err)
	}
	// Moved to another path, the items no longer open.
	moved := ve.Copy()
	moved.Path = "app/other"
	if _, err := Open(moved, lookup); !errors.Is(err, ErrOpen) {
		t.Fatalf("moved: %v", err)
	}
	altered := ve.Copy()
	altered.Data[0] ^= 1
	if _, err := Open(altered, lookup); !errors.Is(err, ErrOpen) {
		t.Fatalf("altered: %v", err)
	}
	other := ve.Copy()
	other.KeyID = "gone"
	if _, err := Open(other, lookup); !errors.Is(err, ErrNoKey) {
		t.Fatalf("unknown key: %v", err)
	}
	// The key's material never shows in its formatting.
	for _, s := range []string{k.String(), k.GoString()} {
		if strings.Contains(s, string(k.Key)) || !strings.Contains(s, "k") {
			t.Fatalf("formatted key: %q", s)
		}
	}
}

func TestIdentity(t *testing.T) {
	k1, k2 := key(t, "k1"), key(t, "k2")
	keys := map[string]*structs.RootKey{"k1": k1}
	lookup := func(id string) (*structs.RootKey, error) { return keys[id], nil }
	now := time.Unix(1000, 0)
	c := IdentityClaims{Namespace: "default", JobID: "web", Group: "g", Task: "t", AllocationID: "a1"}
	tok, err := SignIdentity(k1, c, now)
	if err != nil {
		t.Fatal(err)
	}
	if !LooksLikeIdentity(tok) || LooksLikeIdentity("3f1e2d-secret") {
		t.Fatal("LooksLikeIdentity")
	}
	got, err := VerifyIdentity(tok, lookup, now.Add(time.Hour))
	if err != nil || got.JobID != "web" || got.Group != "g" || got.Task != "t" || got.AllocationID != "a1" {
		t.Fatalf("verify: %+v %v", got, err)
	}
	// Signed by a key the keyring does not hold: refused.
	forged, _ := SignIdentity(k2, c, now)
	if _, err := VerifyIdentity(forged, lookup, now); !errors.Is(err, ErrIdentity) {
		t.Fatalf("forged: %v", err)
	}
	// A changed claim breaks the signature.
	parts := strings.Split(tok, ".")
	parts[1] = parts[1][:len(parts[1])-2] + "AA"
	if _, err := VerifyIdentity(strings.Join(parts, "."), lookup, now); !errors.Is(err, ErrIdentity) {
		t.Fatal("tampered identity accepted")
	}
}

func TestRootKeyJSONLeavesTheMaterialOut(t *testing.T) {
	k := key(t, "k")
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), base64.StdEncoding.EncodeToString(k.Key)) || strings.Contains(string(b), `"Key"`) || !strings.Contains(string(b), `"KeyID":"k"`) {
		t.Fatalf("JSON of a root key: %s", b)
	}
}

// An identity is RS256, and any JWT library verifies it with the JSON
// Web Key Set alone (go-jose here, which parses the set itself); a key
// rotated in publishes a second key, and the old key's identities still
// verify against the set.
func TestIdentityVerifiesWithThePublishedKeys(t *testing.T) {
	k1, k2 := key(t, "k1"), key(t, "k2")
	now := time.Now()
	c := IdentityClaims{Namespace: "default", JobID: "web", Group: "g", Task: "t", AllocationID: "a1"}
	tok1, err := SignIdentity(k1, c, now)
	if err != nil {
		t.Fatal(err)
	}
	tok2, _ := SignIdentity(k2, c, now)
	set, err := PublicKeys([]*structs.RootKey{k1, k2})
	if err != nil || len(set.Keys) != 2 {
		t.Fatalf("public keys: %+v %v", set, err)
	}
	raw, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(`"d"`)) || bytes.Contains(raw, []byte(`"p"`)) {
		t.Fatalf("the set holds private parts: %s", raw)
	}
	var jwks jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &jwks); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{tok1, tok2} {
		sig, err := jose.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256})
		if err != nil {
			t.Fatal(err)
		}
		h := sig.Signatures[0].Header
		if h.Algorithm != "RS256" {
			t.Fatalf("alg %q", h.Algorithm)
		}
		found := jwks.Key(h.KeyID)
		if len(found) != 1 || !found[0].Valid() || !found[0].IsPublic() || found[0].Use != "sig" {
			t.Fatalf("kid %q in the set: %+v", h.KeyID, found)
		}
		payload, err := sig.Verify(found[0])
		if err != nil {
			t.Fatalf("verify with the published key: %v", err)
		}
		var got map[string]any
		_ = json.Unmarshal(payload, &got)
		if got["nomad_job_id"] != "web" || got["aud"] == nil || got["sub"] != "default:web:g:t" {
			t.Fatalf("claims: %v", got)
		}
		// And golang-jwt with the set's key only.
		if _, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return found[0].Key, nil },
			jwt.WithValidMethods([]string{"RS256"}), jwt.WithAudience(IdentityAudience)); err != nil {
			t.Fatalf("golang-jwt: %v", err)
		}
	}
	// The other key's public half does not verify k1's identity.
	sig, _ := jose.ParseSigned(tok1, []jose.SignatureAlgorithm{jose.RS256})
	if _, err := sig.Verify(jwks.Key("k2")[0]); err == nil {
		t.Fatal("k1's identity verified with k2's key")
	}
}

// A root key made before root keys had an RSA key signs HS256, which the
// servers still verify; it publishes nothing. An HS256 token under a key
// that signs RS256 is refused (no algorithm confusion), and so is an
// unsigned one.
func TestIdentityOfAKeyWithoutRSAKey(t *testing.T) {
	old := key(t, "old")
	old.RSAKey = nil
	k := key(t, "new")
	keys := map[string]*structs.RootKey{"old": old, "new": k}
	lookup := func(id string) (*structs.RootKey, error) { return keys[id], nil }
	now := time.Unix(1000, 0)
	c := IdentityClaims{Namespace: "default", JobID: "web", Group: "g", Task: "t", AllocationID: "a1"}
	tok, err := SignIdentity(old, c, now)
	if err != nil {
		t.Fatal(err)
	}
	if h, _, _ := jwt.NewParser().ParseUnverified(tok, &IdentityClaims{}); h == nil || h.Method.Alg() != "HS256" {
		t.Fatalf("old key's identity: %v", h)
	}
	if _, err := VerifyIdentity(tok, lookup, now); err != nil {
		t.Fatalf("old key's identity: %v", err)
	}
	if set, _ := PublicKeys([]*structs.RootKey{old}); len(set.Keys) != 0 {
		t.Fatalf("old key published: %+v", set)
	}
	// HS256 under "new", signed with what the HS256 key of "new" would be.
	forged := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	forged.Header["kid"] = "new"
	s, _ := forged.SignedString(signingKey(k))
	if _, err := VerifyIdentity(s, lookup, now); !errors.Is(err, ErrIdentity) {
		t.Fatalf("HS256 under an RSA key: %v", err)
	}
	none := jwt.NewWithClaims(jwt.SigningMethodNone, c)
	none.Header["kid"] = "new"
	s, _ = none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if _, err := VerifyIdentity(s, lookup, now); !errors.Is(err, ErrIdentity) {
		t.Fatalf("unsigned identity: %v", err)
	}
}
