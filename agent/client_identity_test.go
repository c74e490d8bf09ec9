package agent

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/client"
)

var _ identitySource = (*client.Agent)(nil)

// fakeIdentity is a client with an identity (or none yet).
type fakeIdentity struct {
	fakeAllocs
	has     bool
	renewed atomic.Int32
}

func (f *fakeIdentity) NodeID() string { return "node-1" }
func (f *fakeIdentity) NodeIdentityClaims() (map[string]any, error) {
	return map[string]any{"nomad_node_id": "node-1", "sub": "node:global:default:node-1:default"}, nil
}
func (f *fakeIdentity) WaitNodeIdentity(context.Context) bool { return f.has }
func (f *fakeIdentity) RenewNodeIdentity()                    { f.renewed.Add(1) }

func TestClientIdentityEndpoints(t *testing.T) {
	src := &fakeIdentity{has: true}
	srv := httptest.NewServer(newClientHandler(src, hclog.NewNullLogger()))
	t.Cleanup(srv.Close)
	do := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := do("GET", "/v1/client/identity", ""); code != 200 || !strings.Contains(body, `"Claims":{"nomad_node_id":"node-1"`) {
		t.Fatalf("get: %d %s", code, body)
	}
	if code, body := do("GET", "/v1/client/identity?node_id=node-1", ""); code != 200 {
		t.Fatalf("get own node_id: %d %s", code, body)
	}
	if code, body := do("GET", "/v1/client/identity?node_id=other", ""); code != 404 {
		t.Fatalf("get another node: %d %s", code, body)
	}
	if code, body := do("POST", "/v1/client/identity/renew", `{"NodeID":"node-1"}`); code != 200 || strings.TrimSpace(body) != "{}" {
		t.Fatalf("renew: %d %s", code, body)
	}
	if code, body := do("PUT", "/v1/client/identity/renew", ``); code != 200 {
		t.Fatalf("renew without a body: %d %s", code, body)
	}
	if code, body := do("PUT", "/v1/client/identity/renew", `{"NodeID":"other"}`); code != 404 {
		t.Fatalf("renew another node: %d %s", code, body)
	}
	if n := src.renewed.Load(); n != 2 {
		t.Fatalf("renewed %d times, want 2", n)
	}
	src.has = false
	if code, body := do("GET", "/v1/client/identity", ""); code != 404 || !strings.Contains(body, "identity") {
		t.Fatalf("without an identity: %d %s", code, body)
	}
}

func TestClientIdentityACLAndTarget(t *testing.T) {
	for path, want := range map[string]string{"/v1/client/identity": "node:read", "/v1/client/identity/renew": "node:write"} {
		r := httptest.NewRequest("GET", path, nil)
		if got, _ := ClientCapability(r); got != want {
			t.Errorf("%s needs %q, want %q", path, got, want)
		}
	}
	pol, err := acl.Parse("reader", "", `node { policy = "read" }`)
	if err != nil {
		t.Fatal(err)
	}
	reader := acl.New([]*acl.Policy{pol})
	renew := httptest.NewRequest("PUT", "/v1/client/identity/renew", strings.NewReader(`{"NodeID":"n2"}`))
	if err := CheckClientRequest(reader, renew, nil); err == nil {
		t.Error("node:read renewed an identity")
	}
	if err := CheckClientRequest(reader, httptest.NewRequest("GET", "/v1/client/identity", nil), nil); err != nil {
		t.Errorf("node:read reading the claims: %v", err)
	}
	// The renew body names the node the request is forwarded to, and is
	// kept for the handler.
	if tg := targetOf(renew); !tg.host || tg.nodeID != "n2" {
		t.Errorf("target = %+v", tg)
	}
	if b, _ := io.ReadAll(renew.Body); string(b) != `{"NodeID":"n2"}` {
		t.Errorf("body after targetOf = %q", b)
	}
	if tg := targetOf(httptest.NewRequest("GET", "/v1/client/identity?node_id=n3", nil)); !tg.host || tg.nodeID != "n3" {
		t.Errorf("target = %+v", tg)
	}
}
