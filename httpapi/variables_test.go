package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

func decodeVar(t *testing.T, body string) *structs.Variable {
	t.Helper()
	var v structs.Variable
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("decoding %q: %v", body, err)
	}
	return &v
}

func TestVariablesCRUDAndCheckAndSet(t *testing.T) {
	_, srv := newTestAPI(t)
	u := srv.URL
	code, body, hdr := do(t, "PUT", u+"/v1/var/app/db", `{"Items":{"user":"admin","password":"p4ss"}}`)
	if code != 200 {
		t.Fatalf("put: %d %s", code, body)
	}
	v := decodeVar(t, body)
	if v.Namespace != "default" || v.Path != "app/db" || v.Items["password"] != "p4ss" || v.CreateIndex == 0 ||
		v.ModifyIndex != v.CreateIndex || v.CreateTime == 0 || hdr.Get("X-Nomad-Index") != fmt.Sprint(v.ModifyIndex) {
		t.Fatalf("put answer: %+v (index %s)", v, hdr.Get("X-Nomad-Index"))
	}
	code, body, _ = do(t, "GET", u+"/v1/var/app/db", "")
	if got := decodeVar(t, body); code != 200 || got.Items["user"] != "admin" || got.ModifyIndex != v.ModifyIndex {
		t.Fatalf("get: %d %s", code, body)
	}
	if code, body, _ = do(t, "GET", u+"/v1/var/app/none", ""); code != 404 || !strings.Contains(body, "variable not found") {
		t.Fatalf("get missing: %d %s", code, body)
	}

	// cas=0 on an existing variable: 409 with the current one.
	code, body, _ = do(t, "PUT", u+"/v1/var/app/db?cas=0", `{"Items":{"user":"x"}}`)
	if cur := decodeVar(t, body); code != 409 || cur.ModifyIndex != v.ModifyIndex || cur.Items["user"] != "admin" {
		t.Fatalf("cas 0 on existing: %d %s", code, body)
	}
	code, body, _ = do(t, "PUT", fmt.Sprintf("%s/v1/var/app/db?cas=%d", u, v.ModifyIndex), `{"Items":{"user":"root"}}`)
	upd := decodeVar(t, body)
	if code != 200 || upd.ModifyIndex <= v.ModifyIndex || upd.CreateIndex != v.CreateIndex || upd.CreateTime != v.CreateTime {
		t.Fatalf("cas update: %d %s", code, body)
	}
	// A stale delete-cas conflicts; the current index deletes.
	if code, body, _ = do(t, "DELETE", fmt.Sprintf("%s/v1/var/app/db?cas=%d", u, v.ModifyIndex), ""); code != 409 ||
		decodeVar(t, body).ModifyIndex != upd.ModifyIndex {
		t.Fatalf("stale delete: %d %s", code, body)
	}
	do(t, "PUT", u+"/v1/var/app/web", `{"Items":{"a":"1"}}`)
	do(t, "PUT", u+"/v1/namespace", `{"Name":"prod"}`)
	do(t, "PUT", u+"/v1/var/other?namespace=prod", `{"Items":{"a":"1"}}`)
	code, body, _ = do(t, "GET", u+"/v1/vars?prefix=app/", "")
	if code != 200 || strings.Contains(body, "Items") || !strings.Contains(body, `"app/db"`) || !strings.Contains(body, `"app/web"`) {
		t.Fatalf("list: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", u+"/v1/vars?namespace=*", "")
	var all []structs.VariableMetadata
	if err := json.Unmarshal([]byte(body), &all); err != nil || code != 200 || len(all) != 3 {
		t.Fatalf("list across namespaces: %d %s", code, body)
	}
	if code, body, _ = do(t, "DELETE", fmt.Sprintf("%s/v1/var/app/db?cas=%d", u, upd.ModifyIndex), ""); code != 204 {
		t.Fatalf("delete: %d %s", code, body)
	}
	if code, _, _ = do(t, "GET", u+"/v1/var/app/db", ""); code != 404 {
		t.Fatalf("deleted variable: %d", code)
	}
	// Deleting again is not an error, as Nomad's.
	if code, body, _ = do(t, "DELETE", u+"/v1/var/app/db", ""); code != 204 {
		t.Fatalf("second delete: %d %s", code, body)
	}
}

func TestVariablesLimits(t *testing.T) {
	_, srv := newTestAPI(t)
	big := strings.Repeat("x", structs.MaxVariableSize)
	for _, c := range []struct {
		method, path, body, want string
	}{
		{"PUT", "/v1/var/a", `{"Items":{"k":"` + big + `"}}`, "Items: variables are limited to 64KiB"},
		{"PUT", "/v1/var/a", `{"Items":{}}`, "Items: empty variables are invalid"},
		{"PUT", "/v1/var/a", `{"Path":"a"}`, "variable missing required Items object"},
		{"PUT", "/v1/var/a", `{"Items":null}`, "variable missing required Items object"},
		{"PUT", "/v1/var/a.b", `{"Items":{"k":"v"}}`, `Path: invalid path "a.b": character "." at 1`},
		{"PUT", "/v1/var/a/../b", `{"Items":{"k":"v"}}`, `".." segments are not allowed`},
		{"GET", "/v1/var/a/./b", ``, `"." segments are not allowed`},
		{"PUT", "/v1/var/a//b", `{"Items":{"k":"v"}}`, "Path: invalid path \"a//b\": empty segment"},
		{"PUT", "/v1/var/a@b", `{"Items":{"k":"v"}}`, "Path: invalid path"},
		{"PUT", "/v1/var/" + strings.Repeat("p", 129), `{"Items":{"k":"v"}}`, "Path: 129 characters, more than the 128 allowed"},
		{"PUT", "/v1/var/nomad/other", `{"Items":{"k":"v"}}`, `only paths at "nomad/jobs"`},
		{"PUT", "/v1/var/nomad", `{"Items":{"k":"v"}}`, `"nomad" is a reserved`},
		{"PUT", "/v1/var/a?namespace=*", `{"Items":{"k":"v"}}`, `"*"`},
		{"PUT", "/v1/var/a?namespace=prod", `{"Namespace":"dev","Items":{"k":"v"}}`, `"prod" in the query's namespace and "dev" in the body's Namespace`},
		{"PUT", "/v1/var/a?cas=x", `{"Items":{"k":"v"}}`, `invalid cas "x"`},
		{"PUT", "/v1/var/a?lock-acquire", `{"Items":{"k":"v"},"Lock":{"TTL":"1s"}}`, "Lock: TTL 1s must be between"},
		{"PUT", "/v1/var/", `{"Items":{"k":"v"}}`, "Path: variable requires a path"},
		{"GET", "/v1/var//", ``, "Path: variable requires a path"},
	} {
		code, body, _ := do(t, c.method, srv.URL+c.path, c.body)
		if code != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s %.60s: %d %.200s, want 400 with %q", c.method, c.path, code, body, c.want)
		}
	}
	// At the limit exactly, it is accepted (key "k" counts too).
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/var/a", `{"Items":{"k":"`+big[1:]+`"}}`); code != 200 {
		t.Fatalf("64 KiB variable: %d %.200s", code, body)
	}
	if code, _, _ := do(t, "PUT", srv.URL+"/v1/var/nomad/jobs/web/g", `{"Items":{"k":"v"}}`); code != 200 {
		t.Fatalf("nomad/jobs path refused: %d", code)
	}
}

