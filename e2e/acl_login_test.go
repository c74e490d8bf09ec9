package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// A dev agent with ACLs, and an identity provider played by the test (an
// RSA key; its public half given to one JWT auth method as a PEM key and
// served to another as a JWKS on 127.0.0.1):
//
//   - a role of a read-only policy, and binding rules mapping the JWT's
//     groups claim to the role;
//   - `drover login` with a JWT signed by the key gets a token of the
//     role, which reads a job and cannot register one; PUT /v1/acl/login
//     through the JWKS method does the same;
//   - a change to the role takes effect on the token's next request;
//   - a JWT signed by another key, or for another audience, gets nothing;
//   - neither the JWTs nor the secrets appear in the agent's output.
func TestACLJWTLoginThroughRoles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an agent process")
	}
	t.Setenv("NOMAD_TOKEN", "")
	t.Setenv("DROVER_TOKEN", "")
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pubPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "use": "sig", "alg": "RS256", "kid": "test",
			"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
		}}})
	}))
	defer jwks.Close()

	httpAddr, raftAddr := loopback.Addr(t), loopback.Addr(t)
	p := startAgentProc(t, "dev", httpAddr, "-dev", "-acl-enabled", "-http-addr", httpAddr, "-raft-addr", raftAddr, "-node", "dev")
	c := p.client()
	var boot *structs.ACLToken
	eventually(t, 30*time.Second, "ACL bootstrap", func() error {
		var err error
		boot, err = c.ACLBootstrap(ctx(t), "")
		return err
	})
	base := "http://" + httpAddr
	mgmt := map[string]string{"X-Nomad-Token": boot.SecretID}
	put := func(path, body string, h map[string]string) string {
		t.Helper()
		code, out := rawRequest(t, "PUT", base+path, body, h)
		if code != 200 {
			t.Fatalf("PUT %s: %d %s", path, code, out)
		}
		return out
	}
	put("/v1/acl/policy/reader", `{"Name":"reader","Rules":"namespace \"default\" { policy = \"read\" }"}`, mgmt)
	put("/v1/acl/policy/nothing", `{"Name":"nothing","Rules":"namespace \"other\" { policy = \"read\" }"}`, mgmt)
	var role structs.ACLRole
	json.Unmarshal([]byte(put("/v1/acl/role", `{"Name":"readers","Policies":[{"Name":"reader"}]}`, mgmt)), &role)
	methods := map[string]map[string]any{
		"pem":  {"JWTValidationPubKeys": []string{pubPEM}},
		"jwks": {"JWKSURL": jwks.URL},
	}
	for name, cfg := range methods {
		cfg["BoundAudiences"] = []string{"drover-e2e"}
		cfg["ListClaimMappings"] = map[string]string{"groups": "groups"}
		cfg["ClaimMappings"] = map[string]string{"sub": "user"}
		m, _ := json.Marshal(map[string]any{"Name": name, "Type": "JWT", "TokenLocality": "local", "MaxTokenTTL": "1h",
			"TokenNameFormat": "${auth_method_name}-${value.user}", "Config": cfg})
		put("/v1/acl/auth-method", string(m), mgmt)
		put("/v1/acl/binding-rule", fmt.Sprintf(`{"AuthMethod":%q,"Selector":"\"eng\" in list.groups","BindType":"role","BindName":"readers"}`, name), mgmt)
	}
	put("/v1/jobs", nsJobJSON("web", "default", 1), mgmt)

	sign := func(k *rsa.PrivateKey, aud string) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
			"sub": "alice", "aud": aud, "groups": []string{"eng"}, "exp": time.Now().Add(time.Hour).Unix(),
		}).SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	good := sign(key, "drover-e2e")
	out, err := droverCLI(t, nil, "login", "-method", "pem", "-type", "JWT", "-login-token", good, "-address", base)
	m := regexp.MustCompile(`(?m)^Secret ID\s+= ([0-9a-f-]{36})$`).FindStringSubmatch(out)
	if err != nil || m == nil || !strings.Contains(out, "Name         = pem-alice") || !strings.Contains(out, "/readers]") {
		t.Fatalf("drover login: %v %s", err, out)
	}
	viaCLI := m[1]
	var viaAPI structs.ACLToken
	json.Unmarshal([]byte(put("/v1/acl/login", `{"AuthMethodName":"jwks","LoginToken":"`+good+`"}`, nil)), &viaAPI)
	if viaAPI.SecretID == "" || viaAPI.ExpirationTime == nil || len(viaAPI.Roles) != 1 || viaAPI.Roles[0].ID != role.ID {
		t.Fatalf("login through the JWKS method: %+v", viaAPI)
	}
	for _, secret := range []string{viaCLI, viaAPI.SecretID} {
		h := map[string]string{"X-Nomad-Token": secret}
		if code, out := rawRequest(t, "GET", base+"/v1/job/web", "", h); code != 200 {
			t.Fatalf("the login's token reads the job: %d %s", code, out)
		}
		if code, out := rawRequest(t, "PUT", base+"/v1/jobs", nsJobJSON("web2", "default", 1), h); code != 403 {
			t.Fatalf("the login's token registers a job: %d %s", code, out)
		}
	}
	// The role now grants nothing in default: at once, the token reads
	// nothing there.
	put("/v1/acl/role/"+role.ID, `{"ID":"`+role.ID+`","Name":"readers","Policies":[{"Name":"nothing"}]}`, mgmt)
	if code, out := rawRequest(t, "GET", base+"/v1/job/web", "", map[string]string{"X-Nomad-Token": viaCLI}); code != 403 {
		t.Fatalf("after the role changed: %d %s", code, out)
	}

	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	for what, tok := range map[string]string{"another key": sign(other, "drover-e2e"), "another audience": sign(key, "elsewhere")} {
		for _, method := range []string{"pem", "jwks"} {
			code, out := rawRequest(t, "PUT", base+"/v1/acl/login", `{"AuthMethodName":"`+method+`","LoginToken":"`+tok+`"}`, nil)
			if code != 403 || !strings.Contains(out, "failed to verify login token") {
				t.Errorf("%s through %s: %d %s", what, method, code, out)
			}
		}
	}
	logs := p.logs.String()
	for _, secret := range []string{good, viaCLI, viaAPI.SecretID, boot.SecretID} {
		if strings.Contains(logs, secret) {
			t.Errorf("the agent's output holds a secret: %.20s…", secret)
		}
	}
}
