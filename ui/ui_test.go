package ui

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Every page is a shell: the page's kind and the ID its path names, with
// the script that fills it, under a policy that lets the page load only
// the agent's own files.
func TestPagesAreShells(t *testing.T) {
	h := New()
	for _, tc := range []struct{ path, page, id string }{
		{"/ui/jobs", "jobs", ""},
		{"/ui/jobs/web", "job", "web"},
		{"/ui/jobs/batch/periodic-1795637468", "job", "batch/periodic-1795637468"},
		{"/ui/jobs/a%2Fb", "job", "a/b"},
		{"/ui/deployments/5a6d42f3-835d-4447-9cbd-2be1de2abed2", "deployment", "5a6d42f3-835d-4447-9cbd-2be1de2abed2"},
		{"/ui/nodes", "nodes", ""},
		{"/ui/allocations/1911285e", "allocation", "1911285e"},
		{"/ui/settings/tokens", "tokens", ""},
	} {
		rec := get(t, h, http.MethodGet, tc.path)
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s = %d", tc.path, rec.Code)
			continue
		}
		if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", tc.path, ct)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.path, csp)
		}
		want := `<body data-page="` + tc.page + `" data-id="` + tc.id + `">`
		if !strings.Contains(body, want) {
			t.Errorf("GET %s: no %s in\n%s", tc.path, want, body)
		}
		if !strings.Contains(body, `<script src="/ui/assets/app.js?v=`+h.Version()+`" defer></script>`) {
			t.Errorf("GET %s: the page does not load the script of this build", tc.path)
		}
	}
}

// An ID in a path is text in the page, never markup.
func TestPageEscapesTheID(t *testing.T) {
	rec := get(t, New(), http.MethodGet, `/ui/jobs/%3Cscript%3Ealert(1)%3C%2Fscript%3E%22`)
	body := rec.Body.String()
	if strings.Contains(body, "<script>alert") || strings.Contains(body, `alert(1)</script>"`) {
		t.Fatalf("the ID reached the page unescaped:\n%s", body)
	}
	if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;&#34;") {
		t.Fatalf("the ID is not shown escaped:\n%s", body)
	}
}

func TestRedirectsAndNotFound(t *testing.T) {
	h := New()
	if rec := get(t, h, http.MethodGet, "/ui/"); rec.Code != http.StatusTemporaryRedirect || rec.Header().Get("Location") != "/ui/jobs" {
		t.Errorf("GET /ui/ = %d to %q, want 307 to /ui/jobs", rec.Code, rec.Header().Get("Location"))
	}
	rec := httptest.NewRecorder()
	RedirectRoot(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusTemporaryRedirect || rec.Header().Get("Location") != "/ui/" {
		t.Errorf("GET / = %d to %q, want 307 to /ui/", rec.Code, rec.Header().Get("Location"))
	}
	for _, p := range []string{"/ui/nope", "/ui/deployments/", "/ui/deployments/a/b", "/ui/assets/nope.js"} {
		if rec := get(t, h, http.MethodGet, p); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, rec.Code)
		}
	}
	if rec := get(t, h, http.MethodPost, "/ui/jobs"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /ui/jobs = %d, want 405", rec.Code)
	}
}

// Assets carry their type and an ETag; the version a page names may be
// kept by the browser, another is revalidated.
func TestAssets(t *testing.T) {
	h := New()
	for name, ct := range map[string]string{
		"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8", "favicon.svg": "image/svg+xml",
	} {
		rec := get(t, h, http.MethodGet, "/ui/assets/"+name+"?v="+h.Version())
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != ct {
			t.Errorf("GET %s = %d %q, want 200 %q", name, rec.Code, rec.Header().Get("Content-Type"), ct)
		}
		if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("GET %s?v=<this build>: Cache-Control %q", name, cc)
		}
		etag := rec.Header().Get("ETag")
		if rec := get(t, h, http.MethodGet, "/ui/assets/"+name+"?v=old"); rec.Header().Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s?v=old: Cache-Control %q, want no-cache", name, rec.Header().Get("Cache-Control"))
		}
		if rec := get(t, h, http.MethodGet, "/ui/assets/"+name, "If-None-Match", etag); rec.Code != http.StatusNotModified {
			t.Errorf("GET %s with its ETag = %d, want 304", name, rec.Code)
		}
	}
}

// Nothing the UI ships names another origin: no CDN, no font service
// (the SVG namespace is a name, not a fetch).
func TestNoOtherOrigin(t *testing.T) {
	urlRE := regexp.MustCompile(`https?://[^\s"'<>)]+`)
	for _, fsys := range []fs.FS{staticFS, templateFS} {
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			for _, u := range urlRE.FindAllString(string(b), -1) {
				if u != "http://www.w3.org/2000/svg" {
					t.Errorf("%s names %s", p, u)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Every element the script looks up by ID is in a page.
func TestScriptFindsItsElements(t *testing.T) {
	h := New()
	ids := map[string]bool{}
	idRE := regexp.MustCompile(`\bid="([^"]+)"`)
	for _, p := range []string{"/ui/jobs", "/ui/jobs/x", "/ui/deployments/x", "/ui/nodes", "/ui/allocations/x", "/ui/settings/tokens"} {
		for _, m := range idRE.FindAllStringSubmatch(get(t, h, http.MethodGet, p).Body.String(), -1) {
			ids[m[1]] = true
		}
	}
	js, err := staticFS.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	made := map[string]bool{}
	for _, m := range regexp.MustCompile(`\bid: '([^']+)'`).FindAllStringSubmatch(string(js), -1) {
		made[m[1]] = true
	}
	lookups := regexp.MustCompile(`\$\('([^']+)'\)`).FindAllStringSubmatch(string(js), -1)
	if len(lookups) < 20 {
		t.Fatalf("found only %d lookups in app.js", len(lookups))
	}
	for _, m := range lookups {
		if !ids[m[1]] && !made[m[1]] {
			t.Errorf("app.js looks up #%s, which no page has", m[1])
		}
	}
	for _, verb := range []string{"promote", "pause", "resume", "fail"} {
		if !ids["btn-"+verb] {
			t.Errorf("the deployment page has no #btn-%s", verb)
		}
	}
}
