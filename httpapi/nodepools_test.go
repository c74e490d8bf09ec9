package httpapi

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// TestNodePoolEndpoints: Nomad's node pool endpoints, their shapes and
// their errors.
func TestNodePoolEndpoints(t *testing.T) {
	b, srv := newTestAPI(t)
	want := func(method, path, body string, code int, texts ...string) string {
		t.Helper()
		got, out, _ := do(t, method, srv.URL+path, body)
		if got != code {
			t.Fatalf("%s %s: %d %s, want %d", method, path, got, out, code)
		}
		for _, s := range texts {
			if !strings.Contains(out, s) {
				t.Fatalf("%s %s: %q lacks %q", method, path, out, s)
			}
		}
		return out
	}
	want("PUT", "/v1/node/pools", `{"Name":"dev-1","NodeIdentityTTL":"720h","Meta":{"a":"b"},"SchedulerConfiguration":{"SchedulerAlgorithm":"spread","MemoryOversubscriptionEnabled":true}}`, 200)
	var p structs.NodePool
	if err := json.Unmarshal([]byte(want("GET", "/v1/node/pool/dev-1", "", 200)), &p); err != nil {
		t.Fatal(err)
	}
	if p.NodeIdentityTTL.String() != "720h0m0s" || p.Meta["a"] != "b" || p.SchedulerConfiguration.SchedulerAlgorithm != "spread" || p.CreateIndex == 0 {
		t.Fatalf("dev-1: %+v", p)
	}
	want("POST", "/v1/node/pool/dev-1", `{"Name":"dev-1","Description":"test"}`, 200)
	want("GET", "/v1/node/pool/dev-1", "", 200, `"Description":"test"`, `"NodeIdentityTTL":86400000000000`)
	want("PUT", "/v1/node/pool/dev-2", `{"Name":"dev-1"}`, 400, "Node pool name does not match request path")
	want("PUT", "/v1/node/pools", `{}`, 400, "missing node pool name")
	want("PUT", "/v1/node/pools", ``, 400, "missing node pool")
	want("PUT", "/v1/node/pools", `{"Name":"a b"}`, 400, `invalid node pool "a b": invalid name "a b"`)
	want("PUT", "/v1/node/pools", `{"Name":"x","Description":"`+strings.Repeat("d", 300)+`"}`, 400, "description longer than 256")
	want("PUT", "/v1/node/pools", `{"Name":"x","NodeIdentityTTL":"soon"}`, 400, "NodeIdentityTTL")
	want("PUT", "/v1/node/pools", `{"Name":"all"}`, 400, `modifying node pool "all" is not allowed`)
	want("PUT", "/v1/node/pools", `[`, 400, "invalid node pool")

	// The list: by name, with a prefix, in pages.
	want("PUT", "/v1/node/pools", `{"Name":"prod"}`, 200)
	out := want("GET", "/v1/node/pools", "", 200)
	if !strings.Contains(out, `"Name":"all"`) || strings.Index(out, `"Name":"dev-1"`) > strings.Index(out, `"Name":"prod"`) {
		t.Fatalf("list: %s", out)
	}
	out = want("GET", "/v1/node/pools?prefix=d", "", 200)
	if strings.Contains(out, "prod") || !strings.Contains(out, "dev-1") || !strings.Contains(out, `"default"`) {
		t.Fatalf("prefix d: %s", out)
	}
	_, out, hdr := do(t, "GET", srv.URL+"/v1/node/pools?per_page=1", "")
	if !strings.Contains(out, `"all"`) || strings.Contains(out, `"default"`) || hdr.Get(NextTokenHeader) != "default" {
		t.Fatalf("page 1: %s %v", out, hdr)
	}
	if out := want("GET", "/v1/node/pools?next_token=dev-1", "", 200); strings.Contains(out, `"default"`) || !strings.Contains(out, "prod") {
		t.Fatalf("from dev-1: %s", out)
	}
	if out := want("GET", "/v1/node/pools?filter="+url.QueryEscape(`Description == "test"`), "", 200); !strings.Contains(out, "dev-1") || strings.Contains(out, "prod") || strings.Contains(out, `"all"`) {
		t.Fatalf("filter on Description: %s", out)
	}
	if out := want("GET", "/v1/node/pools?filter="+url.QueryEscape(`Name matches "^d"`)+"&per_page=1", "", 200); !strings.Contains(out, `"default"`) || strings.Contains(out, "dev-1") {
		t.Fatalf("filter then page: %s", out)
	}
	want("GET", "/v1/node/pools?filter="+url.QueryEscape(`Name ==`), "", 400, "failed to read filter expression")
	want("GET", "/v1/node/pool/nope", "", 404, "node pool not found")
	want("GET", "/v1/node/pool/node%2Fpool", "", 404, "not found")

	// Nodes and jobs of a pool; a job names an existing pool.
	n := &structs.Node{ID: "n1", Name: "n1", Datacenter: "dc1", NodePool: "dev-1", Status: structs.NodeStatusReady}
	if _, _, err := b.Apply(context.Background(), fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n}); err != nil {
		t.Fatal(err)
	}
	want("GET", "/v1/node/pool/dev-1/nodes", "", 200, `"ID":"n1"`)
	if out := want("GET", "/v1/node/pool/default/nodes", "", 200); out != "[]\n" && out != "[]" {
		t.Fatalf("default's nodes: %q", out)
	}
	want("GET", "/v1/node/pool/all/nodes", "", 200, `"ID":"n1"`)
	want("GET", "/v1/node/pool/nope/nodes", "", 200, "[]")
	want("GET", "/v1/node/pool/dev-1/nodes?prefix=n", "", 400, "prefix argument not allowed")
	want("GET", "/v1/node/pool/all/nodes?filter="+url.QueryEscape(`Name == "n1"`), "", 200, `"ID":"n1"`)
	if out := want("GET", "/v1/node/pool/all/nodes?filter="+url.QueryEscape(`Name == "n2"`), "", 200); strings.Contains(out, "n1") {
		t.Fatalf("nodes filtered: %s", out)
	}

	job := func(id, pool string) string {
		return `{"Job":{"ID":"` + id + `","Name":"` + id + `","Type":"batch","Datacenters":["dc1"],"NodePool":"` + pool +
			`","TaskGroups":[{"Name":"g","Count":1,"Tasks":[{"Name":"t","Driver":"raw_exec","Config":{"command":"/bin/true"}}]}]}}`
	}
	want("PUT", "/v1/jobs", job("lost", "nowhere"), 400, `job "lost" is in nonexistent node pool "nowhere"`)
	want("PUT", "/v1/job/lost/plan", job("lost", "nowhere"), 400, `nonexistent node pool "nowhere"`)
	want("PUT", "/v1/jobs", job("prod-job", "prod"), 200)
	want("GET", "/v1/node/pool/prod/jobs", "", 200, `"ID":"prod-job"`)
	if out := want("GET", "/v1/node/pool/prod/jobs?filter="+url.QueryEscape(`Type == "service"`), "", 200); strings.Contains(out, "prod-job") {
		t.Fatalf("jobs filtered: %s", out)
	}
	if out := want("GET", "/v1/node/pool/dev-1/jobs", "", 200); strings.Contains(out, "prod-job") {
		t.Fatalf("dev-1's jobs: %s", out)
	}

	// A pool in use is not deleted, in Nomad's words; the built-ins never.
	want("DELETE", "/v1/node/pool/dev-1", "", 400, `node pool "dev-1" has nodes in regions: [global]`)
	want("DELETE", "/v1/node/pool/prod", "", 400, `node pool "prod" has non-terminal jobs in regions: [global]`)
	want("DELETE", "/v1/node/pool/default", "", 400, `deleting node pool "default" is not allowed`)
	want("DELETE", "/v1/node/pool/nope", "", 404, "node pool nope not found")
	want("PUT", "/v1/node/pools", `{"Name":"spare"}`, 200)
	want("DELETE", "/v1/node/pool/spare", "", 200)
	want("GET", "/v1/node/pool/spare", "", 404, "node pool not found")
}

