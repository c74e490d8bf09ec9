package apiclient

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// newCutOffServer starts a server as one cut off from the leader looks to
// a client: its stale reads answer with X-Nomad-KnownLeader: false, a
// blocking read waits out its whole wait (nothing changes there), and a
// write hangs until hang is closed (a server paused, or forwarding to a
// leader whose packets are dropped) or answers "No cluster leader".
func newCutOffServer(t *testing.T, hang chan struct{}) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method == http.MethodGet {
			if r.URL.Query().Has("index") {
				select {
				case <-r.Context().Done():
				case <-time.After(time.Minute):
				}
				return
			}
			w.Header().Set("X-Nomad-Index", "42")
			w.Header().Set("X-Nomad-KnownLeader", "false")
			_, _ = w.Write([]byte(`{"Allocs": {"a1": 41}, "Index": 42}`))
			return
		}
		if hang != nil {
			select {
			case <-r.Context().Done():
			case <-hang:
			}
			return
		}
		http.Error(w, "No cluster leader", http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// A server that takes a heartbeat and says nothing (paused, or cut off
// without closing the connection) is left after the attempt timeout for
// one that answers; before, the call waited for as long as its caller.
func TestNodeClientLeavesASilentServer(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	silent, _ := newCutOffServer(t, hang)
	good := newFakeServer(t)
	n, _ := NewNodeClient([]string{silent.URL, good.srv.URL})
	n.attemptTimeout = 300 * time.Millisecond
	start := time.Now()
	if _, err := n.Heartbeat(ctx(t), "n1"); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("heartbeat took %v", took)
	}
	if n.Current() != good.srv.URL {
		t.Fatalf("current %s, want %s", n.Current(), good.srv.URL)
	}
}

// A stale read answered by a server that knows no leader is asked of the
// next server: the first one's copy may be cut off from every write.
func TestNodeClientStaleReadWithoutLeaderMovesOn(t *testing.T) {
	cut, _ := newCutOffServer(t, nil)
	good := newFakeServer(t)
	good.srv.Config.Handler = withLeader(good.srv.Config.Handler)
	n, _ := NewNodeClient([]string{cut.URL, good.srv.URL})
	if _, _, err := n.AllocsIndex(ctx(t), "n1", &QueryOptions{AllowStale: true}); err != nil {
		t.Fatalf("allocs index: %v", err)
	}
	if n.Current() != good.srv.URL || good.calls.Load() != 1 {
		t.Fatalf("current %s after %d calls to the good server", n.Current(), good.calls.Load())
	}
	// All servers without a leader: the error says so.
	n2, _ := NewNodeClient([]string{cut.URL})
	if _, _, err := n2.AllocsIndex(ctx(t), "n1", &QueryOptions{AllowStale: true}); err == nil || !strings.Contains(err.Error(), "without a known leader") {
		t.Fatalf("one cut-off server: %v", err)
	}
}

func withLeader(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Nomad-KnownLeader", "true")
		h.ServeHTTP(w, r)
	})
}

// The client's watch, a blocking read held by a cut-off server, ends as
// soon as a report or heartbeat failed there, and is asked again of the
// server the calls moved to; before, it stayed for its whole wait (five
// minutes), and the client saw no new work meanwhile.
func TestNodeClientWatchFollowsTheMoveAwayFromAFailedServer(t *testing.T) {
	cut, _ := newCutOffServer(t, nil)
	good := newFakeServer(t)
	n, _ := NewNodeClient([]string{cut.URL, good.srv.URL})
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, _, err := n.AllocsIndex(ctx(t), "n1", &QueryOptions{AllowStale: true, WaitIndex: 7, WaitTime: time.Minute})
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if _, err := n.Heartbeat(ctx(t), "n1"); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch stayed with the server the calls left")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("watch took %v", took)
	}
}
