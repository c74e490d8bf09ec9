package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/internal/joinauth"
	"github.com/droverhq/drover/structs"
)

// Every route declares what it needs; the routes that change ACLs or hand
// out the state need a management token; the client routes need a node
// secret; nothing writes without a declaration stricter than "none" but
// the bootstrap (refused once done), a login (which proves itself with a
// signed JWT) and a one-time token's exchange (with its secret). A token
// asks for a one-time token of its own; the OIDC flow's and the client
// introduction's routes only answer that drover has none.
func TestEveryRouteDeclaresWhatItNeeds(t *testing.T) {
	publicWrites := map[string]bool{}
	for _, m := range []string{"PUT", "POST"} {
		for _, p := range []string{"/v1/acl/bootstrap", "/v1/acl/login", "/v1/acl/token/onetime/exchange",
			"/v1/acl/oidc/auth-url", "/v1/acl/oidc/complete-auth"} {
			publicWrites[m+" "+p] = true
		}
		publicWrites[m+" /v1/acl/token/onetime"] = true
		publicWrites[m+" /v1/acl/identity/client-introduction-token"] = true
	}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		switch {
		case rt.need.kind == needUndeclared:
			t.Errorf("%s declares no need", rt.pattern)
		case rt.kind == writeRoute && rt.need.kind == needPublic && !publicWrites[rt.pattern]:
			t.Errorf("%s writes and needs nothing", rt.pattern)
		case strings.HasPrefix(path, "/v1/acl/") && method != "GET" && !publicWrites[rt.pattern] && rt.need != management:
			t.Errorf("%s changes ACLs without a management token (%s)", rt.pattern, rt.need)
		case path == "/v1/operator/snapshot" && rt.need != management:
			t.Errorf("%s needs %s, not management", rt.pattern, rt.need)
		case path == "/v1/internal/acl/replication":
			// The other regions' servers read what they replicate with a
			// management token (their replication_token), as Nomad's.
			if rt.need != management {
				t.Errorf("%s needs %s, not management", rt.pattern, rt.need)
			}
		case strings.HasPrefix(path, "/v1/internal/") && path != "/v1/internal/join":
			switch rt.need.kind {
			case needNodeRegister, needNodeSelf, needNodeAny:
			default:
				t.Errorf("%s, a client route, needs %s, not a node secret", rt.pattern, rt.need)
			}
		case path == "/v1/internal/join" && rt.need != serverJoin:
			t.Errorf("%s needs %s", rt.pattern, rt.need)
		}
		if rt.need.kind == needNamespace && rt.need.capability == "" {
			t.Errorf("%s needs a namespace capability, but names none", rt.pattern)
		}
		ownNode := rt.need.kind == needNodeSelf || rt.need.kind == needNodeReadOrSelf
		if strings.HasPrefix(path, "/v1/internal/node/{id}") && !ownNode {
			t.Errorf("%s names a node but does not check it is the caller's", rt.pattern)
		}
	}
	// A route without a declaration is refused, whatever the token.
	s := New(newFakeBackend(), nil, WithACL(ACLConfig{Enabled: true}))
	rt := route{"GET /v1/test/undeclared", localRoute, need{}, func(*Server, http.ResponseWriter, *http.Request) (any, error) { return "ok", nil }}
	s.mux.Handle(rt.pattern, s.wrap(rt))
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/test/undeclared", nil))
	if rec.Code != 403 || !strings.HasPrefix(rec.Body.String(), "Permission denied") {
		t.Fatalf("undeclared route: %d %s", rec.Code, rec.Body.String())
	}
}

// aclFixture is an API with ACLs on over a fake backend that also serves
// the client endpoints, with policies, tokens and two nodes.
type aclFixture struct {
	b   *fakeClientBackend
	srv *httptest.Server
	now time.Time
	// secrets by name: mgmt, reader, writer, expired, node1, node2.
	secrets map[string]string
	// allocs by node: the ID of one allocation of each node.
	allocs map[string]string
}

