package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Requests that change state are refused when a browser says another
// site's page sent them; programs and the agent's own pages are served.
func TestGuardCrossSite(t *testing.T) {
	served := 0
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++; w.WriteHeader(200) })
	guard := GuardCrossSite(inner, CrossSite{AllowedOrigins: []string{"https://dash.example.com"},
		Headers: map[string]string{"X-Frame-Options": "DENY"}, LoopbackOnly: true,
		ForwardMarks: []string{ForwardedHeader}})
	for _, tc := range []struct {
		name    string
		method  string
		host    string
		headers map[string]string
		ok      bool
		says    string
	}{
		{"the CLI (no Origin)", "POST", "127.0.0.1:4646", nil, true, ""},
		{"curl's form body (no Origin)", "POST", "127.0.0.1:4646",
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, true, ""},
		{"the agent's own page", "POST", "127.0.0.1:4646",
			map[string]string{"Origin": "http://127.0.0.1:4646", "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"}, true, ""},
		{"the agent's own page under localhost", "DELETE", "localhost:4646",
			map[string]string{"Origin": "http://localhost:4646"}, true, ""},
		{"another site's page, text/plain", "POST", "127.0.0.1:4646",
			map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}, false, "content type text/plain"},
		{"another site's form", "POST", "127.0.0.1:4646",
			map[string]string{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, false, "http://evil.example"},
		{"another port of the same host", "PUT", "127.0.0.1:4646",
			map[string]string{"Origin": "http://127.0.0.1:8080", "Content-Type": "multipart/form-data; boundary=x"}, false, "not by the agent's own pages"},
		{"Origin: null", "POST", "127.0.0.1:4646", map[string]string{"Origin": "null"}, false, "no origin"},
		{"Sec-Fetch-Site cross-site without Origin", "POST", "127.0.0.1:4646",
			map[string]string{"Sec-Fetch-Site": "cross-site"}, false, "Sec-Fetch-Site: cross-site"},
		{"Sec-Fetch-Site same-site", "POST", "127.0.0.1:4646",
			map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:4646"}, false, "same-site"},
		{"a rebinding name for a loopback agent", "POST", "attacker.example:4646",
			map[string]string{"Origin": "http://attacker.example:4646"}, false, "DNS rebinding"},
		{"an allowed origin", "POST", "127.0.0.1:4646", map[string]string{"Origin": "https://dash.example.com"}, true, ""},
		{"another site's page may read", "GET", "127.0.0.1:4646", map[string]string{"Origin": "http://evil.example"}, true, ""},
		{"another site's WebSocket", "GET", "127.0.0.1:4646", map[string]string{"Origin": "http://evil.example",
			"Connection": "Upgrade", "Upgrade": "websocket"}, false, "http://evil.example"},
		{"forwarded by an agent", "POST", "127.0.0.1:4647", map[string]string{"Origin": "http://127.0.0.1:4646",
			ForwardedHeader: "1"}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			served = 0
			r := httptest.NewRequest(tc.method, "http://"+tc.host+"/v1/jobs", strings.NewReader(`{}`))
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			guard.ServeHTTP(rec, r)
			if tc.ok != (served == 1) || tc.ok != (rec.Code == 200) {
				t.Fatalf("served %d, answered %d %s; want served %t", served, rec.Code, rec.Body, tc.ok)
			}
			if !tc.ok && (rec.Code != 403 || !strings.Contains(rec.Body.String(), tc.says)) {
				t.Fatalf("answered %d %q, want 403 saying %q", rec.Code, rec.Body, tc.says)
			}
			if rec.Header().Get("X-Frame-Options") != "DENY" {
				t.Fatal("the configured header is missing")
			}
			acao := rec.Header().Get("Access-Control-Allow-Origin")
			if o := tc.headers["Origin"]; o == "https://dash.example.com" && acao != o || o != "https://dash.example.com" && acao != "" {
				t.Fatalf("Access-Control-Allow-Origin %q for Origin %q", acao, o)
			}
		})
	}
}