func TestVariableBlockingRead(t *testing.T) {
	_, srv := newTestAPI(t)
	_, body, _ := do(t, "PUT", srv.URL+"/v1/var/app/a", `{"Items":{"k":"1"}}`)
	v := decodeVar(t, body)
	done := doAsync(t, "GET", fmt.Sprintf("%s/v1/var/app/a?index=%d&wait=30s", srv.URL, v.ModifyIndex), "")
	list := doAsync(t, "GET", fmt.Sprintf("%s/v1/vars?index=%d&wait=30s", srv.URL, v.ModifyIndex), "")
	select {
	case a := <-done:
		t.Fatalf("returned before any change: %+v", a)
	case <-time.After(200 * time.Millisecond):
	}
	do(t, "PUT", srv.URL+"/v1/var/app/a", `{"Items":{"k":"2"}}`)
	for _, ch := range []<-chan answer{done, list} {
		select {
		case a := <-ch:
			if a.code != 200 || a.index != fmt.Sprint(v.ModifyIndex+1) {
				t.Fatalf("blocking answer %+v", a)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("blocking read did not return after a write")
		}
	}
}

func TestKeyringRotateKeepsOldVariablesReadable(t *testing.T) {
	b, srv := newTestAPI(t)
	do(t, "PUT", srv.URL+"/v1/var/old", `{"Items":{"k":"before"}}`)
	code, body, _ := do(t, "PUT", srv.URL+"/v1/operator/keyring/rotate", "")
	var rot struct{ Key structs.RootKeyMeta }
	if err := json.Unmarshal([]byte(body), &rot); code != 200 || err != nil || rot.Key.State != "active" || rot.Key.KeyID == "" {
		t.Fatalf("rotate: %d %s", code, body)
	}
	do(t, "PUT", srv.URL+"/v1/var/new", `{"Items":{"k":"after"}}`)
	snap := b.State().Snapshot()
	oldV, _ := snap.VarGet("default", "old")
	newV, _ := snap.VarGet("default", "new")
	if oldV.KeyID == rot.Key.KeyID || newV.KeyID != rot.Key.KeyID {
		t.Fatalf("keys used: old %s, new %s, active %s", oldV.KeyID, newV.KeyID, rot.Key.KeyID)
	}
	for path, want := range map[string]string{"old": "before", "new": "after"} {
		if code, body, _ := do(t, "GET", srv.URL+"/v1/var/"+path, ""); code != 200 || decodeVar(t, body).Items["k"] != want {
			t.Fatalf("read %s after rotation: %d %s", path, code, body)
		}
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/operator/keyring/keys", "")
	var keys []map[string]any
	if err := json.Unmarshal([]byte(body), &keys); err != nil || code != 200 || len(keys) != 2 {
		t.Fatalf("keys: %d %s", code, body)
	}
	states := map[string]int{}
	for _, k := range keys {
		if _, leaked := k["Key"]; leaked {
			t.Fatalf("the key list shows key material: %s", body)
		}
		states[k["State"].(string)]++
	}
	if states["active"] != 1 || states["inactive"] != 1 {
		t.Fatalf("key states: %v", states)
	}
	// The old key still encrypts "old": removing it needs force; the
	// active key cannot be removed.
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/operator/keyring/key/"+oldV.KeyID, ""); code != 409 || !strings.Contains(body, "still encrypts 1 variables") {
		t.Fatalf("remove of a key in use: %d %s", code, body)
	}
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/operator/keyring/key/"+rot.Key.KeyID, ""); code != 400 {
		t.Fatalf("remove of the active key: %d %s", code, body)
	}
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/operator/keyring/key/"+oldV.KeyID+"?force=true", ""); code != 200 {
		t.Fatalf("forced remove: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/var/old", ""); code != 500 || !strings.Contains(body, "no such root key") {
		t.Fatalf("read of a variable whose key was removed: %d %s", code, body)
	}
	do(t, "DELETE", srv.URL+"/v1/var/old", "")

	// A full rotation encrypts every variable again under the new key,
	// keeping its times; the old key then encrypts none and goes without
	// force.
	newBefore, _ := b.State().Snapshot().VarGet("default", "new")
	code, body, _ = do(t, "PUT", srv.URL+"/v1/operator/keyring/rotate?full=true", "")
	if err := json.Unmarshal([]byte(body), &rot); code != 200 || err != nil {
		t.Fatalf("full rotation: %d %s", code, body)
	}
	rekeyed, _ := b.State().Snapshot().VarGet("default", "new")
	if rekeyed.KeyID != rot.Key.KeyID || rekeyed.CreateTime != newBefore.CreateTime || rekeyed.ModifyTime != newBefore.ModifyTime {
		t.Fatalf("after a full rotation: %+v, before %+v", rekeyed.VariableMetadata, newBefore.VariableMetadata)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/var/new", ""); code != 200 || decodeVar(t, body).Items["k"] != "after" {
		t.Fatalf("read after a full rotation: %d %s", code, body)
	}
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/operator/keyring/key/"+newBefore.KeyID, ""); code != 200 {
		t.Fatalf("remove of the key a full rotation freed: %d %s", code, body)
	}
}

