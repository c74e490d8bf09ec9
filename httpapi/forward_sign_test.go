package httpapi

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/joinauth"
)

// remoteLeader serves api as a leader reached from another machine (so
// that a loopback address lets nothing in), and keeps the last forward
// signature it received and the body that came with it.
type remoteLeader struct {
	srv *httptest.Server

	mu   sync.Mutex
	sig  string
	body []byte
}

func newRemoteLeader(t *testing.T, api http.Handler) *remoteLeader {
	t.Helper()
	l := &remoteLeader{}
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		l.mu.Lock()
		l.sig, l.body = r.Header.Get(joinauth.ForwardHeader), b
		l.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.RemoteAddr = "192.0.2.7:1234"
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(l.srv.Close)
	return l
}

func (l *remoteLeader) last() (string, []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sig, l.body
}

// restored is what the snapshot backend took last.
func (b *serverOpsBackend) lastRestored() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.restored)
}

// A forward signature covers the body: the leader hashes the body it
// received, so that a captured restore sent again with another snapshot
// is refused; the handler then reads the whole body, unconsumed by the
// check.
func TestForwardedRestoreIsRefusedWithAnotherBody(t *testing.T) {
	const path = "/v1/operator/snapshot"
	b := &serverOpsBackend{MemBackend: NewMemBackend()}
	s := New(b, nil, WithAccess(Access{JoinToken: "k"}))
	restore := func(body string, h http.Header) (int, string) {
		req := httptest.NewRequest("PUT", path, strings.NewReader(body))
		req.RemoteAddr = "192.0.2.7:1234"
		for k, v := range h {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	sig := func(token, body string) http.Header {
		return http.Header{joinauth.ForwardHeader: {
			joinauth.SignForwardBody(token, time.Now().Unix(), "PUT", path, sha256.Sum256([]byte(body)))}}
	}
	now := strconv.FormatInt(time.Now().Unix(), 10)
	withoutBody := http.Header{joinauth.ForwardHeader: {now + "." + joinauth.Sign("k", []byte("forward\n"+now+"\nPUT "+path))}}

	good := sig("k", "SNAP one")
	for _, tc := range []struct {
		name, body string
		h          http.Header
	}{
		{"another snapshot", "SNAP two", good},
		{"no body", "", good},
		{"signed for no body", "SNAP two", http.Header{joinauth.ForwardHeader: {joinauth.SignForward("k", time.Now().Unix(), "PUT", path)}}},
		{"the earlier layout, without the body", "SNAP two", withoutBody},
		{"wrong secret", "SNAP two", sig("x", "SNAP two")},
	} {
		if code, body := restore(tc.body, tc.h); code != 403 {
			t.Errorf("%s: %d %s, want 403", tc.name, code, body)
		}
	}
	if got := b.lastRestored(); got != "" {
		t.Fatalf("a refused restore reached the backend: %q", got)
	}
	if code, body := restore("SNAP one", good); code != 200 {
		t.Fatalf("the signed body: %d %s", code, body)
	}
	if got := b.lastRestored(); got != "SNAP one" {
		t.Fatalf("restored %q, want the whole signed body", got)
	}
	big := strings.Repeat("x", MaxBodyBytes+1)
	if code, body := restore(big, sig("k", big)); code != 413 {
		t.Fatalf("an oversized signed body: %d %.200s, want 413", code, body)
	}
}

// A follower signs the body it forwards: the leader, reached from another
// address, restores the snapshot sent to the follower, and refuses the
// captured signature with another body.
func TestFollowerSignsTheBodyItForwards(t *testing.T) {
	const path = "/v1/operator/snapshot"
	lb := &serverOpsBackend{MemBackend: NewMemBackend()}
	leader := newRemoteLeader(t, New(lb, nil, WithAccess(Access{JoinToken: "k"})).Handler())
	fb := newFakeBackend()
	fb.leader, fb.leaderHTTP = false, strings.TrimPrefix(leader.srv.URL, "http://")
	follower := httptest.NewServer(New(fb, nil, WithAccess(Access{JoinToken: "k"}), WithForwardHold(testForwardHold)).Handler())
	t.Cleanup(follower.Close)

	snap := "SNAP " + strings.Repeat("archive bytes ", 10000)
	if code, body, _ := do(t, "PUT", follower.URL+path, snap); code != 200 {
		t.Fatalf("restore through the follower: %d %s", code, body)
	}
	if got := lb.lastRestored(); got != snap {
		t.Fatalf("the leader restored %d bytes, want the %d sent", len(got), len(snap))
	}
	sig, body := leader.last()
	if sig == "" || string(body) != snap ||
		!joinauth.VerifyForwardBody("k", sig, time.Now().Unix(), "PUT", path, sha256.Sum256([]byte(snap))) {
		t.Fatalf("the forwarded signature %q does not cover the %d bytes forwarded", sig, len(body))
	}
	// The captured signature, sent again with another snapshot.
	req, _ := http.NewRequest("PUT", leader.srv.URL+path, strings.NewReader("SNAP another"))
	req.Header.Set(joinauth.ForwardHeader, sig)
	if code, body, _ := send(t, req); code != 403 {
		t.Fatalf("a replayed signature with another body: %d %s", code, body)
	}
	if got := lb.lastRestored(); got != snap {
		t.Fatalf("the replay restored %q", got)
	}
	// A forwarded read has an empty body, signed as such.
	if code, _, _ := do(t, "GET", follower.URL+path, ""); code != 200 {
		t.Fatalf("snapshot read through the follower: %d", code)
	}
}

// Writes a follower forwards signed are not counted again by the leader:
// the signature matches the body the leader receives. Without a join
// token they are, against the follower's address.
func TestForwardedWritesSignedOverTheirBodyAreNotCountedTwice(t *testing.T) {
	for _, tc := range []struct {
		token string
		want  []int
	}{
		{"k", []int{200, 200, 200}},
		{"", []int{200, 429, 429}},
	} {
		lb := newFakeBackend()
		leader := newRemoteLeader(t, New(lb, nil, WithAccess(Access{JoinToken: tc.token}),
			WithWriteLimit(WriteLimit{Rate: 0.001, Burst: 1})).Handler())
		fb := newFakeBackend()
		fb.leader, fb.leaderHTTP = false, strings.TrimPrefix(leader.srv.URL, "http://")
		follower := httptest.NewServer(New(fb, nil, WithAccess(Access{JoinToken: tc.token}), WithForwardHold(testForwardHold)).Handler())
		t.Cleanup(follower.Close)
		for i, want := range tc.want {
			if code, body, _ := do(t, "PUT", follower.URL+"/v1/jobs", webJob); code != want {
				t.Errorf("join token %q, write %d: %d %s, want %d", tc.token, i, code, body, want)
			}
		}
	}
}
