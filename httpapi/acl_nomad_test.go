package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// A token may name a policy that does not exist yet, as Nomad's (tokens
// link policies by name): it grants nothing until the policy is written,
// then what the policy grants.
func TestTokenNamingAPolicyNotWrittenYet(t *testing.T) {
	f := newACLFixture(t)
	code, body := f.do(t, "mgmt", "PUT", "/v1/acl/token", `{"Name":"later","Type":"client","Policies":["later"]}`)
	var tok structs.ACLToken
	if code != 200 || json.Unmarshal([]byte(body), &tok) != nil || tok.SecretID == "" {
		t.Fatalf("token create: %d %s", code, body)
	}
	f.secrets["later"] = tok.SecretID
	if code, body := f.do(t, "later", "GET", "/v1/jobs", ""); code != 403 {
		t.Fatalf("before the policy: %d %s", code, body)
	}
	if code, body := f.do(t, "mgmt", "PUT", "/v1/acl/policy/later", `{"Name":"later","Rules":"namespace \"default\" { policy = \"read\" }"}`); code != 200 {
		t.Fatalf("policy: %d %s", code, body)
	}
	if code, body := f.do(t, "later", "GET", "/v1/jobs", ""); code != 200 || !strings.Contains(body, `"web"`) {
		t.Fatalf("after the policy: %d %s", code, body)
	}
}

// A BootstrapSecret that is not a UUID is refused with Nomad's words.
func TestBootstrapSecretNotAUUID(t *testing.T) {
	srv := httptest.NewServer(New(newFakeBackend(), nil, WithACL(ACLConfig{Enabled: true})).Handler())
	t.Cleanup(srv.Close)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/acl/bootstrap", `{"BootstrapSecret":"badtoken"}`); code != 400 || !strings.Contains(body, "invalid acl token") {
		t.Fatalf("bootstrap: %d %s", code, body)
	}
}

// A token's expiry cannot change on update, as Nomad's: a TTL or another
// expiration time is a 400; the same expiration time, or none, is fine.
func TestTokenUpdateKeepsItsExpiry(t *testing.T) {
	f := newACLFixture(t)
	code, body := f.do(t, "mgmt", "PUT", "/v1/acl/token", `{"Name":"t","Type":"client","Policies":["readonly"],"ExpirationTTL":"1h"}`)
	var tok structs.ACLToken
	if code != 200 || json.Unmarshal([]byte(body), &tok) != nil || tok.ExpirationTime == nil {
		t.Fatalf("create: %d %s", code, body)
	}
	path := "/v1/acl/token/" + tok.AccessorID
	exp, _ := json.Marshal(tok.ExpirationTime)
	for _, c := range []struct {
		body string
		want int
	}{
		{`{"Name":"u","Type":"client","Policies":["readonly"],"ExpirationTTL":"10m"}`, 400},
		{`{"Name":"u","Type":"client","Policies":["readonly"],"ExpirationTime":"2030-01-01T00:00:00Z"}`, 400},
		{`{"Name":"u","Type":"client","Policies":["readonly"],"ExpirationTime":` + string(exp) + `}`, 200},
		{`{"Name":"v","Type":"client","Policies":["readonly"]}`, 200},
	} {
		code, body := f.do(t, "mgmt", "PUT", path, c.body)
		if code != c.want || (c.want == 400 && !strings.Contains(body, "Cannot change expiration time")) {
			t.Errorf("%s: %d %s, want %d", c.body, code, body, c.want)
		}
	}
}
