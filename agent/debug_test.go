package agent

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The profiles are served only with enable_debug (or in dev mode), and
// only to loopback addresses unless allow_remote_operator.
func TestDebugProfilesOnlyWhenEnabled(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		remote string
		want   int
	}{
		{"off", Config{}, "127.0.0.1:5000", http.StatusNotFound},
		{"enable_debug", Config{EnableDebug: true}, "127.0.0.1:5000", http.StatusOK},
		{"dev", Config{Dev: true}, "[::1]:5000", http.StatusOK},
		{"remote", Config{EnableDebug: true}, "192.0.2.1:5000", http.StatusForbidden},
		{"remote allowed", Config{EnableDebug: true, AllowRemoteOperator: true}, "192.0.2.1:5000", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Agent{cfg: tc.cfg}
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/debug/pprof/goroutine?debug=1", nil)
			req.RemoteAddr = tc.remote
			a.handler().ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("GET /debug/pprof/goroutine = %d, want %d", rec.Code, tc.want)
			}
		})
	}
}