func newACLFixture(t *testing.T) *aclFixture {
	t.Helper()
	f := &aclFixture{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), secrets: map[string]string{}, allocs: map[string]string{}}
	f.b = &fakeClientBackend{fakeBackend: newFakeBackend(), ttl: 10 * time.Second}
	api := New(f.b, nil, WithACL(ACLConfig{Enabled: true}), WithClock(func() time.Time { return f.now }))
	f.srv = httptest.NewServer(api.Handler())
	t.Cleanup(f.srv.Close)
	apply := func(mt fsm.MessageType, req any) {
		t.Helper()
		if _, _, err := f.b.Apply(context.Background(), mt, req); err != nil {
			t.Fatal(err)
		}
	}
	apply(fsm.ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readonly", Rules: "namespace \"default\" { policy = \"read\" }\nnode { policy = \"read\" }"},
		{Name: "deployer", Rules: `namespace "default" { policy = "write" }`},
	}})
	expiry := f.now.Add(-time.Hour)
	for _, tk := range []struct {
		name, typ string
		policies  []string
		expires   *time.Time
	}{
		{"mgmt", structs.ACLTokenTypeManagement, nil, nil},
		{"reader", structs.ACLTokenTypeClient, []string{"readonly"}, nil},
		{"writer", structs.ACLTokenTypeClient, []string{"deployer"}, nil},
		{"expired", structs.ACLTokenTypeClient, []string{"deployer"}, &expiry},
	} {
		secret := structs.GenerateUUID()
		f.secrets[tk.name] = secret
		apply(fsm.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{{
			AccessorID: "acc-" + tk.name, SecretHash: structs.HashSecret(secret), Name: tk.name, Type: tk.typ,
			Policies: tk.policies, ExpirationTime: tk.expires,
		}}})
	}
	job := statetestJob("web")
	apply(fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: "default", JobID: "web", Status: structs.EvalStatusPending}})
	for _, n := range []string{"node1", "node2"} {
		secret := structs.GenerateUUID()
		f.secrets[n] = secret
		code, body := f.do(t, n, "PUT", "/v1/internal/node/register", `{"Node":{"ID":"`+n+`","Name":"`+n+`","Datacenter":"dc1","Status":"ready"}}`)
		if code != 200 {
			t.Fatalf("register %s: %d %s", n, code, body)
		}
		id := structs.GenerateUUID()
		f.allocs[n] = id
		stored, _ := f.b.State().Snapshot().JobByID("default", "web")
		apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{Job: stored, AllocsPlaced: []*structs.Allocation{{
			ID: id, Namespace: "default", JobID: "web", TaskGroup: "g", NodeID: n, Name: "web.g[0]",
			DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending,
		}}})
	}
	return f
}

func statetestJob(id string) *structs.Job {
	return &structs.Job{ID: id, Name: id, Namespace: "default", Type: structs.JobTypeService, Priority: 50,
		Datacenters: []string{"dc1"}, TaskGroups: []*structs.TaskGroup{{Name: "g", Count: 1,
			Tasks: []*structs.Task{{Name: "t", Driver: "raw_exec", Config: map[string]any{"command": "/bin/true"}}}}}}
}

// do sends a request with the named secret ("" for none) in X-Nomad-Token.
func (f *aclFixture) do(t *testing.T, who, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if who != "" {
		secret, ok := f.secrets[who]
		if !ok {
			secret = who // a secret nobody has
		}
		req.Header.Set(TokenHeader, secret)
	}
	return roundTrip(t, req)
}

