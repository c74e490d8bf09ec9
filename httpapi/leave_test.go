package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A leader that is leaving serves no write itself: a write that arrives
// while its leadership moves is held, then answered by the new leader; a
// write forwarded to it is answered "not the leader" for the follower to
// look again. Stay serves again.
func TestLeavingLeaderSendsWritesToTheNextLeader(t *testing.T) {
	_, next := newTestAPI(t)
	b := newFakeBackend()
	s := New(b, nil, WithForwardHold(5*time.Second))
	srv := serveAPI(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	after(300*time.Millisecond, func() { setLeader(b, false, strings.TrimPrefix(next.URL, "http://")) })
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", webJob); code != 200 {
		t.Fatalf("a write during the handover: %d %s", code, body)
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Fatalf("answered after %v, before the leadership moved", took)
	}
	if j, _ := b.State().Snapshot().JobByID("default", "web"); j != nil {
		t.Fatal("the leaving leader applied the write itself")
	}
	if code, body, _ := do(t, "GET", next.URL+"/v1/job/web", ""); code != 200 {
		t.Fatalf("the new leader does not hold the write: %d %s", code, body)
	}

	setLeader(b, true, "")
	code, _, hdr := doForwarded(t, srv.URL+"/v1/jobs", webJob)
	if code != 500 || hdr.Get(NotLeaderHeader) == "" {
		t.Fatalf("a forwarded write to a leaving leader: %d, not-leader %q", code, hdr.Get(NotLeaderHeader))
	}
	s.Stay()
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", webJob); code != 200 {
		t.Fatalf("after Stay: %d %s", code, body)
	}
	if j, _ := b.State().Snapshot().JobByID("default", "web"); j == nil {
		t.Fatal("after Stay the leader did not serve the write")
	}
}

// A follower's hold covers an election: a write whose leader's address
// refuses connections (the leader stopped) past the hold is held once
// more, for half the hold, and answered by the leader elected meanwhile.
func TestHoldCoversAnElection(t *testing.T) {
	_, next := newTestAPI(t)
	follower, srv := newHoldingFollower(t, 300*time.Millisecond)
	setLeader(follower, false, deadAddr(t))
	after(400*time.Millisecond, func() { setLeader(follower, false, strings.TrimPrefix(next.URL, "http://")) })
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", webJob); code != 200 {
		t.Fatalf("a write held through an election longer than the hold: %d %s", code, body)
	}
	// Without a leader after one and a half holds, it fails.
	setLeader(follower, false, "")
	start := time.Now()
	if code, _, _ := do(t, "PUT", srv.URL+"/v1/jobs", webJob); code < 500 {
		t.Fatalf("no leader at all: %d", code)
	}
	if took := time.Since(start); took < 420*time.Millisecond || took > 3*time.Second {
		t.Fatalf("no leader: answered after %v, want about one and a half holds", took)
	}
}

// serveAPI serves s over HTTP until the test ends.
func serveAPI(t *testing.T, s *Server) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// doForwarded sends a write marked as forwarded by a follower.
func doForwarded(t *testing.T, url, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest("PUT", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(ForwardedHeader, "1")
	return send(t, req)
}