// varACLFixture adds variables policies and tokens to the ACL fixture.
func varACLFixture(t *testing.T) *aclFixture {
	t.Helper()
	f := newACLFixture(t)
	apply := func(mt fsm.MessageType, req any) {
		t.Helper()
		if _, _, err := f.b.Apply(context.Background(), mt, req); err != nil {
			t.Fatal(err)
		}
	}
	apply(fsm.ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{{Name: "vars", Rules: `
namespace "default" {
  variables {
    path "app/*"        { capabilities = ["read"] }
    path "app/secret*"  { capabilities = ["deny"] }
    path "team/*"       { capabilities = ["write", "read", "destroy"] }
    path "drop/*"       { capabilities = ["write"] }
  }
}`}}})
	secret := structs.GenerateUUID()
	f.secrets["vars"] = secret
	apply(fsm.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{{
		AccessorID: "acc-vars", SecretHash: structs.HashSecret(secret), Name: "vars", Type: structs.ACLTokenTypeClient, Policies: []string{"vars"},
	}}})
	for _, p := range []string{"app/db", "app/secret-key", "team/x", "nomad/jobs", "nomad/jobs/web", "nomad/jobs/web/g", "nomad/jobs/web/g/t", "nomad/jobs/web/g/other", "nomad/jobs/api"} {
		if code, body := f.do(t, "mgmt", "PUT", "/v1/var/"+p, `{"Items":{"k":"`+p+`"}}`); code != 200 {
			t.Fatalf("put %s: %d %s", p, code, body)
		}
	}
	if code, body := f.do(t, "mgmt", "PUT", "/v1/namespace", `{"Name":"prod"}`); code != 200 {
		t.Fatalf("namespace prod: %d %s", code, body)
	}
	if code, body := f.do(t, "mgmt", "PUT", "/v1/var/nomad/jobs/web?namespace=prod", `{"Items":{"k":"prod"}}`); code != 200 {
		t.Fatalf("put in prod: %d %s", code, body)
	}
	return f
}

