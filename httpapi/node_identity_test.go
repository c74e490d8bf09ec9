package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/keyring"
	"github.com/droverhq/drover/structs"
)

func TestIntroductionVerdict(t *testing.T) {
	bad := errors.New("bad token")
	for _, c := range []struct {
		enf        string
		known      bool
		tokenErr   error
		warn, deny bool
	}{
		{"none", false, bad, false, false},
		{"warn", false, bad, true, false},
		{"strict", false, bad, false, true},
		{"strict", true, bad, false, false},
		{"strict", false, nil, false, false},
		{"warn", false, nil, false, false},
	} {
		warn, refuse := introductionVerdict(c.enf, c.known, c.tokenErr)
		if warn != c.warn || (refuse != nil) != c.deny {
			t.Errorf("%+v: warn %v refuse %v", c, warn, refuse)
		}
	}
}

// A node gets an identity signed by the keyring, for its pool's TTL,
// verifiable with the keyring's keys; only the node itself may ask.
func TestNodeIdentityEndpoint(t *testing.T) {
	f := newACLFixture(t)
	code, body := f.do(t, "node1", "PUT", "/v1/internal/node/node1/identity", "")
	if code != 200 {
		t.Fatalf("identity: %d %s", code, body)
	}
	var out structs.NodeIdentityResponse
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	snap := f.b.State().Snapshot()
	c, err := keyring.VerifyNodeIdentity(out.JWT, snap.RootKeyByID, f.now)
	if err != nil {
		t.Fatal(err)
	}
	if c.NodeID != "node1" || c.NodeDatacenter != "dc1" || !c.ExpiresAt.Time.Equal(f.now.Add(structs.DefaultNodePoolNodeIdentityTTL)) {
		t.Errorf("claims = %+v", c)
	}
	for who, want := range map[string]int{"node2": 403, "mgmt": 403, "": 403} {
		if code, body := f.do(t, who, "PUT", "/v1/internal/node/node1/identity", ""); code != want {
			t.Errorf("%q: %d %s, want %d", who, code, body, want)
		}
	}
	if code, _ := f.do(t, "node1", "PUT", "/v1/internal/node/nope/identity", ""); code != 403 && code != 404 {
		t.Errorf("unknown node: %d", code)
	}
}

func TestClientIntroductionTokenEndpoint(t *testing.T) {
	f := newACLFixture(t)
	for _, c := range []struct {
		who, body string
		code      int
		ttl       time.Duration
	}{
		{"mgmt", ``, 200, 5 * time.Minute},
		{"mgmt", `{"TTL": 1000000000, "NodePool": "default", "NodeName": "test-node"}`, 200, time.Second},
		{"mgmt", `{"TTL": "10m"}`, 200, 10 * time.Minute},
		{"mgmt", `{"TTL": "2h"}`, 200, 30 * time.Minute},
		{"mgmt", `{"TTL": "soon"}`, 400, 0},
		{"mgmt", `{"TTL": -5}`, 400, 0},
		{"mgmt", `{"NodePool": "all"}`, 400, 0},
		{"mgmt", `{"NodePool": "bad pool!"}`, 400, 0},
		{"mgmt", `{`, 400, 0},
		{"reader", ``, 403, 0},
		{"", ``, 403, 0},
	} {
		code, body := f.do(t, c.who, "PUT", "/v1/acl/identity/client-introduction-token", c.body)
		if code != c.code {
			t.Errorf("%s %s: %d %s, want %d", c.who, c.body, code, body, c.code)
			continue
		}
		if code != 200 {
			if body == "" {
				t.Errorf("%s: no message", c.body)
			}
			continue
		}
		var out structs.ClientIntroductionTokenResponse
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatal(err)
		}
		ic, err := keyring.VerifyIntroduction(out.JWT, f.b.State().Snapshot().RootKeyByID, f.now)
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		if got := ic.ExpiresAt.Time.Sub(f.now); got != c.ttl {
			t.Errorf("%s: ttl %v, want %v", c.body, got, c.ttl)
		}
	}
}

// With enforcement strict a new node registers only with a valid
// introduction token for it; a known node with its secret always.
func TestClientIntroductionStrict(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := &fakeClientBackend{fakeBackend: newFakeBackend(), ttl: 10 * time.Second}
	cfg := structs.DefaultClientIntroductionConfig()
	cfg.Enforcement = structs.ClientIntroductionEnforcementStrict
	api := New(b, nil, WithClientIntroduction(cfg), WithClock(func() time.Time { return now }))
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	reg := func(id, name, secret, intro string) (int, string) {
		req, _ := http.NewRequest("PUT", srv.URL+"/v1/internal/node/register",
			strings.NewReader(`{"Node":{"ID":"`+id+`","Name":"`+name+`","Datacenter":"dc1","Status":"ready"}}`))
		req.Header.Set(TokenHeader, secret)
		if intro != "" {
			req.Header.Set(structs.ClientIntroTokenHeader, intro)
		}
		return roundTrip(t, req)
	}
	if code, body := reg("n1", "web-1", "s1", ""); code != 403 || !strings.Contains(body, "introduction") {
		t.Fatalf("without a token: %d %s", code, body)
	}
	issue := func(body string) string {
		req, _ := http.NewRequest("PUT", srv.URL+"/v1/acl/identity/client-introduction-token", strings.NewReader(body))
		code, out := roundTrip(t, req)
		if code != 200 {
			t.Fatalf("issue: %d %s", code, out)
		}
		var r structs.ClientIntroductionTokenResponse
		_ = json.Unmarshal([]byte(out), &r)
		return r.JWT
	}
	named := issue(`{"NodeName":"web-1"}`)
	if code, body := reg("n2", "web-2", "s2", named); code != 403 {
		t.Fatalf("another name: %d %s", code, body)
	}
	if code, body := reg("n1", "web-1", "s1", "eyJnot.a.token"); code != 403 {
		t.Fatalf("garbage token: %d %s", code, body)
	}
	if code, body := reg("n1", "web-1", "s1", named); code != 200 {
		t.Fatalf("with its token: %d %s", code, body)
	}
	// Re-registering with its secret needs no token.
	if code, body := reg("n1", "web-1", "s1", ""); code != 200 {
		t.Fatalf("known node: %d %s", code, body)
	}
	now = now.Add(time.Hour) // the token expired
	if code, body := reg("n3", "web-1", "s3", named); code != 403 {
		t.Fatalf("expired token: %d %s", code, body)
	}
}
