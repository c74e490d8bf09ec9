// Package ui is drover's web UI, served by the agent at /ui/ and embedded
// in the binary (nothing is fetched from anywhere else).
//
// The UI is a client of the public HTTP API and of nothing else. The Go
// side renders each page's shell from html/template: the layout, the
// navigation and the empty structure of the page, with the IDs the path
// names. The shell holds no data. One hand-written script
// (static/app.js) fills it from the API (/v1/...) with the token the
// browser keeps (X-Nomad-Token), and keeps it live with the API's blocking
// queries (?index=). So a page shows exactly what the API answers to the
// token, ACLs apply unchanged, and there is one renderer of each thing,
// not a server one and a live one. See README.md.
package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the agent serves the UI.
const Prefix = "/ui/"

// contentSecurityPolicy lets a page load and run only what the agent
// serves: no inline script, no other origin, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// page is one kind of page: its template and its title.
type page struct {
	name  string // the template, and data-page for the script
	title string
}

var (
	pageJobs       = page{"jobs", "Jobs"}
	pageJob        = page{"job", "Job"}
	pageDeployment = page{"deployment", "Deployment"}
	pageNodes      = page{"nodes", "Nodes"}
	pageAlloc      = page{"allocation", "Allocation"}
	pageTokens     = page{"tokens", "ACL token"}
	pageNotFound   = page{"notfound", "Not found"}
)

// shell is what a page's template is given: the page, the object its
// path names, and the assets' version (a hash of their contents) so that
// a new binary's script is never mixed with an old page.
type shell struct {
	Page    string
	Title   string
	ID      string
	Version string
}

// Handler serves the UI under Prefix.
type Handler struct {
	tmpl    *template.Template
	assets  map[string]asset
	version string
	mux     *http.ServeMux
}

// asset is one embedded file with its headers.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// New returns the UI's handler, to be mounted at Prefix.
func New() *Handler {
	h := &Handler{
		tmpl:   template.Must(template.ParseFS(templateFS, "templates/*.html")),
		assets: map[string]asset{},
		mux:    http.NewServeMux(),
	}
	all := sha256.New()
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		all.Write(sum[:])
		name := strings.TrimPrefix(p, "static/")
		h.assets[name] = asset{body: body, contentType: contentType(name), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("ui: embedded assets: " + err.Error())
	}
	h.version = hex.EncodeToString(all.Sum(nil)[:6])

	h.mux.HandleFunc("GET /ui/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/jobs", http.StatusTemporaryRedirect)
	})
	h.mux.HandleFunc("GET /ui/jobs", h.render(pageJobs, ""))
	h.mux.HandleFunc("GET /ui/jobs/{id...}", h.render(pageJob, "id"))
	h.mux.HandleFunc("GET /ui/deployments/{id}", h.render(pageDeployment, "id"))
	h.mux.HandleFunc("GET /ui/nodes", h.render(pageNodes, ""))
	h.mux.HandleFunc("GET /ui/allocations/{id}", h.render(pageAlloc, "id"))
	h.mux.HandleFunc("GET /ui/settings/tokens", h.render(pageTokens, ""))
	h.mux.HandleFunc("GET /ui/assets/{name}", h.asset)
	h.mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.page(w, http.StatusNotFound, pageNotFound, "")
	})
	return h
}

// Version identifies the embedded assets.
func (h *Handler) Version() string { return h.version }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	h.mux.ServeHTTP(w, r)
}

// render serves a page whose path may name an object (the wildcard key).
func (h *Handler) render(p page, key string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := ""
		if key != "" {
			id = r.PathValue(key)
			if id == "" {
				h.page(w, http.StatusNotFound, pageNotFound, "")
				return
			}
		}
		h.page(w, http.StatusOK, p, id)
	}
}

func (h *Handler) page(w http.ResponseWriter, code int, p page, id string) {
	title := p.title
	if id != "" {
		title += " " + id
	}
	var b bytes.Buffer
	if err := h.tmpl.ExecuteTemplate(&b, "layout.html", shell{Page: p.name, Title: title, ID: id, Version: h.version}); err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// A page is a shell: the data comes from the API on every visit.
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

// asset serves an embedded file. Pages name them with ?v=<version>, so a
// browser may keep them; a request of another version revalidates.
func (h *Handler) asset(w http.ResponseWriter, r *http.Request) {
	a, ok := h.assets[r.PathValue("name")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Set("ETag", a.etag)
	if r.URL.Query().Get("v") == h.version {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "application/octet-stream"
}

// RedirectRoot answers GET / with a redirect to the UI, as Nomad's agent
// does for browsers.
func RedirectRoot(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, Prefix, http.StatusTemporaryRedirect)
}