// roundTrip sends req and returns the answer's status and body.
func roundTrip(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestACLEnforcement(t *testing.T) {
	f := newACLFixture(t)
	a1, a2 := f.allocs["node1"], f.allocs["node2"]
	for _, tc := range []struct {
		name, who, method, path, body string
		want                          int
		contains                      string
	}{
		{"anonymous list", "", "GET", "/v1/jobs", "", 403, "Permission denied: GET /v1/jobs needs list-jobs in namespace \"default\""},
		{"anonymous register", "", "PUT", "/v1/jobs", webJob, 403, "Permission denied"},
		{"anonymous status", "", "GET", "/v1/status/leader", "", 200, ""},
		{"anonymous regions", "", "GET", "/v1/regions", "", 200, ""},
		{"unknown token", "no-such-secret", "GET", "/v1/jobs", "", 403, "ACL token not found"},
		{"unknown token on a public route", "no-such-secret", "GET", "/v1/status/leader", "", 200, ""},
		{"expired token", "expired", "GET", "/v1/jobs", "", 403, "ACL token expired"},
		{"reader lists", "reader", "GET", "/v1/jobs", "", 200, `"ID":"web"`},
		{"reader reads", "reader", "GET", "/v1/job/web", "", 200, `"ID":"web"`},
		{"reader reads an alloc", "reader", "GET", "/v1/allocation/" + a1, "", 200, a1},
		{"reader cannot register", "reader", "PUT", "/v1/jobs", webJob, 403, "needs submit-job"},
		{"reader cannot stop", "reader", "DELETE", "/v1/job/web", "", 403, "Permission denied"},
		{"reader reads nodes", "reader", "GET", "/v1/nodes", "", 200, "node1"},
		{"reader no agent", "reader", "GET", "/v1/agent/self", "", 403, "needs agent:read"},
		{"reader no operator", "reader", "GET", "/v1/operator/raft/configuration", "", 403, "needs operator:read"},
		{"reader another namespace", "reader", "GET", "/v1/jobs?namespace=prod", "", 403, `in namespace "prod"`},
		{"reader no token list", "reader", "GET", "/v1/acl/tokens", "", 403, "needs management"},
		{"writer registers", "writer", "PUT", "/v1/jobs", webJob, 200, "EvalID"},
		{"writer cannot read nodes", "writer", "GET", "/v1/nodes", "", 403, "needs node:read"},
		{"writer registers into another namespace", "writer", "PUT", "/v1/jobs",
			strings.Replace(webJob, `"ID":"web"`, `"ID":"web","Namespace":"prod"`, 1), 403, `submit-job in namespace "prod"`},
		{"management reads the raft configuration", "mgmt", "GET", "/v1/operator/raft/configuration", "", 200, ""},
		{"snapshot needs management", "reader", "GET", "/v1/operator/snapshot", "", 403, "needs management"},
		{"management snapshot (this backend serves none)", "mgmt", "GET", "/v1/operator/snapshot", "", 501, ""},
		{"management lists tokens", "mgmt", "GET", "/v1/acl/tokens", "", 200, "acc-reader"},
		{"bearer header", "", "GET", "/v1/jobs", "", 403, ""},

		{"node heartbeats itself", "node1", "PUT", "/v1/internal/node/node1/heartbeat", "", 200, "HeartbeatTTL"},
		{"node heartbeats another", "node1", "PUT", "/v1/internal/node/node2/heartbeat", "", 403, "may only ask about itself"},
		{"token heartbeats a node", "mgmt", "PUT", "/v1/internal/node/node1/heartbeat", "", 403, "needs the secret of a registered client node"},
		{"anonymous heartbeat", "", "PUT", "/v1/internal/node/node1/heartbeat", "", 403, "missing node secret"},
		{"node reads its allocs index", "node1", "GET", "/v1/internal/node/node1/allocs-index", "", 200, a1},
		{"node reads another's allocs index", "node2", "GET", "/v1/internal/node/node1/allocs-index", "", 403, "Permission denied"},
		{"node gets its alloc", "node1", "PUT", "/v1/internal/allocs/get", `{"AllocIDs":["` + a1 + `"]}`, 200, a1},
		{"node gets another's alloc", "node1", "PUT", "/v1/internal/allocs/get", `{"AllocIDs":["` + a2 + `"]}`, 403, "of another node"},
		{"node updates another's alloc", "node1", "PUT", "/v1/internal/allocs/update",
			`{"Allocs":[{"ID":"` + a2 + `","ClientStatus":"failed"}]}`, 403, "of another node"},
		{"node updates its alloc", "node1", "PUT", "/v1/internal/allocs/update",
			`{"Allocs":[{"ID":"` + a1 + `","ClientStatus":"running"}]}`, 200, "Index"},
		{"node reads its allocations", "node1", "GET", "/v1/node/node1/allocations", "", 200, a1},
		{"node reads another's allocations", "node1", "GET", "/v1/node/node2/allocations", "", 403, "Permission denied"},
		{"node:read reads a node's allocations", "reader", "GET", "/v1/node/node2/allocations", "", 200, a2},
		{"node re-registers with another secret", "node2", "PUT", "/v1/internal/node/register",
			`{"Node":{"ID":"node1","Name":"x","Datacenter":"dc1","Status":"ready"}}`, 403, "registered with another node secret"},
		{"node registers without a secret", "", "PUT", "/v1/internal/node/register",
			`{"Node":{"ID":"node3","Name":"x","Datacenter":"dc1","Status":"ready"}}`, 403, "node secret"},
		{"node secret is no token", "node1", "GET", "/v1/jobs", "", 403, "ACL token not found"},
	} {
		who := tc.who
		var code int
		var body string
		if tc.name == "bearer header" {
			req, _ := http.NewRequest("GET", f.srv.URL+"/v1/jobs", nil)
			req.Header.Set("Authorization", "Bearer "+f.secrets["reader"])
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("bearer token: %d", resp.StatusCode)
			}
			continue
		}
		code, body = f.do(t, who, tc.method, tc.path, tc.body)
		if code != tc.want || !strings.Contains(body, tc.contains) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, code, strings.TrimSpace(body), tc.want, tc.contains)
		}
	}
}

