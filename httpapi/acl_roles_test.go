package httpapi

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/droverhq/drover/structs"
)

// Roles: made, read, renamed and deleted as Nomad's; a token that links
// one is granted its policies as they are at each request; a client token
// reads only the roles it links.
func TestACLRoleEndpoints(t *testing.T) {
	f := newACLFixture(t)
	for _, bad := range []struct{ body, want string }{
		{`{"Name":"x"}`, "at least one policy should be specified"},
		{`{"Name":"no spaces","Policies":[{"Name":"readonly"}]}`, "Name: invalid ACL role name"},
		{`{"ID":"given","Name":"x","Policies":[{"Name":"readonly"}]}`, "ID: cannot be set"},
		{`{"Name":"x","Policies":[{"Name":""}]}`, "Policies[0]: empty policy name"},
		{`{"Name":`, "400"},
	} {
		if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/role", bad.body); code != 400 || !strings.Contains(body, strings.TrimPrefix(bad.want, "400")) {
			t.Errorf("role %s: %d %s, want 400 %q", bad.body, code, body, bad.want)
		}
	}
	if code, _ := f.do(t, "reader", "PUT", "/v1/acl/role", `{"Name":"x","Policies":[{"Name":"readonly"}]}`); code != 403 {
		t.Errorf("a client token makes a role: %d", code)
	}
	code, body := f.do(t, "mgmt", "PUT", "/v1/acl/role", `{"Name":"deployers","Policies":[{"Name":"deployer"},{"Name":"later"}]}`)
	var role structs.ACLRole
	if code != 200 || json.Unmarshal([]byte(body), &role) != nil || role.ID == "" || role.CreateIndex == 0 {
		t.Fatalf("role create: %d %s", code, body)
	}
	if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/role", `{"Name":"deployers","Policies":[{"Name":"deployer"}]}`); code != 400 || !strings.Contains(body, `ACL role with name "deployers" already exists`) {
		t.Errorf("a second role of one name: %d %s", code, body)
	}
	code, body = f.do(t, "mgmt", "PUT", "/v1/acl/token", `{"Name":"r","Type":"client","Roles":[{"Name":"deployers"}]}`)
	var tok structs.ACLToken
	if code != 200 || json.Unmarshal([]byte(body), &tok) != nil || len(tok.Roles) != 1 || tok.Roles[0].ID != role.ID {
		t.Fatalf("token with a role: %d %s", code, body)
	}
	f.secrets["r"] = tok.SecretID
	if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/token", `{"Type":"client","Roles":[{"Name":"nobody"}]}`); code != 400 || !strings.Contains(body, "Roles: cannot find role nobody") {
		t.Errorf("a link to a missing role: %d %s", code, body)
	}
	if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/token", `{"Type":"client"}`); code != 400 || !strings.Contains(body, "missing policies or roles") {
		t.Errorf("a client token of nothing: %d %s", code, body)
	}
	if code, _ := f.do(t, "r", "PUT", "/v1/jobs", `{"Job":`+mustJSON(t, statetestJob("api"))+`}`); code != 200 {
		t.Errorf("the role's token registers: %d", code)
	}
	// The role changes; the token's next request sees it.
	if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/role/"+role.ID, `{"Name":"renamed","Policies":[{"Name":"readonly"}]}`); code != 200 || !strings.Contains(body, `"Name":"renamed"`) {
		t.Fatalf("role update: %d %s", code, body)
	}
	if code, _ := f.do(t, "r", "PUT", "/v1/jobs", `{"Job":`+mustJSON(t, statetestJob("api"))+`}`); code != 403 {
		t.Errorf("the role's token registers after the role lost the policy: %d", code)
	}
	if code, body := f.do(t, "r", "GET", "/v1/acl/token/self", ""); code != 200 || !strings.Contains(body, `"Name":"renamed"`) {
		t.Errorf("the token's link after the rename: %d %s", code, body)
	}
	// A client token reads the roles it links, no other.
	if code, body := f.do(t, "r", "GET", "/v1/acl/roles", ""); code != 200 || !strings.Contains(body, role.ID) {
		t.Errorf("its roles: %d %s", code, body)
	}
	if code, body := f.do(t, "reader", "GET", "/v1/acl/roles", ""); code != 200 || strings.TrimSpace(body) != "[]" {
		t.Errorf("another token's roles: %d %s", code, body)
	}
	if code, _ := f.do(t, "r", "GET", "/v1/acl/role/name/renamed", ""); code != 200 {
		t.Errorf("its role by name: %d", code)
	}
	if code, _ := f.do(t, "reader", "GET", "/v1/acl/role/"+role.ID, ""); code != 403 {
		t.Errorf("another token's role: %d", code)
	}
	if code, _ := f.do(t, "mgmt", "PUT", "/v1/acl/role/"+structs.GenerateUUID(), `{"Name":"x","Policies":[{"Name":"readonly"}]}`); code != 404 {
		t.Errorf("update of an unknown role: %d", code)
	}
	if code, _ := f.do(t, "mgmt", "DELETE", "/v1/acl/role/"+role.ID, ""); code != 200 {
		t.Fatalf("role delete: %d", code)
	}
	if code, body := f.do(t, "mgmt", "GET", "/v1/acl/token/"+tok.AccessorID, ""); code != 200 || !strings.Contains(body, `"Roles":null`) {
		t.Errorf("a token's link to a deleted role: %d %s", code, body)
	}
	if code, _ := f.do(t, "mgmt", "DELETE", "/v1/acl/role/"+role.ID, ""); code != 404 {
		t.Errorf("a second delete: %d", code)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Auth methods and binding rules are checked field by field (a 400 names
// the field); secrets are answered "redacted" and kept across an update
// that sends "redacted" back.
func TestACLAuthMethodAndBindingRuleChecks(t *testing.T) {
	f := newACLFixture(t)
	method := func(typ, cfg string) string {
		return `{"Name":"m","Type":"` + typ + `","TokenLocality":"local","MaxTokenTTL":"1h","Config":` + cfg + `}`
	}
	for _, bad := range []struct{ body, want string }{
		{method("SAML", `{}`), "Type: invalid auth method type"},
		{`{"Name":"m","Type":"JWT","TokenLocality":"here","MaxTokenTTL":"1h","Config":{"JWKSURL":"https://x"}}`, "TokenLocality"},
		{`{"Name":"m","Type":"JWT","TokenLocality":"local","MaxTokenTTL":"1s","Config":{"JWKSURL":"https://x"}}`, "invalid MaxTokenTTL value"},
		{`{"Name":"m","Type":"JWT","TokenLocality":"local","MaxTokenTTL":"1h"}`, "Config: missing"},
		{method("JWT", `{}`), "exactly one of JWTValidationPubKeys, JWKSURL or OIDCDiscoveryURL"},
		{method("JWT", `{"JWTValidationPubKeys":["nope"]}`), "Config.JWTValidationPubKeys[0]: not a PEM block"},
		{method("JWT", `{"JWKSURL":"file:///etc/passwd"}`), "Config.JWKSURL"},
		{method("JWT", `{"JWKSURL":"https://x","SigningAlgs":["none"]}`), "Config.SigningAlgs[0]"},
		{method("OIDC", `{"OIDCDiscoveryURL":"https://x"}`), "Config.OIDCClientID"},
		{`{"Name":"m","Type":"JWT","TokenLocality":"local","MaxTokenTTL":"1h","TokenNameFormat":"${nope}","Config":{"JWKSURL":"https://x"}}`, "TokenNameFormat"},
		{`{"Name":"m","MaxTokenTTL":"soon"}`, "400"},
	} {
		if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/auth-method", bad.body); code != 400 || !strings.Contains(body, strings.TrimPrefix(bad.want, "400")) {
			t.Errorf("method %s: %d %s, want %q", bad.body, code, body, bad.want)
		}
	}
	code, body := f.do(t, "mgmt", "PUT", "/v1/acl/auth-method", `{"Name":"sso","Type":"OIDC","TokenLocality":"global","MaxTokenTTL":"1h","Default":true,
		"Config":{"OIDCDiscoveryURL":"https://idp","OIDCClientID":"drover","OIDCClientSecret":"s3cr3t-value"}}`)
	if code != 200 || strings.Contains(body, "s3cr3t-value") || !strings.Contains(body, `"OIDCClientSecret":"redacted"`) || !strings.Contains(body, `"MaxTokenTTL":"1h0m0s"`) {
		t.Fatalf("method create: %d %s", code, body)
	}
	m, _ := f.b.State().Snapshot().ACLAuthMethodByName("sso")
	if m.Sealed == nil || strings.Contains(mustJSON(t, m), "s3cr3t-value") {
		t.Fatalf("stored method: %+v", m)
	}
	if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/auth-method/sso", `{"Type":"OIDC","TokenLocality":"local","MaxTokenTTL":"2h","Default":true,
		"Config":{"OIDCDiscoveryURL":"https://idp","OIDCClientID":"drover","OIDCClientSecret":"redacted"}}`); code != 200 || !strings.Contains(body, `"OIDCClientSecret":"redacted"`) {
		t.Fatalf("method update: %d %s", code, body)
	}
	if m2, _ := f.b.State().Snapshot().ACLAuthMethodByName("sso"); m2.Sealed == nil {
		t.Fatal("an update that sent redacted lost the secret")
	}
	if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/auth-method", `{"Name":"sso2","Type":"OIDC","TokenLocality":"local","MaxTokenTTL":"1h","Default":true,
		"Config":{"OIDCDiscoveryURL":"https://idp","OIDCClientID":"x"}}`); code != 400 || !strings.Contains(body, "default method for type OIDC already exists") {
		t.Errorf("a second default: %d %s", code, body)
	}
	if code, body := f.do(t, "", "GET", "/v1/acl/auth-methods", ""); code != 200 || !strings.Contains(body, `"Name":"sso"`) || strings.Contains(body, "Config") {
		t.Errorf("anonymous list: %d %s", code, body)
	}
	if code, _ := f.do(t, "reader", "GET", "/v1/acl/auth-method/sso", ""); code != 403 {
		t.Errorf("a client token reads a method: %d", code)
	}

	for _, bad := range []struct{ body, want string }{
		{`{"AuthMethod":"nope","BindType":"role","BindName":"x"}`, `ACL auth-method "nope" not found`},
		{`{"AuthMethod":"sso","BindType":"role"}`, "bind name is missing"},
		{`{"AuthMethod":"sso","BindType":"owner","BindName":"x"}`, "BindType: unsupported bind type"},
		{`{"AuthMethod":"sso","BindType":"role","BindName":"x","Selector":"=="}`, "Selector: selector is invalid"},
		{`{"AuthMethod":"sso","BindType":"policy","BindName":"${list.x}"}`, "BindName"},
		{`{"AuthMethod":"sso","BindType":"management","BindName":"x"}`, "BindName: must be empty"},
	} {
		if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/binding-rule", bad.body); code != 400 || !strings.Contains(body, bad.want) {
			t.Errorf("rule %s: %d %s, want %q", bad.body, code, body, bad.want)
		}
	}
	if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/oidc/auth-url", `{}`); code != 400 || !strings.Contains(body, "OIDC browser flow is not supported") {
		t.Errorf("oidc auth-url: %d %s", code, body)
	}
}

// One-time tokens: asked for by a token, exchanged once for it within
// their TTL; the anonymous token gets none.
func TestACLOneTimeTokens(t *testing.T) {
	f := newACLFixture(t)
	if code, _ := f.do(t, "", "PUT", "/v1/acl/token/onetime", ""); code != 403 {
		t.Errorf("anonymous one-time token: %d", code)
	}
	code, body := f.do(t, "reader", "PUT", "/v1/acl/token/onetime", "")
	var resp struct{ OneTimeToken structs.OneTimeToken }
	if code != 200 || json.Unmarshal([]byte(body), &resp) != nil || resp.OneTimeToken.OneTimeSecretID == "" || resp.OneTimeToken.AccessorID != "acc-reader" {
		t.Fatalf("one-time token: %d %s", code, body)
	}
	ex := `{"OneTimeSecretID":"` + resp.OneTimeToken.OneTimeSecretID + `"}`
	code, body = f.do(t, "", "PUT", "/v1/acl/token/onetime/exchange", ex)
	if code != 200 || !strings.Contains(body, `"AccessorID":"acc-reader"`) {
		t.Fatalf("exchange: %d %s", code, body)
	}
	if code, _ := f.do(t, "", "PUT", "/v1/acl/token/onetime/exchange", ex); code != 403 {
		t.Errorf("a second exchange: %d", code)
	}
	_, body = f.do(t, "reader", "PUT", "/v1/acl/token/onetime", "")
	json.Unmarshal([]byte(body), &resp)
	f.now = f.now.Add(structs.OneTimeTokenTTL)
	if code, _ := f.do(t, "", "PUT", "/v1/acl/token/onetime/exchange", `{"OneTimeSecretID":"`+resp.OneTimeToken.OneTimeSecretID+`"}`); code != 403 {
		t.Errorf("an expired exchange: %d", code)
	}
	if code, _ := f.do(t, "", "PUT", "/v1/acl/token/onetime/exchange", `{}`); code != 400 {
		t.Errorf("an exchange without a secret: %d", code)
	}
}

// A login's refusals are 4xx with Nomad's words, whatever the JWT.
func TestACLLoginRefusals(t *testing.T) {
	f := newACLFixture(t)
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	cfg := mustJSON(t, map[string]any{"JWTValidationPubKeys": []string{pub}, "BoundIssuer": []string{"idp"},
		"ClaimMappings": map[string]string{"sub": "user"}})
	if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/auth-method", `{"Name":"ci","Type":"JWT","TokenLocality":"local","MaxTokenTTL":"10m","Config":`+cfg+`}`); code != 200 {
		t.Fatalf("method: %d %s", code, body)
	}
	if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/binding-rule", `{"AuthMethod":"ci","Selector":"value.user == \"alice\"","BindType":"policy","BindName":"readonly"}`); code != 200 {
		t.Fatalf("rule: %d %s", code, body)
	}
	sign := func(c jwt.MapClaims) string {
		s, _ := jwt.NewWithClaims(jwt.SigningMethodRS256, c).SignedString(key)
		return s
	}
	login := func(method, tok string) (int, string) {
		return f.do(t, "", "PUT", "/v1/acl/login", mustJSON(t, map[string]string{"AuthMethodName": method, "LoginToken": tok}))
	}
	code, body := login("ci", sign(jwt.MapClaims{"iss": "idp", "sub": "alice", "exp": f.now.Add(time.Hour).Unix()}))
	var tok structs.ACLToken
	if code != 200 || json.Unmarshal([]byte(body), &tok) != nil || tok.SecretID == "" || len(tok.Policies) != 1 ||
		tok.Name != "JWT-ci" || tok.ExpirationTime == nil || !tok.ExpirationTime.Equal(f.now.Add(10*time.Minute)) {
		t.Fatalf("login: %d %s", code, body)
	}
	for _, c := range []struct {
		method, tok string
		code        int
		want        string
	}{
		{"ci", "garbage", 403, "failed to verify login token"},
		{"ci", sign(jwt.MapClaims{"iss": "other", "sub": "alice"}), 403, "issuer"},
		{"ci", sign(jwt.MapClaims{"iss": "idp", "sub": "bob"}), 403, "no role or policy bindings matched"},
		{"ci", sign(jwt.MapClaims{"iss": "idp", "sub": []string{"alice"}}), 400, "failed to map claims"},
		{"nope", "x", 404, `auth-method "nope" not found`},
		{"", "x", 400, "no default JWT auth method"},
		{"ci", "", 400, "LoginToken"},
	} {
		if code, body := login(c.method, c.tok); code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("login %s %.20s: %d %s, want %d %q", c.method, c.tok, code, body, c.code, c.want)
		}
	}
}

// FuzzLogin: whatever the login body, the answer is a 4xx (or a token
// for a JWT the key signed), never a 5xx or a panic.
func FuzzLogin(f *testing.F) {
	b := newFakeBackend()
	s := New(b, nil, WithACL(ACLConfig{Enabled: true}), WithWriteLimit(WriteLimit{}))
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for _, seed := range []string{`{}`, `{"AuthMethodName":"x","LoginToken":"a.b.c"}`, `{"LoginToken":"eyJhbGciOiJub25lIn0.e30."}`,
		`[]`, `{"AuthMethodName":1}`, strings.Repeat("{", 100)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("PUT", "/v1/acl/login", strings.NewReader(body))
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, r)
		if rec.Code >= 500 || rec.Code == http.StatusOK {
			t.Fatalf("%q: %d %s", body, rec.Code, rec.Body.String())
		}
	})
}

// A JWKS method's key set is fetched once a minute at most; a JWT its
// cached keys do not verify has it fetched again (the provider rotated
// its keys), at most every few seconds.
func TestACLLoginKeySetCache(t *testing.T) {
	f := newACLFixture(t)
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	var mu sync.Mutex
	current, fetches := key, 0
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fetches++
		k := current
		json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{"kty": "RSA", "use": "sig",
			"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes())}}})
	}))
	defer jwks.Close()
	cfg := mustJSON(t, map[string]any{"JWKSURL": jwks.URL})
	if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/auth-method", `{"Name":"ks","Type":"JWT","TokenLocality":"local","MaxTokenTTL":"10m","Config":`+cfg+`}`); code != 200 {
		t.Fatalf("method: %d %s", code, body)
	}
	if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/binding-rule", `{"AuthMethod":"ks","BindType":"policy","BindName":"readonly"}`); code != 200 {
		t.Fatalf("rule: %d %s", code, body)
	}
	login := func(k *rsa.PrivateKey) int {
		s, _ := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "x"}).SignedString(k)
		code, _ := f.do(t, "", "PUT", "/v1/acl/login", `{"AuthMethodName":"ks","LoginToken":"`+s+`"}`)
		return code
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return fetches }
	if login(key) != 200 || login(key) != 200 || count() != 1 {
		t.Fatalf("two logins: fetched %d times", count())
	}
	rotated, _ := rsa.GenerateKey(rand.Reader, 2048)
	mu.Lock()
	current = rotated
	mu.Unlock()
	if code := login(rotated); code != 403 || count() != 1 {
		t.Fatalf("a login right after the rotation: %d, fetched %d times", code, count())
	}
	f.now = f.now.Add(10 * time.Second)
	if code := login(rotated); code != 200 || count() != 2 {
		t.Fatalf("a login with the rotated key: %d, fetched %d times", code, count())
	}
}
