package httpapi

import "testing"

// A read of a table nothing was written to answers X-Nomad-Index 1, as
// Nomad's, never 0 (a client blocks on the index it was answered).
func TestReadIndexIsAtLeastOne(t *testing.T) {
	_, srv := newTestAPI(t)
	for _, path := range []string{"/v1/jobs", "/v1/evaluations", "/v1/deployments"} {
		code, body, h := do(t, "GET", srv.URL+path, "")
		if h.Get("X-Nomad-Index") != "1" {
			t.Errorf("%s: %d %s, X-Nomad-Index %q, want 1", path, code, body, h.Get("X-Nomad-Index"))
		}
	}
}