// A preflight is answered for an allowed origin only.
func TestGuardCrossSitePreflight(t *testing.T) {
	guard := GuardCrossSite(http.NotFoundHandler(), CrossSite{AllowedOrigins: []string{"https://dash.example.com"}})
	for origin, want := range map[string]int{"https://dash.example.com": 204, "http://evil.example": 404} {
		r := httptest.NewRequest("OPTIONS", "/v1/jobs", nil)
		r.Header.Set("Origin", origin)
		r.Header.Set("Access-Control-Request-Method", "POST")
		rec := httptest.NewRecorder()
		guard.ServeHTTP(rec, r)
		if rec.Code != want {
			t.Errorf("preflight from %s: %d, want %d", origin, rec.Code, want)
		}
		if allowed := rec.Header().Get("Access-Control-Allow-Methods") != ""; allowed != (want == 204) {
			t.Errorf("preflight from %s: methods allowed %t", origin, allowed)
		}
	}
}

// A loopback-only agent answers no request, whatever its method, sent
// under a name a page's attacker may point at 127.0.0.1 (DNS rebinding):
// only IP addresses, localhost, names under .localhost and the listed
// names. An agent that listens beyond loopback answers any name.
func TestGuardHost(t *testing.T) {
	served := 0
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++; w.WriteHeader(200) })
	loopback := GuardCrossSite(inner, CrossSite{LoopbackOnly: true, AllowedHosts: []string{"Drover.Internal"},
		ForwardMarks: []string{ForwardedHeader}})
	open := GuardCrossSite(inner, CrossSite{ForwardMarks: []string{ForwardedHeader}})
	hosts := []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1:4646", true},
		{"127.0.0.1", true},
		{"[::1]:4646", true},
		{"localhost:4646", true},
		{"localhost", true},
		{"LocalHost.:4646", true},
		{"ui.localhost:4646", true},
		{"drover.internal:4646", true},
		{"DROVER.INTERNAL.", true},
		{"evil.example:4646", false},
		{"evil.example", false},
		{"127.0.0.1.nip.io:4646", false},
		{"localhost.evil.example:4646", false},
		{"drover.internal.evil.example", false},
	}
	methods := []struct {
		name, method string
		headers      map[string]string
	}{
		{"GET", "GET", nil},
		{"HEAD", "HEAD", nil},
		{"a page's GET", "GET", map[string]string{"Sec-Fetch-Site": "same-origin"}},
		{"OPTIONS", "OPTIONS", nil},
		{"POST", "POST", nil},
		{"PUT", "PUT", nil},
		{"DELETE", "DELETE", nil},
		{"WebSocket", "GET", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket"}},
		{"forwarded GET", "GET", map[string]string{ForwardedHeader: "1"}},
	}
	for _, h := range hosts {
		for _, m := range methods {
			for _, agent := range []struct {
				name  string
				guard http.Handler
				ok    bool
			}{{"loopback", loopback, h.ok}, {"open", open, true}} {
				t.Run(agent.name+" "+m.name+" "+h.host, func(t *testing.T) {
					served = 0
					r := httptest.NewRequest(m.method, "/v1/jobs", nil)
					r.Host = h.host
					for k, v := range m.headers {
						r.Header.Set(k, v)
					}
					rec := httptest.NewRecorder()
					agent.guard.ServeHTTP(rec, r)
					if agent.ok != (served == 1) || agent.ok != (rec.Code == 200) {
						t.Fatalf("served %d, answered %d %s; want served %t", served, rec.Code, rec.Body, agent.ok)
					}
					if !agent.ok && (rec.Code != 403 || !strings.Contains(rec.Body.String(), `"`+h.host+`"`) ||
						!strings.Contains(rec.Body.String(), "http_allowed_hosts")) {
						t.Fatalf("answered %d %q, want 403 naming the Host and http_allowed_hosts", rec.Code, rec.Body)
					}
				})
			}
		}
	}
	// A request without a Host (HTTP/1.0) names nothing a page could.
	r := httptest.NewRequest("GET", "/v1/jobs", nil)
	r.Host = ""
	rec := httptest.NewRecorder()
	loopback.ServeHTTP(rec, r)
	if rec.Code != 200 {
		t.Fatalf("no Host: %d %s", rec.Code, rec.Body)
	}
}
