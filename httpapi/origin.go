package httpapi

import (
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/websocket"
)

// A web page of another site can make the operator's browser send
// requests to the agent: a form or fetch() with a "simple" content type
// (text/plain, a form encoding, multipart) needs no CORS preflight, so the
// browser sends it and only hides the answer. Without ACLs (a dev agent,
// raw_exec on) such a request could register a job that runs commands.
// The guard refuses, before any route sees it:
//
//   - on an agent that listens on loopback only, every request (reads,
//     WebSocket upgrades and preflights included) sent under a Host that is
//     not an IP address, "localhost", a name under .localhost (reserved:
//     browsers and resolvers keep it on this machine) or a name the
//     operator lists (http_allowed_hosts). A page of a name its attacker
//     points at 127.0.0.1 (DNS rebinding) is "same-origin" to the browser:
//     it would read the answers (jobs, variables, logs) and may send any
//     header, a forwarded request's marks included, which therefore do not
//     lift this rule. An agent forwards to the address its peer
//     advertises, which that peer accepts (see agent.crossSite).
//   - every request that changes state (any method but GET, HEAD and
//     OPTIONS, and a WebSocket upgrade) when the browser says it comes from
//     another site: an Origin header other than the agent's own (the
//     scheme, host and port the request was sent to) and not in the
//     allow-list ("null", a sandboxed frame, a file: page, a redirect, is
//     never the agent's own), or Sec-Fetch-Site: cross-site or same-site
//     (another port or sub-domain of the same site is another origin).
//
// Programs (the CLI, Nomad's Go client, curl) send neither Origin nor
// Sec-Fetch-Site and are served as before. The agent's own UI sends its own
// origin. A request body is JSON whatever its Content-Type says, and the
// browser-only content types are refused from other origins by the same
// rule. Answers carry Access-Control-Allow-Origin only for the origins of
// the allow-list: none by default.

// CrossSite configures the guard.
type CrossSite struct {
	// AllowedOrigins are origins ("https://dash.example.com") whose pages
	// may call the API: their reads get Access-Control-Allow-Origin, their
	// writes are let through (to the token checks). "*" lets every page
	// read, and no other origin's page write.
	AllowedOrigins []string
	// Headers are added to every answer (http_api_response_headers).
	Headers map[string]string
	// LoopbackOnly says the agent listens on loopback addresses only.
	LoopbackOnly bool
	// AllowedHosts are host names, besides IP addresses, localhost and
	// names under .localhost, that a LoopbackOnly agent answers requests
	// sent to (any case; a port is ignored).
	AllowedHosts []string
	// ForwardMarks are the headers an agent marks a request it forwards
	// with (to the leader, to a client node): the first agent guarded it.
	// A page cannot send them: a header of its own makes the browser ask
	// first (a CORS preflight), which the guard grants only to allowed
	// origins, and only for Content-Type and the token headers.
	ForwardMarks []string
}

// ErrCrossSite: a browser sent a request that changes state from another
// site's page (403).
var ErrCrossSite = errors.New("cross-site request refused")

// ErrHostRefused: a loopback-only agent was sent a request under a host
// name that is not its own (DNS rebinding; 403).
var ErrHostRefused = errors.New("request to an unknown host name refused")