func TestVariablesACL(t *testing.T) {
	f := varACLFixture(t)
	for _, c := range []struct {
		who, method, path, body string
		want                    int
	}{
		{"vars", "GET", "/v1/var/app/db", "", 200},
		{"vars", "PUT", "/v1/var/app/db", `{"Items":{"k":"v"}}`, 403},
		{"vars", "DELETE", "/v1/var/app/db", "", 403},
		{"vars", "GET", "/v1/var/app/secret-key", "", 403}, // the closer glob denies
		{"vars", "PUT", "/v1/var/team/y", `{"Items":{"k":"v"}}`, 200},
		{"vars", "DELETE", "/v1/var/team/x", "", 204},
		{"vars", "GET", "/v1/var/other", "", 403},
		{"vars", "GET", "/v1/var/app/db?namespace=prod", "", 403},
		{"writer", "GET", "/v1/var/app/db", "", 403}, // namespace write grants no variables
		{"", "GET", "/v1/var/app/db", "", 403},
		{"mgmt", "GET", "/v1/var/app/db", "", 200},
		{"reader", "GET", "/v1/vars", "", 403},
	} {
		if code, body := f.do(t, c.who, c.method, c.path, c.body); code != c.want {
			t.Errorf("%s %s %s: %d %s, want %d", c.who, c.method, c.path, code, body, c.want)
		}
	}
	code, body := f.do(t, "vars", "GET", "/v1/vars?namespace=*", "")
	if code != 200 || !strings.Contains(body, `"app/db"`) || strings.Contains(body, "secret-key") || strings.Contains(body, "nomad/jobs") {
		t.Fatalf("filtered list: %d %s", code, body)
	}
	// A conflict shows the items to a caller that may read them, and
	// only the metadata to one that may not.
	code, body = f.do(t, "vars", "PUT", "/v1/var/team/y?cas=1", `{"Items":{"k":"v"}}`)
	if code != 409 || decodeVar(t, body).Items["k"] != "v" {
		t.Fatalf("conflict for a writer that may read: %d %s", code, body)
	}
	if code, body = f.do(t, "vars", "PUT", "/v1/var/drop/a", `{"Items":{"k":"hidden"}}`); code != 200 {
		t.Fatalf("write-only put: %d %s", code, body)
	}
	if code, body = f.do(t, "vars", "GET", "/v1/var/drop/a", ""); code != 403 {
		t.Fatalf("write-only read: %d %s", code, body)
	}
	code, body = f.do(t, "vars", "PUT", "/v1/var/drop/a?cas=1", `{"Items":{"k":"v"}}`)
	if v := decodeVar(t, body); code != 409 || v.Items != nil || strings.Contains(body, "hidden") || v.ModifyIndex == 0 {
		t.Fatalf("conflict for a writer that may not read: %d %s", code, body)
	}
}

