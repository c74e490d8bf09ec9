package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/droverhq/drover/apiclient"
)

// Nodes that share one ServerAPI (a fleet simulator's) each present their
// own secret.
func TestNodesSharingServersPresentTheirOwnSecret(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // path → token
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Get(apiclient.TokenHeader)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"HeartbeatTTL": 1}`))
	}))
	defer srv.Close()
	nc, err := apiclient.NewNodeClient([]string{srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	shared := NewHTTPServersOver(nc)
	a, b := nodeAuth{api: shared, secret: "secret-a"}, nodeAuth{api: shared, secret: "secret-b"}
	if _, err := a.Heartbeat(context.Background(), "node-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Heartbeat(context.Background(), "node-b"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ResolveACL(context.Background(), "user-token"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for path, want := range map[string]string{
		"/v1/internal/node/node-a/heartbeat": "secret-a", "/v1/internal/node/node-b/heartbeat": "secret-b",
		"/v1/internal/acl/resolve": "secret-a",
	} {
		if seen[path] != want {
			t.Errorf("%s presented %q, want %q", path, seen[path], want)
		}
	}
}
