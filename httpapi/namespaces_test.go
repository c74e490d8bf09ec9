package httpapi

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// TestNamespaceEndpoints: namespaces are stored objects, as Nomad's:
// default always exists; a job or a variable in a namespace that does not
// exist is refused until the namespace is applied; an apply stores the
// description, meta and capabilities, which the capabilities enforce on
// registration; default, an absent namespace and one holding jobs cannot
// be deleted.
func TestNamespaceEndpoints(t *testing.T) {
	_, srv := newTestAPI(t)
	job := strings.Replace(webJob, `"ID":"web"`, `"ID":"web","Namespace":"dev"`, 1)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs?namespace=dev", job); code != 400 || !strings.Contains(body, `job "web" is in nonexistent namespace "dev"`) {
		t.Fatalf("register in a missing namespace: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/var/app?namespace=dev", `{"Items":{"a":"1"}}`); code != 400 || !strings.Contains(body, `variable "app" is in nonexistent namespace "dev"`) {
		t.Fatalf("variable in a missing namespace: %d %s", code, body)
	}
	code, body, hdr := do(t, "PUT", srv.URL+"/v1/namespace", `{"Name":"dev","Description":"Development","Meta":{"team":"a"},
		"Capabilities":{"DisabledTaskDrivers":["docker"],"EnabledNetworkModes":["host"]},
		"NodePoolConfiguration":{"Default":"default","Allowed":["default","gpu-*"]}}`)
	if code != 200 || hdr.Get("X-Nomad-Index") == "" || hdr.Get("X-Nomad-Index") == "0" {
		t.Fatalf("apply: %d %s %v", code, body, hdr)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs?namespace=dev", job); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	docker := strings.Replace(job, `"Driver":"raw_exec","Config":{"command":"/bin/true"}`, `"Driver":"docker","Config":{"image":"busybox"}`, 1)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs?namespace=dev", docker); code != 400 || !strings.Contains(body, `used task driver "docker" is not allowed in namespace "dev"`) {
		t.Errorf("disabled driver: %d %s", code, body)
	}
	bridge := strings.Replace(job, `"Tasks":`, `"Networks":[{"Mode":"bridge"}],"Tasks":`, 1)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs?namespace=dev", bridge); code != 400 || !strings.Contains(body, `used group network mode "bridge" is not allowed in namespace "dev"`) {
		t.Errorf("network mode not enabled: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/namespaces", "")
	if code != 200 || !strings.Contains(body, `"Name":"default","Description":"Default shared namespace"`) || !strings.Contains(body, `"Name":"dev","Description":"Development"`) {
		t.Fatalf("list: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/namespaces?prefix=dev", ""); code != 200 || !strings.Contains(body, `"Name":"dev"`) || strings.Contains(body, `"Name":"default"`) {
		t.Errorf("prefix: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/namespace/dev", "")
	if code != 200 || !strings.Contains(body, `"Meta":{"team":"a"}`) || !strings.Contains(body, `"DisabledTaskDrivers":["docker"]`) ||
		!strings.Contains(body, `"Allowed":["default","gpu-*"]`) || !strings.Contains(body, `"Hash":"`) {
		t.Errorf("info: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/namespace/nope", ""); code != 404 || !strings.Contains(body, "Namespace not found") {
		t.Errorf("unknown: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/namespace/qa", `{"Name":"other"}`); code != 400 || !strings.Contains(body, "Namespace name does not match request path") {
		t.Errorf("path and body disagree: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/namespace/qa", `{"Name":"qa"}`); code != 200 {
		t.Errorf("apply by path: %d %s", code, body)
	}
	for _, bad := range []struct{ body, want string }{
		{`{"Name":"a b"}`, `invalid name "a b". Must match regex`},
		{`{"Name":"*"}`, `invalid name "*".`},
		{`{"Name":"x","Description":"` + strings.Repeat("d", 257) + `"}`, "description longer than 256"},
		{`{"Name":"x","NodePoolConfiguration":{"Allowed":["a"],"Denied":["b"]}}`, "mutually exclusive"},
		{`{"Name":`, "malformed request body"},
	} {
		if code, body, _ := do(t, "PUT", srv.URL+"/v1/namespace", bad.body); code != 400 || !strings.Contains(body, bad.want) {
			t.Errorf("apply %.40s: %d %s", bad.body, code, body)
		}
	}
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/namespace/default", ""); code != 400 || !strings.Contains(body, "can not delete default namespace") {
		t.Errorf("delete default: %d %s", code, body)
	}
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/namespace/dev", ""); code != 400 || !strings.Contains(body, `namespace "dev" has non-terminal jobs in regions: [global]`) {
		t.Errorf("delete dev: %d %s", code, body)
	}
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/namespace/nope", ""); code != 404 || !strings.Contains(body, "namespace not found") {
		t.Errorf("delete unknown: %d %s", code, body)
	}
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/namespace/qa", ""); code != 200 {
		t.Errorf("delete qa: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/namespace/qa", ""); code != 404 {
		t.Errorf("deleted qa: %d %s", code, body)
	}
}

// TestJobSubmissions: a registration's Submission is kept per version and
// read back by version in its namespace; one too large is discarded with
// Nomad's warning. (A purge deletes them: state's
// TestJobSubmissionsKeptPerVersion.)
func TestJobSubmissions(t *testing.T) {
	_, srv := newTestAPI(t)
	if code, body, _ := do(t, "GET", srv.URL+"/v1/job/web/submission?version=0", ""); code != 404 || !strings.Contains(body, "job source not found") {
		t.Fatalf("before: %d %s", code, body)
	}
	withSub := func(job, src string) string {
		return strings.TrimSuffix(job, "}") + `,"Submission":{"Source":"` + src + `","Format":"hcl2","VariableFlags":{"X":"1"},"Variables":"v"}}`
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", withSub(webJob, "v0")); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	v1 := strings.Replace(webJob, `"Count":1`, `"Count":2`, 1)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", withSub(v1, "v1")); code != 200 {
		t.Fatalf("register v1: %d %s", code, body)
	}
	for v, src := range []string{"v0", "v1"} {
		code, body, _ := do(t, "GET", srv.URL+"/v1/job/web/submission?version="+strconv.Itoa(v), "")
		if code != 200 || body != `{"Source":"`+src+`","Format":"hcl2","VariableFlags":{"X":"1"},"Variables":"v"}`+"\n" {
			t.Errorf("version %d: %d %q", v, code, body)
		}
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/job/web/submission?version=x", ""); code != 400 || !strings.Contains(body, "Unable to parse job submission version parameter") {
		t.Errorf("bad version: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/job/web/submission?version=0&namespace=other", ""); code != 404 {
		t.Errorf("other namespace: %d %s", code, body)
	}
	big := strings.TrimSuffix(webJob, "}") + `,"Submission":{"Source":"` + strings.Repeat("x", 1_000_001) + `","Format":"hcl2"}}`
	big = strings.Replace(big, `"Count":1`, `"Count":3`, 1)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", big); code != 200 || !strings.Contains(body, "job source size of 1.0 MB exceeds maximum of 1.0 MB and will be discarded") {
		t.Errorf("too large: %d %.300s", code, body)
	}
	if code, _, _ := do(t, "GET", srv.URL+"/v1/job/web/submission?version=2", ""); code != 404 {
		t.Errorf("discarded source kept: %d", code)
	}
}

// TestNodePoolAndSystemEndpoints: the two built-in pools are listed and
// read, GET /v1/node/pool/{name} routed beside GET /v1/node/{id}/…;
// writes to the built-in pools are refused; the scheduler configuration is
// drover's, and only it is accepted back.
func TestNodePoolAndSystemEndpoints(t *testing.T) {
	_, srv := newTestAPI(t)
	if code, body, _ := do(t, "GET", srv.URL+"/v1/node/pools", ""); code != 200 || !strings.Contains(body, `"Name":"all"`) || !strings.Contains(body, `"Name":"default"`) {
		t.Errorf("pools: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/node/pool/default", ""); code != 200 || !strings.Contains(body, `"Description":"Default node pool."`) {
		t.Errorf("pool: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/node/pool/gpu", ""); code != 404 {
		t.Errorf("unknown pool: %d %s", code, body)
	}
	for _, p := range []string{"/v1/node/pool/all/nodes", "/v1/node/pool/default/jobs?namespace=*"} {
		if code, body, _ := do(t, "GET", srv.URL+p, ""); code != 200 || !strings.HasPrefix(body, "[") {
			t.Errorf("%s: %d %s", p, code, body)
		}
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/node/pools", `{"Name":"default"}`); code != 400 || !strings.Contains(body, `modifying node pool "default" is not allowed`) {
		t.Errorf("apply: %d %s", code, body)
	}
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/node/pool/default", ""); code != 400 || !strings.Contains(body, `deleting node pool "default" is not allowed`) {
		t.Errorf("delete default: %d %s", code, body)
	}
	code, body, _ := do(t, "GET", srv.URL+"/v1/operator/scheduler/configuration", "")
	if code != 200 || !strings.Contains(body, `"SchedulerAlgorithm":"binpack"`) {
		t.Fatalf("scheduler config: %d %s", code, body)
	}
	same := `{"SchedulerAlgorithm":"binpack","MemoryOversubscriptionEnabled":true,"PreemptionConfig":{"SystemSchedulerEnabled":false},"SomethingNew":false}`
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/operator/scheduler/configuration", same); code != 200 || !strings.Contains(body, `"Updated":true`) {
		t.Errorf("set the same: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/operator/scheduler/configuration", `{"SchedulerAlgorithm":"spread"}`); code != 200 || !strings.Contains(body, `"Updated":true`) {
		t.Errorf("set spread: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/operator/scheduler/configuration", `{"SchedulerAlgorithm":"fastest"}`); code != 400 || !strings.Contains(body, "invalid scheduler algorithm: fastest") {
		t.Errorf("set an unknown algorithm: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/system/reconcile/summaries", ""); code != 200 {
		t.Errorf("reconcile: %d %s", code, body)
	}
}

// TestNamespacesACL: with ACLs, the list and a read show the namespaces
// the token has any capability in (a glob rule included); applying and
// deleting need a management token.
func TestNamespacesACL(t *testing.T) {
	f := newACLFixture(t)
	for _, ns := range []string{"dev", "prod", "team-a", "team-b"} {
		if code, body := f.do(t, "mgmt", "PUT", "/v1/namespace", `{"Name":"`+ns+`"}`); code != 200 {
			t.Fatalf("apply %s: %d %s", ns, code, body)
		}
	}
	if _, _, err := f.b.Apply(t.Context(), fsm.ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "teams", Rules: `namespace "team-*" { policy = "read" }` + "\n" + `namespace "dev" { capabilities = ["list-jobs"] }`},
	}}); err != nil {
		t.Fatal(err)
	}
	secret := structs.GenerateUUID()
	f.secrets["teams"] = secret
	if _, _, err := f.b.Apply(t.Context(), fsm.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{{
		AccessorID: "acc-teams", SecretHash: structs.HashSecret(secret), Name: "teams", Type: structs.ACLTokenTypeClient, Policies: []string{"teams"},
	}}}); err != nil {
		t.Fatal(err)
	}
	names := func(who string) string {
		t.Helper()
		code, body := f.do(t, who, "GET", "/v1/namespaces", "")
		if code != 200 {
			t.Fatalf("%s list: %d %s", who, code, body)
		}
		var list []*structs.Namespace
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range list {
			out = append(out, n.Name)
		}
		return strings.Join(out, ",")
	}
	for who, want := range map[string]string{
		"mgmt": "default,dev,prod,team-a,team-b", "teams": "dev,team-a,team-b", "reader": "default", "": "",
	} {
		if got := names(who); got != want {
			t.Errorf("%q lists %q, want %q", who, got, want)
		}
	}
	for _, c := range []struct {
		who, method, path, body string
		want                    int
	}{
		{"teams", "GET", "/v1/namespace/team-a", "", 200},
		{"teams", "GET", "/v1/namespace/prod", "", 403},
		{"mgmt", "GET", "/v1/namespace/prod", "", 200},
		{"teams", "PUT", "/v1/namespace", `{"Name":"team-c"}`, 403},
		{"writer", "DELETE", "/v1/namespace/prod", "", 403},
		{"mgmt", "DELETE", "/v1/namespace/prod", "", 200},
	} {
		if code, body := f.do(t, c.who, c.method, c.path, c.body); code != c.want {
			t.Errorf("%s %s %s: %d %s, want %d", c.who, c.method, c.path, code, body, c.want)
		}
	}
}

// TestNamespaceListBlocks: a blocking list returns when a namespace is
// applied after its index.
func TestNamespaceListBlocks(t *testing.T) {
	_, srv := newTestAPI(t)
	_, _, hdr := do(t, "PUT", srv.URL+"/v1/namespace", `{"Name":"a"}`)
	idx := hdr.Get("X-Nomad-Index")
	done := make(chan string, 1)
	go func() {
		_, body, _ := do(t, "GET", srv.URL+"/v1/namespaces?index="+idx+"&wait=5s", "")
		done <- body
	}()
	time.Sleep(50 * time.Millisecond)
	do(t, "PUT", srv.URL+"/v1/namespace", `{"Name":"b"}`)
	select {
	case body := <-done:
		if !strings.Contains(body, `"Name":"b"`) {
			t.Fatalf("woke without b: %s", body)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("the blocking list did not wake")
	}
}