func TestAnonymousPolicy(t *testing.T) {
	f := newACLFixture(t)
	if code, _ := f.do(t, "", "GET", "/v1/jobs", ""); code != 403 {
		t.Fatalf("anonymous without a policy: %d", code)
	}
	code, body := f.do(t, "mgmt", "PUT", "/v1/acl/policy/anonymous", `{"Name":"anonymous","Rules":"namespace \"default\" { policy = \"read\" }"}`)
	if code != 200 {
		t.Fatalf("anonymous policy: %d %s", code, body)
	}
	if code, body := f.do(t, "", "GET", "/v1/jobs", ""); code != 200 || !strings.Contains(body, `"web"`) {
		t.Fatalf("anonymous with a read policy: %d %s", code, body)
	}
	if code, _ := f.do(t, "", "PUT", "/v1/jobs", webJob); code != 403 {
		t.Fatalf("anonymous write with a read policy: %d", code)
	}
	// A token that is not found is refused, not taken for anonymous.
	if code, _ := f.do(t, "guessed", "GET", "/v1/jobs", ""); code != 403 {
		t.Fatalf("unknown token: %d", code)
	}
	// Anonymous reads the anonymous policy, and no other.
	if code, body := f.do(t, "", "GET", "/v1/acl/policies", ""); code != 200 || !strings.Contains(body, "anonymous") || strings.Contains(body, "readonly") {
		t.Fatalf("anonymous policy list: %d %s", code, body)
	}
	if code, _ := f.do(t, "", "GET", "/v1/acl/policy/readonly", ""); code != 403 {
		t.Fatalf("anonymous reads another policy: %d", code)
	}
}

// The expiry is checked at each request against the server's clock.
func TestTokenExpiresOnTheClock(t *testing.T) {
	f := newACLFixture(t)
	f.now = f.now.Add(-2 * time.Hour) // before the expiry
	if code, body := f.do(t, "expired", "GET", "/v1/jobs", ""); code != 200 {
		t.Fatalf("before expiry: %d %s", code, body)
	}
	f.now = f.now.Add(3 * time.Hour)
	if code, body := f.do(t, "expired", "GET", "/v1/jobs", ""); code != 403 || !strings.Contains(body, "ACL token expired") {
		t.Fatalf("after expiry: %d %s", code, body)
	}
}

