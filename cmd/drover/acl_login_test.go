package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/droverhq/drover/httpapi"
)

// The role, auth-method, binding-rule and login commands against an API
// with ACLs on: a role of a policy, a JWT auth method with a test key, a
// binding rule from a claim to the role, and a login with a JWT signed
// by the key that gets a token of the role; secrets never printed.
func TestACLRoleAuthMethodLoginCommands(t *testing.T) {
	t.Setenv("DROVER_TOKEN", "")
	t.Setenv("NOMAD_TOKEN", "")
	srv := httptest.NewServer(httpapi.New(httpapi.NewMemBackend(), nil, httpapi.WithACL(httpapi.ACLConfig{Enabled: true})).Handler())
	defer srv.Close()
	cli := func(args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, "", append(args, "-address", srv.URL)...)
	}
	code, out, errOut := cli("acl", "bootstrap")
	m := regexp.MustCompile(`(?m)^Secret ID\s+= ([0-9a-f-]{36})$`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("bootstrap: %d %q %q", code, out, errOut)
	}
	t.Setenv("NOMAD_TOKEN", m[1])
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro.hcl")
	os.WriteFile(ro, []byte(`namespace "default" { policy = "read" }`), 0o644)
	if code, _, errOut := cli("acl", "policy", "apply", "ro", ro); code != 0 {
		t.Fatalf("policy: %q", errOut)
	}
	code, out, errOut = cli("acl", "role", "create", "-name", "readers", "-policy", "ro", "-description", "read only")
	rm := regexp.MustCompile(`(?m)^ID\s+= ([0-9a-f-]{36})$`).FindStringSubmatch(out)
	if code != 0 || rm == nil || !strings.Contains(out, "Policies     = ro") {
		t.Fatalf("role create: %d %q %q", code, out, errOut)
	}
	roleID := rm[1]
	if code, out, _ := cli("acl", "role", "list"); code != 0 || !regexp.MustCompile(roleID+`\s+readers\s+read only\s+ro`).MatchString(out) {
		t.Fatalf("role list: %d %q", code, out)
	}
	if code, out, _ := cli("acl", "role", "info", "-by-name", "readers"); code != 0 || !strings.Contains(out, roleID) {
		t.Fatalf("role info: %d %q", code, out)
	}
	code, out, _ = cli("acl", "token", "create", "-name", "via-role", "-role-name", "readers")
	if code != 0 || !strings.Contains(out, "Roles        = ["+roleID+"/readers]") {
		t.Fatalf("token create -role-name: %d %q", code, out)
	}
	viaRole := regexp.MustCompile(`(?m)^Secret ID\s+= ([0-9a-f-]{36})$`).FindStringSubmatch(out)[1]
	// A token's policies, its role's included.
	if code, out, _ := cli("acl", "policy", "self", "-token", viaRole); code != 0 || !regexp.MustCompile(`(?m)^ro\s*$`).MatchString(out) {
		t.Fatalf("policy self: %d %q", code, out)
	}
	if code, out, _ := cli("acl", "policy", "info", "-token", viaRole, "ro"); code != 0 || !strings.Contains(out, "Name        = ro") {
		t.Fatalf("policy info through a role: %d %q", code, out)
	}
	if code, out, _ := cli("acl", "policy", "self"); code != 0 || !strings.Contains(out, "This is a management token") {
		t.Fatalf("policy self of a management token: %d %q", code, out)
	}

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	cfg, _ := json.Marshal(map[string]any{
		"JWTValidationPubKeys": []string{string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))},
		"BoundAudiences":       []string{"drover"},
		"ClaimMappings":        map[string]string{"sub": "user"},
		"ListClaimMappings":    map[string]string{"groups": "groups"},
		"OIDCClientSecret":     "very-secret",
	})
	cfgPath := filepath.Join(dir, "jwt.json")
	os.WriteFile(cfgPath, cfg, 0o600)
	code, out, errOut = cli("acl", "auth-method", "create", "-name", "ci", "-type", "jwt", "-max-token-ttl", "1h",
		"-token-locality", "local", "-default", "-token-name-format", "jwt-${value.user}", "-config", "@"+cfgPath)
	if code != 0 || !strings.Contains(out, "Type              = JWT") || strings.Contains(out, "very-secret") || !strings.Contains(out, "redacted") {
		t.Fatalf("auth-method create: %d %q %q", code, out, errOut)
	}
	if code, out, _ := cli("acl", "auth-method", "list"); code != 0 || !regexp.MustCompile(`ci\s+JWT\s+true`).MatchString(out) {
		t.Fatalf("auth-method list: %d %q", code, out)
	}
	code, out, errOut = cli("acl", "binding-rule", "create", "-auth-method", "ci", "-bind-type", "role", "-bind-name", "readers",
		"-selector", `"eng" in list.groups`)
	if code != 0 || !strings.Contains(out, "Bind Name    = readers") {
		t.Fatalf("binding-rule create: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := cli("acl", "binding-rule", "create", "-auth-method", "ci", "-bind-type", "role", "-bind-name", "x", "-selector", "=="); code != 1 || !strings.Contains(errOut, "Selector: selector is invalid") {
		t.Fatalf("bad selector: %d %q", code, errOut)
	}

	sign := func(claims jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Setenv("NOMAD_TOKEN", "")
	good := sign(jwt.MapClaims{"sub": "alice", "aud": "drover", "groups": []string{"eng"}, "exp": time.Now().Add(time.Hour).Unix()})
	code, out, errOut = cli("login", "-method", "ci", "-login-token", good)
	if code != 0 || !strings.Contains(out, "Successfully logged in via JWT and ci") || !strings.Contains(out, "Name         = jwt-alice") ||
		!strings.Contains(out, "Roles        = ["+roleID+"/readers]") || strings.Contains(out, "Expiry Time  = <none>") {
		t.Fatalf("login: %d %q %q", code, out, errOut)
	}
	// The default method serves a login that names none.
	if code, _, errOut := cli("login", "-login-token", good); code != 0 {
		t.Fatalf("login with the default method: %d %q", code, errOut)
	}
	outsider := sign(jwt.MapClaims{"sub": "bob", "aud": "drover", "groups": []string{"sales"}})
	if code, _, errOut := cli("login", "-method", "ci", "-login-token", outsider); code != 1 || !strings.Contains(errOut, "no role or policy bindings matched") {
		t.Fatalf("login without bindings: %d %q", code, errOut)
	}
	wrongAud := sign(jwt.MapClaims{"sub": "alice", "aud": "other", "groups": []string{"eng"}})
	if code, _, errOut := cli("login", "-method", "ci", "-login-token", wrongAud); code != 1 || !strings.Contains(errOut, "audience") {
		t.Fatalf("login with another audience: %d %q", code, errOut)
	}
	if code, _, errOut := cli("login", "-type", "OIDC", "-method", "ci"); code != 1 || !strings.Contains(errOut, "OIDC browser flow is not supported") {
		t.Fatalf("OIDC login: %d %q", code, errOut)
	}
	if code, _, errOut := cli("login", "-oidc-callback-addr", "localhost:4649", "-login-token", good); code != 1 || !strings.Contains(errOut, "not supported by drover") {
		t.Fatalf("-oidc-callback-addr: %d %q", code, errOut)
	}

	t.Setenv("NOMAD_TOKEN", m[1])
	if code, out, _ := cli("acl", "auth-method", "info", "ci"); code != 0 || strings.Contains(out, "very-secret") || !regexp.MustCompile(`OIDC Client Secret\s+= redacted`).MatchString(out) {
		t.Fatalf("auth-method info: %d %q", code, out)
	}
	if code, out, _ := cli("acl", "role", "delete", roleID); code != 0 || strings.TrimSpace(out) != "ACL role "+roleID+" successfully deleted" {
		t.Fatalf("role delete: %d %q", code, out)
	}
	if code, out, _ := cli("acl", "auth-method", "delete", "ci"); code != 0 || strings.TrimSpace(out) != "ACL auth method ci successfully deleted" {
		t.Fatalf("auth-method delete: %d %q", code, out)
	}
	if code, out, _ := cli("acl", "binding-rule", "list"); code != 0 || strings.TrimSpace(out) != "No ACL binding rules found" {
		t.Fatalf("binding rules after their method: %d %q", code, out)
	}
}
