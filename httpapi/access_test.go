package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/joinauth"
)

const joinBody = `{"Self":{"ID":"s2","RaftAddr":"127.0.0.1:1","HTTPAddr":"127.0.0.1:2"}}`

// call serves one request from remote through an API with access a.
func call(t *testing.T, a Access, method, path, body, remote string, header http.Header) (int, string) {
	t.Helper()
	s := New(NewMemBackend(), nil, WithAccess(a))
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = remote
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func signed(token, body string) http.Header {
	return http.Header{joinauth.Header: {joinauth.Sign(token, []byte(body))}}
}

func TestJoinMustProveItComesFromAServer(t *testing.T) {
	const local, remote = "127.0.0.1:40000", "192.0.2.7:40000"
	withToken := Access{JoinToken: "s3cret"}
	for _, tc := range []struct {
		name   string
		access Access
		remote string
		header http.Header
		want   int
	}{
		{"token: signed", withToken, remote, signed("s3cret", joinBody), 200},
		{"token: unsigned", withToken, local, nil, 403},
		{"token: wrong secret", withToken, local, signed("guess", joinBody), 403},
		{"token: signature of another body", withToken, local, signed("s3cret", `{"Self":{"ID":"s2"}}`), 403},
		{"no token: loopback", Access{}, local, nil, 200},
		{"no token: remote", Access{}, remote, nil, 403},
		{"no token: remote allowed", Access{AllowRemote: true}, remote, nil, 200},
		{"dev: refuses all", Access{RefuseJoins: "a dev agent is a one-server cluster"}, local, nil, 403},
		{"dev with token: refuses all", Access{JoinToken: "s3cret", RefuseJoins: "dev"}, local, signed("s3cret", joinBody), 403},
	} {
		code, body := call(t, tc.access, "POST", "/v1/internal/join", joinBody, tc.remote, tc.header)
		if code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.want)
		}
		if code == 403 && strings.Contains(body, "s3cret") {
			t.Errorf("%s: the answer names the secret: %s", tc.name, body)
		}
	}
}

func TestSnapshotIsServedToLoopbackOrAServerOnly(t *testing.T) {
	// MemBackend serves no snapshots: 501 means the access check passed.
	const path = "/v1/operator/snapshot"
	fwd := func(token string, at time.Time) http.Header {
		return http.Header{joinauth.ForwardHeader: {joinauth.SignForward(token, at.Unix(), "GET", path)}}
	}
	for _, tc := range []struct {
		name   string
		access Access
		remote string
		header http.Header
		want   int
	}{
		{"loopback v4", Access{}, "127.0.0.1:1234", nil, 501},
		{"loopback v6", Access{}, "[::1]:1234", nil, 501},
		{"remote", Access{}, "192.0.2.7:1234", nil, 403},
		{"remote allowed", Access{AllowRemote: true}, "192.0.2.7:1234", nil, 501},
		{"forwarded by a server", Access{JoinToken: "k"}, "192.0.2.7:1234", fwd("k", time.Now()), 501},
		{"forwarded, wrong secret", Access{JoinToken: "k"}, "192.0.2.7:1234", fwd("x", time.Now()), 403},
		{"forwarded, stale", Access{JoinToken: "k"}, "192.0.2.7:1234", fwd("k", time.Now().Add(-time.Hour)), 403},
	} {
		if code, body := call(t, tc.access, "GET", path, "", tc.remote, tc.header); code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.want)
		}
	}
	if code, _ := call(t, Access{}, "PUT", path, "", "192.0.2.7:1234", nil); code != 403 {
		t.Errorf("remote restore: %d, want 403", code)
	}
}

// Every route that hands out or replaces the state, or changes the
// membership, is guarded; every /v1/internal/ route is in the table, so
// that a new one is a decision; the table names only routes that exist.
func TestEveryMembershipAndSnapshotRouteIsGuarded(t *testing.T) {
	exists := map[string]bool{}
	for _, rt := range routes {
		exists[rt.pattern] = true
		path := rt.pattern[strings.IndexByte(rt.pattern, ' ')+1:]
		if _, listed := routeAccess[rt.pattern]; strings.HasPrefix(path, "/v1/internal/") && !listed {
			t.Errorf("%s is not in routeAccess", rt.pattern)
		}
		guarded := path == "/v1/internal/join" || path == "/v1/operator/snapshot"
		if guarded && routeAccess[rt.pattern] == open {
			t.Errorf("%s is not guarded", rt.pattern)
		}
	}
	for p := range routeAccess {
		if !exists[p] {
			t.Errorf("routeAccess names %q, which is no route", p)
		}
	}
}

func TestRefusedJoinsAreLoggedOnceAMinutePerHost(t *testing.T) {
	var l logLimiter
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		addr string
		at   time.Duration
		want bool
	}{
		{"10.0.0.1:1000", 0, true},
		{"10.0.0.1:1001", 300 * time.Millisecond, false},
		{"10.0.0.2:1000", time.Second, true},
		{"10.0.0.1:1002", 59 * time.Second, false},
		{"10.0.0.1:1003", 61 * time.Second, true},
	} {
		if got := l.first(c.addr, t0.Add(c.at)); got != c.want {
			t.Errorf("%s at %s: %t, want %t", c.addr, c.at, got, c.want)
		}
	}
}
