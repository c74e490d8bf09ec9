package agent

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/droverhq/drover/httpapi"
)

// A server agent serves the web UI at /ui/ and sends a browser's GET / there,
// as Nomad's agent does; other methods on / and the API are untouched. With
// ui.enabled = false it does neither. An agent that runs no server has no
// API for the UI to read, and no UI.
func TestAgentServesUI(t *testing.T) {
	a := &Agent{api: httpapi.New(nil, nil)}
	h := a.handler()
	do := func(method, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(method, path, nil)
		req.RemoteAddr = "127.0.0.1:5000"
		h.ServeHTTP(rec, req)
		return rec
	}
	if rec := do(http.MethodGet, "/"); rec.Code != http.StatusTemporaryRedirect || rec.Header().Get("Location") != "/ui/" {
		t.Errorf("GET / = %d to %q, want 307 to /ui/", rec.Code, rec.Header().Get("Location"))
	}
	if rec := do(http.MethodPut, "/"); rec.Code == http.StatusTemporaryRedirect {
		t.Errorf("PUT / is redirected to the UI")
	}
	rec := do(http.MethodGet, "/ui/jobs")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") ||
		!strings.Contains(rec.Body.String(), `data-page="jobs"`) {
		t.Errorf("GET /ui/jobs = %d %q:\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	if rec := do(http.MethodGet, "/ui/assets/app.js"); rec.Code != http.StatusOK {
		t.Errorf("GET /ui/assets/app.js = %d", rec.Code)
	}

	off := (&Agent{cfg: Config{UIDisabled: true}, api: httpapi.New(nil, nil)}).handler()
	for _, path := range []string{"/", "/ui/jobs"} {
		rec := httptest.NewRecorder()
		off.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code == http.StatusOK || rec.Code == http.StatusTemporaryRedirect {
			t.Errorf("with ui.enabled = false, GET %s answers %d", path, rec.Code)
		}
	}

	clientOnly := (&Agent{}).handler()
	rec = httptest.NewRecorder()
	clientOnly.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/jobs", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("a client-only agent answers GET /ui/jobs with %d, want 404", rec.Code)
	}
}
