package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/droverhq/drover/structs"
)

// Nomad's ACL lists answer X-Nomad-Index 1 at least while nothing was
// written to their table; its evaluations' and allocations' lists 0.
func TestEmptyListIndexAsNomad(t *testing.T) {
	srv := httptest.NewServer(New(newFakeBackend(), nil, WithACL(ACLConfig{Enabled: true})).Handler())
	t.Cleanup(srv.Close)
	code, body, _ := do(t, "PUT", srv.URL+"/v1/acl/bootstrap", "")
	var root structs.ACLToken
	if err := json.Unmarshal([]byte(body), &root); code != 200 || err != nil {
		t.Fatalf("bootstrap: %d %s", code, body)
	}
	for path, want := range map[string]string{"/v1/acl/policies": "1", "/v1/evaluations": "0", "/v1/allocations": "0"} {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("X-Nomad-Token", root.SecretID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("X-Nomad-Index") != want {
			t.Errorf("%s: %d, X-Nomad-Index %q, want %s", path, resp.StatusCode, resp.Header.Get("X-Nomad-Index"), want)
		}
	}
}