func TestACLEndpoints(t *testing.T) {
	b := &fakeClientBackend{fakeBackend: newFakeBackend(), ttl: 10 * time.Second}
	srv := httptest.NewServer(New(b, nil, WithACL(ACLConfig{Enabled: true})).Handler())
	t.Cleanup(srv.Close)
	f := &aclFixture{b: b, srv: srv, secrets: map[string]string{}}

	code, body := f.do(t, "", "PUT", "/v1/acl/bootstrap", "")
	var root structs.ACLToken
	if code != 200 || json.Unmarshal([]byte(body), &root) != nil || root.SecretID == "" || root.Type != "management" || root.Name != "Bootstrap Token" {
		t.Fatalf("bootstrap: %d %s", code, body)
	}
	f.secrets["root"] = root.SecretID
	if code, body := f.do(t, "", "PUT", "/v1/acl/bootstrap", ""); code != 400 || !strings.Contains(body, "ACL bootstrap already done (reset index: ") {
		t.Fatalf("second bootstrap: %d %s", code, body)
	}
	if stored, _ := b.State().Snapshot().ACLTokenByAccessor(root.AccessorID); stored == nil || stored.SecretID != "" ||
		stored.SecretHash != structs.HashSecret(root.SecretID) {
		t.Fatalf("stored bootstrap token: %+v", stored)
	}

	for _, bad := range []struct{ path, body, want string }{
		{"/v1/acl/policy/ro", `{"Name":"ro","Rules":"namespace \"default\" {\n  policy = \"reed\"\n}"}`, `Rules: policy "ro":2:12: namespace "default".policy: "reed" is not one of`},
		{"/v1/acl/policy/ro", `{"Name":"other","Rules":"node { policy = \"read\" }"}`, "does not match request path"},
		{"/v1/acl/policy/bad%20name", `{"Rules":"node { policy = \"read\" }"}`, "invalid policy name"},
		{"/v1/acl/policy/ro", `{"Rules":""}`, "policy rules cannot be empty"},
	} {
		if code, body := f.do(t, "root", "PUT", bad.path, bad.body); code != 400 || !strings.Contains(body, bad.want) {
			t.Errorf("bad policy %s: %d %s, want %q", bad.body, code, body, bad.want)
		}
	}
	if code, body := f.do(t, "root", "PUT", "/v1/acl/policy/ro", `{"Name":"ro","Description":"read","Rules":"namespace \"default\" { policy = \"read\" }"}`); code != 200 {
		t.Fatalf("policy apply: %d %s", code, body)
	}
	code, body = f.do(t, "root", "GET", "/v1/acl/policy/ro", "")
	var pol structs.ACLPolicy
	if code != 200 || json.Unmarshal([]byte(body), &pol) != nil || pol.Description != "read" || pol.CreateIndex == 0 {
		t.Fatalf("policy info: %d %s", code, body)
	}

	for _, bad := range []struct{ body, want string }{
		{`{"Type":"client"}`, "client token missing policies"},
		{`{"Type":"client","Policies":[""]}`, `Policies[0]: empty policy name`},
		{`{"Type":"management","Policies":["ro"]}`, "cannot be associated with policies"},
		{`{"Type":"root"}`, "token type must be client or management"},
		{`{"Type":"client","Policies":["ro"],"ExpirationTTL":"-1h"}`, "must not be negative"},
		{`{"AccessorID":"x","Type":"client","Policies":["ro"]}`, "cannot be set"},
	} {
		if code, body := f.do(t, "root", "PUT", "/v1/acl/token", bad.body); code != 400 || !strings.Contains(body, bad.want) {
			t.Errorf("bad token %s: %d %s, want %q", bad.body, code, body, bad.want)
		}
	}
	code, body = f.do(t, "root", "PUT", "/v1/acl/token", `{"Name":"ci","Type":"client","Policies":["ro"],"ExpirationTTL":"1h"}`)
	var ci structs.ACLToken
	if code != 200 || json.Unmarshal([]byte(body), &ci) != nil || ci.SecretID == "" || ci.AccessorID == "" || ci.ExpirationTime == nil {
		t.Fatalf("token create: %d %s", code, body)
	}
	f.secrets["ci"] = ci.SecretID
	// The secret is answered, as Nomad's, to a management token and to
	// the token itself, never in a list; its hash never.
	for _, p := range []struct {
		who, path  string
		withSecret bool
	}{{"root", "/v1/acl/tokens", false}, {"root", "/v1/acl/token/" + ci.AccessorID, true},
		{"ci", "/v1/acl/token/self", true}, {"ci", "/v1/acl/token/" + ci.AccessorID, true}} {
		code, body := f.do(t, p.who, "GET", p.path, "")
		if code != 200 || !strings.Contains(body, ci.AccessorID) || strings.Contains(body, ci.SecretID) != p.withSecret || strings.Contains(body, structs.HashSecret(ci.SecretID)) {
			t.Errorf("%s %s: %d %s", p.who, p.path, code, body)
		}
	}
	if code, _ := f.do(t, "ci", "GET", "/v1/acl/token/"+root.AccessorID, ""); code != 403 {
		t.Errorf("client token reads another token: %d", code)
	}
	if code, _ := f.do(t, "ci", "GET", "/v1/acl/tokens", ""); code != 403 {
		t.Errorf("client token lists tokens: %d", code)
	}
	if code, body := f.do(t, "ci", "GET", "/v1/acl/policies", ""); code != 200 || !strings.Contains(body, `"ro"`) {
		t.Errorf("client token lists its policies: %d %s", code, body)
	}
	if code, _ := f.do(t, "", "GET", "/v1/acl/token/self", ""); code != 403 {
		t.Errorf("anonymous token self: %d", code)
	}

	// An update keeps the secret and cannot change the type.
	code, body = f.do(t, "root", "PUT", "/v1/acl/token/"+ci.AccessorID, `{"Name":"ci2","Type":"client","Policies":["ro"]}`)
	if code != 200 || !strings.Contains(body, `"Name":"ci2"`) || !strings.Contains(body, ci.SecretID) {
		t.Fatalf("token update: %d %s", code, body)
	}
	if code, body := f.do(t, "root", "PUT", "/v1/acl/token/"+ci.AccessorID, `{"Type":"management"}`); code != 400 || !strings.Contains(body, "cannot change") {
		t.Fatalf("type change: %d %s", code, body)
	}
	if code, _ := f.do(t, "ci", "GET", "/v1/jobs", ""); code != 200 {
		t.Fatalf("updated token: %d", code)
	}
	// Nomad's upload: a client token with the caller's IDs.
	upAcc, upSecret := structs.GenerateUUID(), structs.GenerateUUID()
	if code, body := f.do(t, "root", "PUT", "/v1/acl/token/"+upAcc, `{"SecretID":"`+upSecret+`","Type":"client","Policies":["ro"]}`); code != 200 || !strings.Contains(body, upSecret) {
		t.Fatalf("upload: %d %s", code, body)
	}
	f.secrets["up"] = upSecret
	if code, _ := f.do(t, "up", "GET", "/v1/jobs", ""); code != 200 {
		t.Fatalf("uploaded token: %d", code)
	}

	if code, body := f.do(t, "root", "DELETE", "/v1/acl/token/"+ci.AccessorID, ""); code != 200 {
		t.Fatalf("token delete: %d %s", code, body)
	}
	if code, body := f.do(t, "ci", "GET", "/v1/jobs", ""); code != 403 || !strings.Contains(body, "ACL token not found") {
		t.Fatalf("deleted token: %d %s", code, body)
	}
	if code, _ := f.do(t, "root", "DELETE", "/v1/acl/token/"+ci.AccessorID, ""); code != 404 {
		t.Fatalf("second delete: %d", code)
	}
	if code, _ := f.do(t, "root", "DELETE", "/v1/acl/policy/ro", ""); code != 200 {
		t.Fatalf("policy delete: %d", code)
	}
	// A token naming a deleted policy grants nothing.
	if code, _ := f.do(t, "up", "GET", "/v1/jobs", ""); code != 403 {
		t.Fatalf("token of a deleted policy: %d", code)
	}
}

