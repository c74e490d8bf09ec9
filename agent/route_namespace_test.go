package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/structs"
)

// nsFixture is a server agent with ACLs on and a job "web" in each of the
// namespaces default, dev and prod; prod's also has a running deployment,
// an allocation and an evaluation. Its "dev" token may write in dev only:
// namespace "dev" { policy = "write" }, namespace "default" { policy =
// "deny" }.
type nsFixture struct {
	a        *Agent
	base     string
	mgmt     string
	dev      string
	devAcc   string
	depID    string
	allocID  string
	evalID   string
	httpc    *http.Client
	lastCode int
}

func newNSFixture(t *testing.T) *nsFixture {
	t.Helper()
	cfg := testConfig(t, "s1", 1)
	cfg.ACLEnabled = true
	a := startAgentWith(t, cfg)
	f := &nsFixture{a: a, base: "http://" + a.HTTPAddr(), httpc: &http.Client{Timeout: 20 * time.Second}}
	var boot structs.ACLToken
	waitFor(t, "ACL bootstrap", func() error {
		code, body := f.send(t, "", "POST", "/v1/acl/bootstrap", nil)
		if code != 200 {
			return fmt.Errorf("%d %s", code, body)
		}
		return json.Unmarshal([]byte(body), &boot)
	})
	f.mgmt = boot.SecretID
	f.must(t, "PUT", "/v1/acl/policy/devonly", map[string]any{"Name": "devonly",
		"Rules": `namespace "dev" { policy = "write" }` + "\n" + `namespace "default" { policy = "deny" }`})
	var tok structs.ACLToken
	if err := json.Unmarshal([]byte(f.must(t, "PUT", "/v1/acl/token", map[string]any{"Name": "dev", "Type": "client",
		"Policies": []string{"devonly"}})), &tok); err != nil {
		t.Fatal(err)
	}
	f.dev, f.devAcc = tok.SecretID, tok.AccessorID
	for _, ns := range []string{"dev", "prod"} {
		f.must(t, "PUT", "/v1/namespace", map[string]any{"Name": ns})
	}
	for _, ns := range []string{"default", "dev", "prod"} {
		f.must(t, "PUT", "/v1/jobs", map[string]any{"Job": nsJob(ns)})
	}
	// prod's job gets a deployment, an allocation and an evaluation of its
	// own, as the servers would have made them.
	snap := a.State().Snapshot()
	job, err := snap.JobByID("prod", "web")
	if err != nil || job == nil {
		t.Fatalf("prod's job: %v %v", job, err)
	}
	f.depID, f.allocID, f.evalID = structs.GenerateUUID(), structs.GenerateUUID(), structs.GenerateUUID()
	dep := &structs.Deployment{ID: f.depID, Namespace: "prod", JobID: "web", JobVersion: job.Version,
		JobCreateIndex: job.CreateIndex, JobModifyIndex: job.ModifyIndex, Status: structs.DeploymentStatusRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 2, DesiredCanaries: 1}}}
	apply := func(mt fsm.MessageType, req any) {
		t.Helper()
		if _, _, err := a.Cluster().Apply(context.Background(), mt, req); err != nil {
			t.Fatal(err)
		}
	}
	apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{Job: job, Deployment: dep,
		AllocsPlaced: []*structs.Allocation{{ID: f.allocID, Namespace: "prod", JobID: "web", TaskGroup: "web",
			NodeID: "node-1", Name: "web.web[0]", DeploymentID: f.depID, DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusRunning, DeploymentStatus: &structs.AllocDeploymentStatus{Canary: true}}}})
	apply(fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{{ID: f.evalID,
		Namespace: "prod", JobID: "web", Status: structs.EvalStatusComplete, Type: job.Type, Priority: job.Priority}}})
	return f
}

func nsJob(ns string) map[string]any {
	return map[string]any{
		"ID": "web", "Name": "web", "Namespace": ns, "Type": "service", "Datacenters": []string{"dc1"},
		"TaskGroups": []any{map[string]any{"Name": "web", "Count": 2,
			"Tasks": []any{map[string]any{"Name": "app", "Driver": "raw_exec",
				"Config": map[string]any{"command": "/bin/sleep", "args": []string{"60"}}}}}},
	}
}