// GuardCrossSite wraps h with the guard.
func GuardCrossSite(h http.Handler, c CrossSite) http.Handler {
	allowed := map[string]bool{}
	anyReader := false
	for _, o := range c.AllowedOrigins {
		if o == "*" {
			anyReader = true
			continue
		}
		allowed[strings.ToLower(strings.TrimRight(o, "/"))] = true
	}
	hosts := map[string]bool{}
	for _, h := range c.AllowedHosts {
		hosts[canonicalHost(h)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range c.Headers {
			if !strings.EqualFold(k, "Access-Control-Allow-Origin") {
				w.Header().Set(k, v)
			}
		}
		if c.LoopbackOnly && r.Host != "" && !loopbackName(r.Host) && !hosts[canonicalHost(hostOnly(r.Host))] {
			writeError(w, Errorf(http.StatusForbidden, "%s %s: this agent listens on loopback only and answers requests "+
				"sent to an IP address or localhost, not to %q: a web page of a name pointed at 127.0.0.1 (DNS rebinding) "+
				"could read and change it; use http://127.0.0.1:<port> or http://localhost:<port>, or list the name in "+
				"the agent's http_allowed_hosts: %w", r.Method, r.URL.Path, r.Host, ErrHostRefused))
			return
		}
		origin := r.Header.Get("Origin")
		listed := origin != "" && allowed[strings.ToLower(origin)]
		if origin != "" && (listed || anyReader) {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Add("Vary", "Origin")
			if listed {
				w.Header().Set("Access-Control-Allow-Credentials", "true")
			}
		}
		if r.Method == http.MethodOptions && origin != "" && listed {
			// A preflight of an allowed origin.
			w.Header().Set("Access-Control-Allow-Methods", "GET, HEAD, PUT, POST, DELETE, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type, X-Nomad-Token, Authorization")
			w.Header().Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if changesState(r) && !listed && !forwarded(r, c.ForwardMarks) {
			if why := crossSiteReason(r); why != "" {
				writeError(w, Errorf(http.StatusForbidden, "%s %s: %s: %w", r.Method, r.URL.Path, why, ErrCrossSite))
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func forwarded(r *http.Request, marks []string) bool {
	for _, m := range marks {
		if r.Header.Get(m) != "" {
			return true
		}
	}
	return false
}

// changesState reports whether r may change state: every method but the
// reads, and a WebSocket (alloc exec runs commands).
func changesState(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return websocket.IsWebSocketUpgrade(r)
	}
	return true
}

// crossSiteReason says why r comes from another site's page, or "". (A
// page of a rebinding name is refused before, whatever it asks.)
func crossSiteReason(r *http.Request) string {
	origin := r.Header.Get("Origin")
	switch site := strings.ToLower(r.Header.Get("Sec-Fetch-Site")); site {
	case "cross-site", "same-site":
		return fmt.Sprintf("the browser says it was sent by a page of another origin (Sec-Fetch-Site: %s%s); "+
			"only the agent's own pages, and programs, may change state", site, originSays(origin))
	}
	if origin == "" {
		return ""
	}
	own := ownOrigin(r)
	if !strings.EqualFold(origin, own) {
		what := "a page of " + origin
		if origin == "null" {
			what = "a page of no origin (Origin: null: a sandboxed frame, a file or a redirect)"
		}
		why := fmt.Sprintf("sent by %s, not by the agent's own pages (%s)", what, own)
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && browserOnlyType(mt) {
			why += fmt.Sprintf(", with the content type %s that a page may send without asking first", mt)
		}
		return why + "; add the origin to the agent's allowed origins to let its pages write"
	}
	return ""
}

func originSays(origin string) string {
	if origin == "" {
		return ""
	}
	return ", Origin: " + origin
}

// ownOrigin is the origin a browser sends for the agent's own pages at
// the address r was sent to.
func ownOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	u := url.URL{Scheme: scheme, Host: host}
	// A browser leaves the scheme's default port out of Origin.
	if h, port, err := net.SplitHostPort(host); err == nil &&
		(scheme == "http" && port == "80" || scheme == "https" && port == "443") {
		u.Host = h
		if strings.Contains(h, ":") {
			u.Host = "[" + h + "]"
		}
	}
	return u.String()
}

// browserOnlyType reports whether a page may send a body of type mt
// without a CORS preflight.
func browserOnlyType(mt string) bool {
	switch mt {
	case "text/plain", "application/x-www-form-urlencoded", "multipart/form-data":
		return true
	}
	return false
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// loopbackName reports whether host (with or without a port) is an IP
// address, localhost or a name under .localhost: names no other site can
// point here (.localhost is reserved, RFC 6761, and never delegated).
func loopbackName(hostport string) bool {
	h := canonicalHost(hostOnly(hostport))
	return net.ParseIP(h) != nil || h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// canonicalHost is a host name in lower case, without the trailing dot of
// a fully qualified name ("LocalHost." is localhost).
func canonicalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}
