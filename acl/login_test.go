package acl

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/droverhq/drover/structs"
)

func testKey(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return k, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func sign(t *testing.T, k *rsa.PrivateKey, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A JWT verifies against the method's keys, audiences, issuers and times
// (with the leeways); anything else is ErrLoginToken.
func TestVerifyJWT(t *testing.T) {
	k, pub := testKey(t)
	other, _ := testKey(t)
	keys, err := ParsePublicKeys([]string{pub})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	cfg := &structs.ACLAuthMethodConfig{BoundAudiences: []string{"drover"}, BoundIssuer: []string{"https://idp"}}
	good := jwt.MapClaims{"aud": "drover", "iss": "https://idp", "exp": now.Add(time.Hour).Unix(), "sub": "alice"}
	claims, err := VerifyJWT(sign(t, k, good), keys, cfg, now)
	if err != nil || claims["sub"] != "alice" {
		t.Fatalf("a good token: %v %v", claims, err)
	}
	for name, tc := range map[string]struct {
		key    *rsa.PrivateKey
		claims jwt.MapClaims
		want   string
	}{
		"other key":   {other, good, "verification error"},
		"audience":    {k, jwt.MapClaims{"aud": "x", "iss": "https://idp"}, "audience"},
		"issuer":      {k, jwt.MapClaims{"aud": "drover", "iss": "https://evil"}, "issuer"},
		"expired":     {k, jwt.MapClaims{"aud": "drover", "iss": "https://idp", "exp": now.Add(-time.Hour).Unix()}, "expired"},
		"not yet":     {k, jwt.MapClaims{"aud": "drover", "iss": "https://idp", "nbf": now.Add(time.Hour).Unix()}, "not valid yet"},
		"iat future":  {k, jwt.MapClaims{"aud": "drover", "iss": "https://idp", "iat": now.Add(time.Hour).Unix()}, "future"},
		"no audience": {k, jwt.MapClaims{"iss": "https://idp"}, "audience"},
	} {
		_, err := VerifyJWT(sign(t, tc.key, tc.claims), keys, cfg, now)
		if !errors.Is(err, ErrLoginToken) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	// Within the leeway an expired token still passes.
	recent := jwt.MapClaims{"aud": "drover", "iss": "https://idp", "exp": now.Add(-time.Minute).Unix()}
	if _, err := VerifyJWT(sign(t, k, recent), keys, cfg, now); err != nil {
		t.Errorf("expired a minute ago, within the default leeway: %v", err)
	}
	strict := *cfg
	strict.ExpirationLeeway, strict.ClockSkewLeeway = -1, -1
	if _, err := VerifyJWT(sign(t, k, recent), keys, &strict, now); !errors.Is(err, ErrLoginToken) {
		t.Errorf("expired a minute ago without leeway: %v", err)
	}
	// An algorithm the method does not allow is refused.
	hs, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, good).SignedString([]byte("k"))
	if _, err := VerifyJWT(hs, []crypto.PublicKey{[]byte("k")}, cfg, now); !errors.Is(err, ErrLoginToken) {
		t.Errorf("HS256 accepted: %v", err)
	}
	if _, err := ParsePublicKeys([]string{"nope"}); err == nil || !strings.Contains(err.Error(), "JWTValidationPubKeys[0]") {
		t.Errorf("a bad key: %v", err)
	}
}

// Claims are mapped to value.* and list.*; binding rules select over
// them and bind roles (that exist), policies (${value.x} filled in) or
// management.
func TestMapClaimsAndBind(t *testing.T) {
	claims := map[string]any{"sub": "alice", "team": "web", "admin": false, "groups": []any{"eng", "ops"},
		"nested": map[string]any{"env": "prod"}}
	cfg := &structs.ACLAuthMethodConfig{
		ClaimMappings:     map[string]string{"sub": "user", "team": "team", "admin": "admin", "/nested/env": "env", "missing": "gone"},
		ListClaimMappings: map[string]string{"groups": "groups"},
	}
	c, err := MapClaims(claims, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.Value["user"] != "alice" || c.Value["admin"] != "false" || c.Value["env"] != "prod" || len(c.List["groups"]) != 2 {
		t.Fatalf("mapped: %+v", c)
	}
	if _, ok := c.Value["gone"]; ok {
		t.Fatal("a missing claim was mapped")
	}
	if _, err := MapClaims(map[string]any{"sub": []any{"x"}}, cfg); !errors.Is(err, ErrClaims) {
		t.Fatalf("a list mapped as a value: %v", err)
	}
	roles := map[string]bool{"web-readers": true, "ops": true}
	exists := func(n string) (bool, error) { return roles[n], nil }
	rules := []*structs.ACLBindingRule{
		{ID: "1", Selector: `"eng" in list.groups`, BindType: "role", BindName: "${value.team}-readers"},
		{ID: "2", Selector: `value.env == "prod"`, BindType: "policy", BindName: "prod-${value.user}"},
		{ID: "3", Selector: `"sales" in list.groups`, BindType: "management"},
		{ID: "4", BindType: "role", BindName: "no-such-role"},
		{ID: "5", Selector: `value.absent == "x"`, BindType: "policy", BindName: "never"},
	}
	b, err := Bind(rules, c, exists)
	if err != nil {
		t.Fatal(err)
	}
	if b.Management || len(b.Roles) != 1 || b.Roles[0] != "web-readers" || len(b.Policies) != 1 || b.Policies[0] != "prod-alice" {
		t.Fatalf("bindings: %+v", b)
	}
	if _, err := Bind(rules[2:], c, exists); !errors.Is(err, ErrNoBindings) {
		t.Fatalf("nothing bound: %v", err)
	}
	if err := CheckSelector("value.x =="); err == nil {
		t.Fatal("a bad selector compiled")
	}
	if err := CheckTemplate("${value.team}-x"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"${nope}", "${value.x"} {
		if err := CheckTemplate(bad); err == nil {
			t.Errorf("template %q accepted", bad)
		}
	}
	if s, err := Interpolate("${auth_method_type}-${value.user}", map[string]string{"auth_method_type": "JWT", "value.user": "alice"}); err != nil || s != "JWT-alice" {
		t.Fatalf("interpolate: %q %v", s, err)
	}
}