// send makes a request with secret ("" for none) and returns the status
// and the body.
func (f *nsFixture) send(t *testing.T, secret, method, path string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, f.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("X-Nomad-Token", secret)
	}
	resp, err := f.httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (f *nsFixture) must(t *testing.T, method, path string, body any) string {
	t.Helper()
	code, out := f.send(t, f.mgmt, method, path, body)
	if code != 200 {
		t.Fatalf("%s %s: %d %s", method, path, code, out)
	}
	return out
}

// dump is the whole replicated state, to compare before and after.
func (f *nsFixture) dump(t *testing.T) string {
	t.Helper()
	b, err := f.a.State().Snapshot().Dump()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// settle waits until the leader has nothing left to write (the
// registrations' evaluations) and returns the state.
func (f *nsFixture) settle(t *testing.T) string {
	t.Helper()
	prev := f.dump(t)
	stable := 0
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		cur := f.dump(t)
		if cur == prev {
			if stable++; stable == 5 {
				return cur
			}
			continue
		}
		prev, stable = cur, 0
	}
	t.Fatal("the state never settled")
	return ""
}

// attackBodies are the bodies each write route is tried with: what the
// job, scaling, version and deployment routes read.
func (f *nsFixture) attackBodies() []map[string]any {
	return []map[string]any{
		{"Job": nsJob("")},
		{"Count": 0, "Target": map[string]any{"Group": "web", "Job": "web"}},
		{"JobID": "web", "JobVersion": 0, "Stable": false},
		{"DeploymentID": f.depID, "All": true, "HealthyAllocationIDs": []string{f.allocID}},
		{},
	}
}

// spelling is one way of naming another namespace: a query, and what the
// body's Namespace keys say (set where the body has the object; "" leaves
// them out).
type spelling struct {
	name, query, body string
	// lower spells the body's keys "namespace", "job", "target".
	lower bool
}

var spellings = []spelling{
	{name: "none (default)"},
	{name: "query prod", query: "prod"},
	{name: "query default", query: "default"},
	{name: "query *", query: "*"},
	{name: "body prod", body: "prod"},
	{name: "body prod, lower-case keys", body: "prod", lower: true},
	{name: "body *", body: "*"},
	{name: "query dev, body prod", query: "dev", body: "prod"},
	{name: "query dev, body prod, lower-case keys", query: "dev", body: "prod", lower: true},
	{name: "query prod, body dev", query: "prod", body: "dev"},
	{name: "query dev, body default", query: "dev", body: "default"},
}

// spell returns body with its namespaces named as sp says.
func spell(body map[string]any, sp spelling) map[string]any {
	out := map[string]any{}
	key := func(k string) string {
		if sp.lower {
			return strings.ToLower(k)
		}
		return k
	}
	for k, v := range body {
		obj, isObj := v.(map[string]any)
		if !isObj || (k != "Job" && k != "Target") {
			out[k] = v
			continue
		}
		c := map[string]any{}
		for ik, iv := range obj {
			if ik != "Namespace" {
				c[ik] = iv
			}
		}
		if sp.body != "" {
			c[key("Namespace")] = sp.body
		}
		out[key(k)] = c
	}
	if sp.body != "" {
		out[key("Namespace")] = sp.body
	}
	return out
}

// pathFor fills a route's pattern with the IDs of prod's objects.
func (f *nsFixture) pathFor(pattern string) string {
	_, path, _ := strings.Cut(pattern, " ")
	id := "web"
	switch {
	case strings.HasPrefix(path, "/v1/deployment/"):
		id = f.depID
	case strings.HasPrefix(path, "/v1/allocation/"), strings.HasPrefix(path, "/v1/client/allocation/"):
		id = f.allocID
	case strings.HasPrefix(path, "/v1/evaluation/"):
		id = f.evalID
	case strings.HasPrefix(path, "/v1/node/"), strings.HasPrefix(path, "/v1/internal/node/"):
		id = "node-1"
	}
	r := strings.NewReplacer("{path...}", "app/secret", "{id}", id, "{alloc_id}", f.allocID, "{name}", "devonly", "{accessor}", f.devAcc)
	return r.Replace(path)
}

// clientWrites are the client endpoints that change an allocation,
// served by the agent beside the API's routes (logs.go).
var clientWrites = []string{
	"PUT /v1/client/allocation/{alloc_id}/restart", "POST /v1/client/allocation/{alloc_id}/restart",
	"PUT /v1/client/allocation/{alloc_id}/signal", "POST /v1/client/allocation/{alloc_id}/signal",
}