func TestWorkloadIdentityReadsItsOwnVariables(t *testing.T) {
	f := varACLFixture(t)
	alloc := f.allocs["node1"]
	// Only the node the allocation is on gets its identities.
	if code, body := f.do(t, "node2", "PUT", "/v1/internal/alloc/"+alloc+"/identity", `{}`); code != 403 {
		t.Fatalf("another node's alloc: %d %s", code, body)
	}
	if code, body := f.do(t, "reader", "PUT", "/v1/internal/alloc/"+alloc+"/identity", `{}`); code != 403 {
		t.Fatalf("a token, not a node: %d %s", code, body)
	}
	code, body := f.do(t, "node1", "PUT", "/v1/internal/alloc/"+alloc+"/identity", `{"Tasks":["t"]}`)
	var resp structs.AllocIdentityResponse
	if err := json.Unmarshal([]byte(body), &resp); code != 200 || err != nil || len(resp.Identities) != 1 || resp.Identities[0].Task != "t" {
		t.Fatalf("identity: %d %s", code, body)
	}
	f.secrets["wid"] = resp.Identities[0].JWT
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/v1/var/nomad/jobs", 200},
		{"GET", "/v1/var/nomad/jobs/web", 200},
		{"GET", "/v1/var/nomad/jobs/web/g", 200},
		{"GET", "/v1/var/nomad/jobs/web/g/t", 200},
		{"GET", "/v1/var/nomad/jobs/web/g/other", 403},
		{"GET", "/v1/var/nomad/jobs/api", 403},
		{"GET", "/v1/var/app/db", 403},
		{"GET", "/v1/var/nomad/jobs/web?namespace=prod", 403},
		{"PUT", "/v1/var/nomad/jobs/web", 403},
		{"DELETE", "/v1/var/nomad/jobs/web", 403},
		{"GET", "/v1/nodes", 403},
		// Nomad's default identity reads no job, allocation or event.
		{"GET", "/v1/job/web", 403},
		{"GET", "/v1/jobs", 403},
		{"GET", "/v1/job/web/allocations", 403},
		{"GET", "/v1/allocation/" + alloc, 403},
		{"GET", "/v1/event/stream?topic=Job:*", 403},
		// It reads its namespace's services (nomadService, nomadServices).
		{"GET", "/v1/services", 200},
		{"GET", "/v1/service/web", 200},
		{"GET", "/v1/services?namespace=prod", 403},
		{"GET", "/v1/service/web?namespace=prod", 403},
	} {
		body := ""
		if c.method == "PUT" {
			body = `{"Items":{"k":"v"}}`
		}
		if code, got := f.do(t, "wid", c.method, c.path, body); code != c.want {
			t.Errorf("identity %s %s: %d %s, want %d", c.method, c.path, code, got, c.want)
		}
	}
	code, body = f.do(t, "wid", "GET", "/v1/vars?prefix=nomad/", "")
	if code != 200 || strings.Count(body, `"Path"`) != 4 || strings.Contains(body, "nomad/jobs/api") {
		t.Fatalf("identity's list: %d %s", code, body)
	}
	// A forged identity (another signing key) is refused.
	forged := strings.Split(f.secrets["wid"], ".")
	forged[2] = strings.Repeat("A", len(forged[2]))
	f.secrets["forged"] = strings.Join(forged, ".")
	if code, _ := f.do(t, "forged", "GET", "/v1/var/nomad/jobs/web", ""); code != 403 {
		t.Fatalf("forged identity: %d", code)
	}
	// Once the allocation is terminal, its identity is refused.
	stopped, _ := f.b.State().Snapshot().AllocByID(alloc)
	c := stopped.Copy()
	c.ClientStatus = structs.AllocClientStatusComplete
	if _, _, err := f.b.Apply(context.Background(), fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{c}}); err != nil {
		t.Fatal(err)
	}
	if code, body := f.do(t, "wid", "GET", "/v1/var/nomad/jobs/web", ""); code != 403 || !strings.Contains(body, "terminal") {
		t.Fatalf("identity of a terminal alloc: %d %s", code, body)
	}
	if code, body := f.do(t, "node1", "PUT", "/v1/internal/alloc/"+alloc+"/identity", `{}`); code != 400 {
		t.Fatalf("identity for a terminal alloc: %d %s", code, body)
	}
}
