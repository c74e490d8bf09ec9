package httpapi

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// silentLeader is a leader as a cut-off follower sees it: connections are
// taken and nothing ever answers (its packets are dropped, or it is
// paused).
func silentLeader(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// A request for the leader sent to a follower whose leader went silent
// ends within the hold and a little more, with "No cluster leader";
// before, it waited for TCP to give up (a read had not answered after six
// minutes).
func TestRequestForASilentLeaderEndsWithNoLeader(t *testing.T) {
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/v1/job/web/allocations", ""},
		{"GET", "/v1/job/web", ""},
		{"PUT", "/v1/jobs", webJob},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			follower, srv := newHoldingFollower(t, 500*time.Millisecond)
			setLeader(follower, false, silentLeader(t))
			start := time.Now()
			code, body, _ := do(t, tc.method, srv.URL+tc.path, tc.body)
			took := time.Since(start)
			if code < 500 || !strings.Contains(body, "No cluster leader") {
				t.Fatalf("%d %s", code, body)
			}
			if took > 500*time.Millisecond+forwardSlack+time.Second {
				t.Fatalf("answered after %v", took)
			}
		})
	}
}

// A blocking read forwarded to the leader may take its whole wait there:
// the bound counts the wait in.
func TestBlockingWaitOfAForwardedRead(t *testing.T) {
	for q, want := range map[string]time.Duration{
		"":                  0,
		"?index=0":          0,
		"?index=5":          DefaultWait + DefaultWait/16,
		"?index=5&wait=16s": 17 * time.Second,
	} {
		r, _ := http.NewRequest("GET", "/v1/jobs"+q, nil)
		if got := blockingWait(r); got != want {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
}