// Every route that writes, tried with a token limited to namespace dev in
// every spelling of another namespace (the query, the body's Namespace,
// Job.Namespace and Target.Namespace in either case, "*", and mixes of
// them), is refused with 400 or 403 (404 where the path's object is not
// the route's kind) and changes nothing in the state. The route table is
// walked, so a route added later is tried too.
func TestEveryWriteRouteRefusesOtherNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and tries every write route")
	}
	f := newNSFixture(t)
	before := f.settle(t)

	attack := func(secret, pattern string, sp spelling, body map[string]any) (int, string) {
		method, _, _ := strings.Cut(pattern, " ")
		path := f.pathFor(pattern)
		if sp.query != "" {
			path += "?namespace=" + sp.query
		}
		var b any
		if method != "GET" {
			b = spell(body, sp)
		}
		return f.send(t, secret, method, path, b)
	}

	// Every route that is not a GET is tried; those the table serves as
	// writes (and the client's writes) must refuse, the others (search,
	// validate, parse: reads with a body) may answer, and none may change
	// the state.
	var writes []string
	mustRefuse := map[string]bool{}
	for _, rt := range httpapi.Routes() {
		method, _, _ := strings.Cut(rt.Pattern, " ")
		if rt.Writes || method != "GET" {
			writes = append(writes, rt.Pattern)
			mustRefuse[rt.Pattern] = rt.Writes
		}
	}
	for _, p := range clientWrites {
		writes = append(writes, p)
		mustRefuse[p] = true
	}
	sort.Strings(writes)
	if len(writes) < 40 {
		t.Fatalf("only %d write routes: the table was not walked", len(writes))
	}
	// A token's own one-time token is a write any token may make, in no
	// namespace (Nomad's): it changes the state by design, and httpapi's
	// tests check that it is bound to its caller.
	ownToken := map[string]bool{"PUT /v1/acl/token/onetime": true, "POST /v1/acl/token/onetime": true}
	tried := 0
	for _, pattern := range writes {
		if ownToken[pattern] {
			continue
		}
		for _, sp := range spellings {
			for bi, body := range f.attackBodies() {
				tried++
				code, out := attack(f.dev, pattern, sp, body)
				if mustRefuse[pattern] && code != 400 && code != 403 && code != 404 {
					t.Errorf("%s, %s, body %d: %d %s", pattern, sp.name, bi, code, strings.TrimSpace(out))
				}
				if after := f.dump(t); after != before {
					t.Fatalf("%s, %s, body %d (answered %d %s) changed the state:\n%s", pattern, sp.name, bi, code,
						strings.TrimSpace(out), stateDiff(before, after))
				}
			}
		}
	}
	t.Logf("%d write routes, %d requests: all refused, the state unchanged", len(writes), tried)

	// The same harness sees a write that is allowed: management scales
	// prod's job.
	if code, out := attack(f.mgmt, "POST /v1/job/{id}/scale", spelling{query: "prod"}, f.attackBodies()[1]); code != 200 {
		t.Fatalf("management's scale of prod: %d %s", code, out)
	}
	if f.dump(t) == before {
		t.Fatal("management's scale of prod changed nothing the harness sees")
	}
}

// stateDiff names the tables whose objects differ.
func stateDiff(before, after string) string {
	type table struct {
		Table   string
		Objects []json.RawMessage
	}
	var b, a []table
	_ = json.Unmarshal([]byte(before), &b)
	_ = json.Unmarshal([]byte(after), &a)
	var out []string
	for i := range a {
		if i >= len(b) || !equalRaw(b[i].Objects, a[i].Objects) {
			out = append(out, fmt.Sprintf("table %s: %d objects before, now %d", a[i].Table, lenOf(b, i), len(a[i].Objects)))
		}
	}
	return strings.Join(out, "\n")
}

func lenOf[T any](ts []T, i int) int {
	if i >= len(ts) {
		return 0
	}
	v := any(ts[i])
	b, _ := json.Marshal(v)
	var x struct{ Objects []json.RawMessage }
	_ = json.Unmarshal(b, &x)
	return len(x.Objects)
}

func equalRaw(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
