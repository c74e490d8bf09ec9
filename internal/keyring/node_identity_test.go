package keyring

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

func testNodeKey(t *testing.T) (*structs.RootKey, func(string) (*structs.RootKey, error)) {
	t.Helper()
	k, err := NewRootKey("key-1", time.Unix(1000, 0), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k, func(id string) (*structs.RootKey, error) {
		if id == k.KeyID {
			return k, nil
		}
		return nil, nil
	}
}

func claimsOf(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNodeIdentity_ClaimsAndTTL(t *testing.T) {
	key, lookup := testNodeKey(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	node := &structs.Node{ID: "n1", Name: "one", Datacenter: "dc1", NodePool: "default"}
	tok, err := SignNodeIdentity(key, NewNodeIdentityClaims(node, "global", "jti-1", now, 24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	m := claimsOf(t, tok)
	// Nomad's nine claims of a node without a class.
	for _, k := range []string{"nomad_node_id", "nomad_node_pool", "nomad_node_datacenter", "jti", "iat", "nbf", "aud", "exp", "sub"} {
		if _, ok := m[k]; !ok {
			t.Errorf("claim %s missing: %v", k, m)
		}
	}
	if len(m) != 9 {
		t.Errorf("claims = %v, want 9", m)
	}
	if m["sub"] != "node:global:default:n1:default" {
		t.Errorf("sub = %v", m["sub"])
	}
	if m["aud"] != NodeIdentityAudience {
		t.Errorf("aud = %#v, want Nomad's single string", m["aud"])
	}
	// Another audience is refused.
	other := NewNodeIdentityClaims(node, "global", "jti-x", now, time.Hour)
	other.Audience = "elsewhere"
	if tok, err := SignNodeIdentity(key, other); err != nil {
		t.Fatal(err)
	} else if _, err := VerifyNodeIdentity(tok, lookup, now); !errors.Is(err, ErrNodeIdentity) {
		t.Errorf("another audience: err = %v", err)
	}
	c, err := VerifyNodeIdentity(tok, lookup, now.Add(23*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if c.NodeID != "n1" || !c.ExpiresAt.Time.Equal(now.Add(24*time.Hour)) {
		t.Errorf("claims = %+v", c)
	}
	if _, err := VerifyNodeIdentity(tok, lookup, now.Add(25*time.Hour)); !errors.Is(err, ErrNodeIdentity) {
		t.Errorf("expired identity: err = %v", err)
	}
	// An introduction token is not a node identity, nor the other way.
	intro, err := SignIntroduction(key, NewIntroductionClaims("", "default", "global", "jti-2", now, 5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyNodeIdentity(intro, lookup, now); !errors.Is(err, ErrNodeIdentity) {
		t.Errorf("intro as identity: err = %v", err)
	}
	if _, err := VerifyIntroduction(tok, lookup, now); !errors.Is(err, ErrIntroToken) {
		t.Errorf("identity as intro: err = %v", err)
	}
	// A workload identity is neither.
	wi, err := SignIdentity(key, IdentityClaims{Namespace: "node", JobID: "j", Group: "g", Task: "t", AllocationID: "a"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyNodeIdentity(wi, lookup, now); err == nil {
		t.Error("a workload identity verified as a node identity")
	}
}

func TestIntroduction_Admits(t *testing.T) {
	key, lookup := testNodeKey(t)
	now := time.Unix(5000, 0)
	tok, err := SignIntroduction(key, NewIntroductionClaims("web-1", "default", "global", "j", now, 5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	c, err := VerifyIntroduction(tok, lookup, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject != "node-introduction:global:default:web-1:default" {
		t.Errorf("sub = %q", c.Subject)
	}
	if err := c.Admits(&structs.Node{Name: "web-1"}); err != nil {
		t.Errorf("same name, default pool: %v", err)
	}
	if err := c.Admits(&structs.Node{Name: "web-2", NodePool: "default"}); err == nil {
		t.Error("another name admitted")
	}
	if err := c.Admits(&structs.Node{Name: "web-1", NodePool: "gpu"}); err == nil {
		t.Error("another pool admitted")
	}
	if _, err := VerifyIntroduction(tok, lookup, now.Add(10*time.Minute)); !errors.Is(err, ErrIntroToken) {
		t.Errorf("expired: err = %v", err)
	}
	if _, err := VerifyIntroduction("eyJ.garbage.x", lookup, now); !errors.Is(err, ErrIntroToken) {
		t.Errorf("garbage: err = %v", err)
	}
}

func TestRenewAt(t *testing.T) {
	iat := time.Unix(0, 0)
	if got := RenewAt(iat, iat.Add(24*time.Hour)); !got.Equal(iat.Add(16 * time.Hour)) {
		t.Errorf("RenewAt = %v", got)
	}
	if got := RenewAt(iat, time.Time{}); !got.IsZero() {
		t.Errorf("no expiry: %v", got)
	}
	if got := RenewAt(iat, iat.Add(-time.Hour)); !got.Equal(iat) {
		t.Errorf("expiry before issue: %v", got)
	}
}
