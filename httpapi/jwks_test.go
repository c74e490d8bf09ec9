package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/droverhq/drover/internal/keyring"
)

// The keyring's public keys are published, without a token, at
// /.well-known/jwks.json: one per root key, a rotation adding the new
// one; an identity the active key signs verifies with the published set
// alone; the discovery document points at the set.
func TestJWKSPublishesTheKeyringsPublicKeys(t *testing.T) {
	b, srv := newTestAPI(t)
	jwks := func() jose.JSONWebKeySet {
		t.Helper()
		code, body, h := do(t, "GET", srv.URL+"/.well-known/jwks.json", "")
		var set jose.JSONWebKeySet
		if err := json.Unmarshal([]byte(body), &set); code != 200 || err != nil {
			t.Fatalf("jwks: %d %s %v", code, body, err)
		}
		if strings.Contains(body, `"d"`) || h.Get("Cache-Control") == "" {
			t.Fatalf("jwks: %s %v", body, h)
		}
		return set
	}
	if set := jwks(); len(set.Keys) != 0 {
		t.Fatalf("keys before the keyring has one: %+v", set)
	}
	do(t, "PUT", srv.URL+"/v1/var/app", `{"Items":{"k":"1"}}`) // makes the first key
	first := jwks()
	if len(first.Keys) != 1 || first.Keys[0].Algorithm != "RS256" {
		t.Fatalf("after the first key: %+v", first)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/operator/keyring/rotate", ""); code != 200 {
		t.Fatalf("rotate: %d %s", code, body)
	}
	set := jwks()
	if len(set.Keys) != 2 {
		t.Fatalf("after a rotation: %+v", set)
	}
	active, err := b.State().Snapshot().ActiveRootKey()
	if err != nil || active == nil {
		t.Fatal(err)
	}
	tok, err := keyring.SignIdentity(active, keyring.IdentityClaims{Namespace: "default", JobID: "web", Group: "g", Task: "t", AllocationID: "a"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	sig, err := jose.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	found := set.Key(sig.Signatures[0].Header.KeyID)
	if len(found) != 1 || found[0].KeyID != active.KeyID {
		t.Fatalf("the active key %s in the set: %+v", active.KeyID, found)
	}
	if _, err := sig.Verify(found[0]); err != nil {
		t.Fatalf("verify with the published key: %v", err)
	}

	code, body, _ := do(t, "GET", srv.URL+"/.well-known/openid-configuration", "")
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); code != 200 || err != nil {
		t.Fatalf("discovery: %d %s", code, body)
	}
	iss, _ := doc["issuer"].(string)
	if !strings.HasPrefix(iss, "http://") || doc["jwks_uri"] != iss+"/.well-known/jwks.json" ||
		!strings.Contains(body, `"id_token_signing_alg_values_supported":["RS256"]`) {
		t.Fatalf("discovery: %s", body)
	}
}

// A rotation answers the new key as Nomad does, with its indexes zero
// and the write's index in X-Nomad-Index, so that a list blocking on
// the answer's CreateIndex (as Nomad's API tests do) does not wait.
func TestKeyringRotateAnswersTheKeyAsMade(t *testing.T) {
	_, srv := newTestAPI(t)
	code, body, h := do(t, "PUT", srv.URL+"/v1/operator/keyring/rotate", "")
	var rot struct{ Key map[string]any }
	if err := json.Unmarshal([]byte(body), &rot); code != 200 || err != nil {
		t.Fatalf("rotate: %d %s", code, body)
	}
	if rot.Key["CreateIndex"] != float64(0) || rot.Key["State"] != "active" || h.Get("X-Nomad-Index") == "" || h.Get("X-Nomad-Index") == "0" {
		t.Fatalf("rotate: %s %v", body, h)
	}
	start := time.Now()
	if code, body, _ := do(t, "GET", srv.URL+"/v1/operator/keyring/keys?index=0&wait=10s", ""); code != 200 || time.Since(start) > 5*time.Second {
		t.Fatalf("list: %d %s after %s", code, body, time.Since(start))
	}
}