// TestNodePoolACL: Nomad's node_pool rules — the list shows the pools a
// token may read, a read needs read, an apply write, a delete delete; the
// nodes of a pool need node:read too.
func TestNodePoolACL(t *testing.T) {
	f := newACLFixture(t)
	apply := func(mt fsm.MessageType, req any) {
		t.Helper()
		if _, _, err := f.b.Apply(context.Background(), mt, req); err != nil {
			t.Fatal(err)
		}
	}
	apply(fsm.NodePoolUpsertRequestType, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{{Name: "dev-1"}, {Name: "prod"}}})
	apply(fsm.ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "dev-pools", Rules: `node_pool "dev-*" { policy = "write" }
node_pool "prod" { policy = "read" }
node_pool "default" { policy = "deny" }`},
	}})
	secret := structs.GenerateUUID()
	f.secrets["pooler"] = secret
	apply(fsm.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{{
		AccessorID: "acc-pooler", SecretHash: structs.HashSecret(secret), Name: "pooler", Type: structs.ACLTokenTypeClient,
		Policies: []string{"dev-pools"},
	}}})
	for _, c := range []struct {
		who, method, path, body string
		code                    int
	}{
		{"pooler", "GET", "/v1/node/pool/dev-1", "", 200},
		{"pooler", "GET", "/v1/node/pool/prod", "", 200},
		{"pooler", "GET", "/v1/node/pool/default", "", 403},
		{"pooler", "PUT", "/v1/node/pools", `{"Name":"dev-2"}`, 200},
		{"pooler", "PUT", "/v1/node/pools", `{"Name":"prod","Description":"x"}`, 403},
		{"pooler", "PUT", "/v1/node/pool/prod", `{"Name":"prod"}`, 403},
		{"pooler", "DELETE", "/v1/node/pool/prod", "", 403},
		{"pooler", "DELETE", "/v1/node/pool/dev-2", "", 200},
		{"pooler", "GET", "/v1/node/pool/dev-1/nodes", "", 403}, // no node:read
		{"reader", "GET", "/v1/node/pool/dev-1", "", 403},
		{"mgmt", "DELETE", "/v1/node/pool/dev-1", "", 200},
	} {
		if code, body := f.do(t, c.who, c.method, c.path, c.body); code != c.code {
			t.Errorf("%s %s %s: %d %s, want %d", c.who, c.method, c.path, code, body, c.code)
		}
	}
	code, body := f.do(t, "pooler", "GET", "/v1/node/pools", "")
	if code != 200 || !strings.Contains(body, `"prod"`) || strings.Contains(body, `"default"`) || strings.Contains(body, `"all"`) {
		t.Errorf("pooler's list: %d %s", code, body)
	}
}
