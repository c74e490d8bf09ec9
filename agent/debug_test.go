package agent

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The profiles are served only with enable_debug (or in dev mode).
func TestDebugProfilesOnlyWhenEnabled(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want int
	}{
		{"off", Config{}, http.StatusNotFound},
		{"enable_debug", Config{EnableDebug: true}, http.StatusOK},
		{"dev", Config{Dev: true}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Agent{cfg: tc.cfg}
			rec := httptest.NewRecorder()
			a.handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/goroutine?debug=1", nil))
			if rec.Code != tc.want {
				t.Fatalf("GET /debug/pprof/goroutine = %d, want %d", rec.Code, tc.want)
			}
		})
	}
}