// With ACLs off nothing is checked, and the ACL endpoints say so.
func TestACLDisabled(t *testing.T) {
	_, srv := newTestAPI(t)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/acl/bootstrap", ""); code != 400 || !strings.Contains(body, "ACL support disabled") {
		t.Fatalf("bootstrap without ACLs: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/acl/tokens", ""); code != 400 || !strings.Contains(body, "ACL support disabled") {
		t.Fatalf("tokens without ACLs: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", webJob); code != 200 {
		t.Fatalf("anonymous register without ACLs: %d %s", code, body)
	}
}

// A follower forwards with the token, and the leader checks it.
func TestForwardedRequestsKeepTheToken(t *testing.T) {
	leader := newACLFixture(t)
	fb := newFakeBackend()
	fb.leader = false
	fb.leaderHTTP = strings.TrimPrefix(leader.srv.URL, "http://")
	follower := httptest.NewServer(New(fb, nil, WithACL(ACLConfig{Enabled: true})).Handler())
	t.Cleanup(follower.Close)
	via := &aclFixture{srv: follower, secrets: leader.secrets}
	if code, body := via.do(t, "writer", "PUT", "/v1/jobs", webJob); code != 200 {
		t.Fatalf("write through a follower: %d %s", code, body)
	}
	if code, body := via.do(t, "reader", "PUT", "/v1/jobs", webJob); code != 403 || !strings.Contains(body, "Permission denied") {
		t.Fatalf("read-only write through a follower: %d %s", code, body)
	}
	// The follower's own state knows neither the token nor the node; a
	// client's stale read with its node secret goes to the leader.
	if code, body := via.do(t, "node1", "GET", "/v1/internal/node/node1/allocs-index?stale", ""); code != 200 {
		t.Fatalf("stale client read of a node the follower does not know: %d %s", code, body)
	}
}

// The resolve endpoint tells a client agent what a token grants.
func TestACLResolveForClients(t *testing.T) {
	f := newACLFixture(t)
	for _, tc := range []struct {
		secret     string
		found, mgr bool
		policies   int
	}{
		{f.secrets["reader"], true, false, 1}, {f.secrets["mgmt"], true, true, 0},
		{f.secrets["expired"], false, false, 0}, {"nope", false, false, 0}, {"", true, false, 0},
	} {
		code, body := f.do(t, "node1", "PUT", "/v1/internal/acl/resolve", `{"SecretID":"`+tc.secret+`"}`)
		var out structs.ACLResolveResponse
		if code != 200 || json.Unmarshal([]byte(body), &out) != nil || out.Found != tc.found || out.Management != tc.mgr || len(out.Policies) != tc.policies {
			t.Errorf("resolve %q: %d %s", tc.secret, code, body)
		}
	}
	if code, _ := f.do(t, "reader", "PUT", "/v1/internal/acl/resolve", `{"SecretID":""}`); code != 403 {
		t.Errorf("resolve with a token instead of a node secret: %d", code)
	}
}

func TestWriteRateLimit(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	b := &fakeClientBackend{fakeBackend: newFakeBackend(), ttl: time.Second}
	s := New(b, nil, WithClock(clock), WithWriteLimit(WriteLimit{Rate: 1, Burst: 3}))
	send := func(method, path, body, remote string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.RemoteAddr = remote
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	const a, other = "192.0.2.1:1000", "192.0.2.2:1000"
	for i := range 3 {
		if rec := send("PUT", "/v1/jobs", webJob, a); rec.Code != 200 {
			t.Fatalf("write %d of the burst: %d %s", i, rec.Code, rec.Body.String())
		}
	}
	rec := send("PUT", "/v1/jobs", webJob, a)
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "1" || !strings.Contains(rec.Body.String(), "too many writes from 192.0.2.1") {
		t.Fatalf("over the burst: %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
	}
	if rec := send("GET", "/v1/jobs", "", a); rec.Code != 200 {
		t.Fatalf("a read over the write limit: %d", rec.Code)
	}
	if rec := send("PUT", "/v1/jobs", webJob, other); rec.Code != 200 {
		t.Fatalf("another address: %d", rec.Code)
	}
	// Client routes are not counted (ACLs off: every client).
	for range 10 {
		if rec := send("PUT", "/v1/internal/node/register", nodeBody, a); rec.Code != 200 {
			t.Fatalf("client register over the write limit: %d %s", rec.Code, rec.Body.String())
		}
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if rec := send("PUT", "/v1/jobs", webJob, a); rec.Code != 200 {
		t.Fatalf("a second later: %d", rec.Code)
	}
	if rec := send("PUT", "/v1/jobs", webJob, a); rec.Code != 429 {
		t.Fatalf("the refill is one a second: %d", rec.Code)
	}
}

// With ACLs on, a registered node's client writes are not counted; a
// stranger's registrations are.
func TestWriteRateLimitSparesAuthenticatedNodes(t *testing.T) {
	b := &fakeClientBackend{fakeBackend: newFakeBackend(), ttl: time.Second}
	s := New(b, nil, WithACL(ACLConfig{Enabled: true}), WithWriteLimit(WriteLimit{Rate: 0.001, Burst: 2}))
	send := func(path, body, secret string) int {
		req := httptest.NewRequest("PUT", path, strings.NewReader(body))
		req.RemoteAddr = "192.0.2.1:1000"
		req.Header.Set(TokenHeader, secret)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec.Code
	}
	if code := send("/v1/internal/node/register", nodeBody, "s1"); code != 200 {
		t.Fatalf("register: %d", code)
	}
	for range 5 {
		if code := send("/v1/internal/node/n-1/heartbeat", "", "s1"); code != 200 {
			t.Fatalf("heartbeat of a registered node: %d", code)
		}
	}
	send("/v1/internal/node/register", strings.Replace(nodeBody, "n-1", "n-2", 1), "s2")
	if code := send("/v1/internal/node/register", strings.Replace(nodeBody, "n-1", "n-3", 1), "s3"); code != 429 {
		t.Fatalf("a stranger's third registration: %d", code)
	}
}

// No request logs its token: a panic, a failed forward and refusals are
// logged (the log is not empty), and the secrets they carried are not in
// it.
func TestSecretsAreNotLogged(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Trace, Output: writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	})})
	const secret = "5ec12e7a-0000-4000-8000-00000000beef"
	fb := newFakeBackend()
	fb.leader = false
	fb.leaderHTTP = "127.0.0.1:1" // nobody: forwarding fails, and is logged
	s := New(fb, logger, WithACL(ACLConfig{Enabled: true}))
	rt := route{"GET /v1/test/panic", localRoute, public, func(*Server, http.ResponseWriter, *http.Request) (any, error) {
		panic("boom")
	}}
	s.mux.Handle(rt.pattern, s.wrap(rt))
	for _, r := range []*http.Request{
		httptest.NewRequest("GET", "/v1/test/panic", nil),
		httptest.NewRequest("PUT", "/v1/jobs", strings.NewReader(webJob)),
		httptest.NewRequest("GET", "/v1/jobs?stale", nil),
		httptest.NewRequest("POST", "/v1/internal/join", strings.NewReader(joinBody)),
		httptest.NewRequest("PUT", "/v1/acl/token", strings.NewReader(`{"Type":"client","Policies":["x"]}`)),
	} {
		r.Header.Set(TokenHeader, secret)
		r.Header.Set("Authorization", "Bearer "+secret)
		s.Handler().ServeHTTP(httptest.NewRecorder(), r)
	}
	mu.Lock()
	defer mu.Unlock()
	if logs.Len() == 0 || !strings.Contains(logs.String(), "panic") || !strings.Contains(logs.String(), "forwarding") {
		t.Fatalf("the log lacks what the requests should have logged: %q", logs.String())
	}
	if strings.Contains(logs.String(), secret) || strings.Contains(logs.String(), structs.HashSecret(secret)) {
		t.Fatalf("a secret was logged:\n%s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The other servers' autopilot reads /v1/agent/self signed with the join
// token; nothing else is let in on a server's signature.
func TestServersProbeAgentSelfWithTheJoinToken(t *testing.T) {
	b := newFakeBackend()
	s := New(b, nil, WithACL(ACLConfig{Enabled: true}), WithAccess(Access{JoinToken: "jt"}))
	send := func(method, path string, h http.Header) int {
		r := httptest.NewRequest(method, path, nil)
		for k, v := range h {
			r.Header[k] = v
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, r)
		return rec.Code
	}
	sig := func(token, method, uri string) http.Header {
		return http.Header{joinauth.ForwardHeader: {joinauth.SignForward(token, time.Now().Unix(), method, uri)}}
	}
	for _, tc := range []struct {
		name         string
		method, path string
		h            http.Header
		want         int
	}{
		{"anonymous", "GET", "/v1/agent/self", nil, 403},
		{"signed probe", "GET", "/v1/agent/self", sig("jt", "GET", "/v1/agent/self"), 200},
		{"wrong join token", "GET", "/v1/agent/self", sig("other", "GET", "/v1/agent/self"), 403},
		{"signature of another path", "GET", "/v1/agent/self", sig("jt", "GET", "/v1/jobs"), 403},
		{"signed, marked forwarded", "GET", "/v1/agent/self", func() http.Header {
			h := sig("jt", "GET", "/v1/agent/self")
			h.Set(ForwardedHeader, "1")
			return h
		}(), 403},
		{"a signature opens nothing else", "GET", "/v1/jobs", sig("jt", "GET", "/v1/jobs"), 403},
		{"nor the raft configuration", "GET", "/v1/operator/raft/configuration", sig("jt", "GET", "/v1/operator/raft/configuration"), 403},
	} {
		if got := send(tc.method, tc.path, tc.h); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
