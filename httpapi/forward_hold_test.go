package httpapi

import (
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// newHoldingFollower starts a follower that holds requests for the leader
// up to hold.
func newHoldingFollower(t *testing.T, hold time.Duration) (*fakeBackend, *httptest.Server) {
	t.Helper()
	b := newFakeBackend()
	b.leader = false
	srv := httptest.NewServer(New(b, nil, WithForwardHold(hold)).Handler())
	t.Cleanup(srv.Close)
	return b, srv
}

// deadAddr is an address nothing listens on any more: a killed leader's.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func setLeader(b *fakeBackend, leader bool, leaderHTTP string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.leader, b.leaderHTTP = leader, leaderHTTP
}

// after runs fn once d has passed, in the background.
func after(d time.Duration, fn func()) { time.AfterFunc(d, fn) }

func TestReadHeldThroughAnElectionIsAnsweredByTheNewLeader(t *testing.T) {
	_, leaderSrv := newTestAPI(t)
	if code, body, _ := do(t, "PUT", leaderSrv.URL+"/v1/jobs", webJob); code != 200 {
		t.Fatalf("register on the leader: %d %s", code, body)
	}
	follower, followerSrv := newHoldingFollower(t, 5*time.Second)
	after(300*time.Millisecond, func() { setLeader(follower, false, strings.TrimPrefix(leaderSrv.URL, "http://")) })
	start := time.Now()
	code, body, _ := do(t, "GET", followerSrv.URL+"/v1/job/web", "")
	if code != 200 || !strings.Contains(body, `"ID":"web"`) {
		t.Fatalf("held read: %d %s", code, body)
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Fatalf("answered after %v, before a leader was known", took)
	}
}

func TestReadSentToADeadLeaderIsSentToTheNewOne(t *testing.T) {
	_, leaderSrv := newTestAPI(t)
	if code, body, _ := do(t, "PUT", leaderSrv.URL+"/v1/jobs", webJob); code != 200 {
		t.Fatalf("register on the leader: %d %s", code, body)
	}
	follower, followerSrv := newHoldingFollower(t, 5*time.Second)
	setLeader(follower, false, deadAddr(t))
	after(300*time.Millisecond, func() { setLeader(follower, false, strings.TrimPrefix(leaderSrv.URL, "http://")) })
	code, body, _ := do(t, "GET", followerSrv.URL+"/v1/job/web", "")
	if code != 200 || !strings.Contains(body, `"ID":"web"`) {
		t.Fatalf("read after the leader died: %d %s", code, body)
	}
}

// A write the dead leader's address refused never left: it goes to the
// new leader.
func TestWriteRefusedByADeadLeaderGoesToTheNewOne(t *testing.T) {
	leader, leaderSrv := newTestAPI(t)
	follower, followerSrv := newHoldingFollower(t, 5*time.Second)
	setLeader(follower, false, deadAddr(t))
	after(300*time.Millisecond, func() { setLeader(follower, false, strings.TrimPrefix(leaderSrv.URL, "http://")) })
	if code, body, _ := do(t, "PUT", followerSrv.URL+"/v1/jobs", webJob); code != 200 {
		t.Fatalf("write refused by the dead leader: %d %s", code, body)
	}
	if j, _ := leader.State().Snapshot().JobByID("default", "web"); j == nil || j.Name != "web" {
		t.Fatalf("the new leader holds %+v", j)
	}
}

// A leader that received a write and died before answering may have
// applied it: the write is not sent again.
func TestWriteTheLeaderReceivedIsNotSentAgain(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = c.Read(make([]byte, 64<<10)) // the request arrives
			c.Close()                           // and the leader dies
		}
	}()
	leader, leaderSrv := newTestAPI(t)
	follower, followerSrv := newHoldingFollower(t, time.Minute)
	setLeader(follower, false, l.Addr().String())
	after(100*time.Millisecond, func() { setLeader(follower, false, strings.TrimPrefix(leaderSrv.URL, "http://")) })
	start := time.Now()
	code, body, _ := do(t, "PUT", followerSrv.URL+"/v1/jobs", webJob)
	if code != 500 || !strings.Contains(body, "forwarding to the leader") {
		t.Fatalf("write the dying leader received: %d %s", code, body)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("the write failed after %v: it was held", took)
	}
	time.Sleep(200 * time.Millisecond)
	if j, _ := leader.State().Snapshot().JobByID("default", "web"); j != nil {
		t.Fatal("the write was sent again to the new leader")
	}
}

// A write that arrives while no leader is known waits for the election,
// and is served by its winner: another server, or this one.
func TestWriteHeldWhileNoLeaderGoesToTheWinner(t *testing.T) {
	for _, selfWins := range []bool{false, true} {
		leader, leaderSrv := newTestAPI(t)
		follower, followerSrv := newHoldingFollower(t, 5*time.Second)
		winner := leader
		elect := func() { setLeader(follower, false, strings.TrimPrefix(leaderSrv.URL, "http://")) }
		if selfWins {
			winner, elect = follower, func() { setLeader(follower, true, "") }
		}
		after(200*time.Millisecond, elect)
		if code, body, _ := do(t, "PUT", followerSrv.URL+"/v1/jobs", webJob); code != 200 {
			t.Fatalf("held write (this server wins: %v): %d %s", selfWins, code, body)
		}
		if j, _ := winner.State().Snapshot().JobByID("default", "web"); j == nil {
			t.Fatalf("the winner did not serve the held write (this server wins: %v)", selfWins)
		}
	}
}

func TestHoldEndsWithNoLeaderError(t *testing.T) {
	_, followerSrv := newHoldingFollower(t, 300*time.Millisecond)
	start := time.Now()
	code, body, _ := do(t, "GET", followerSrv.URL+"/v1/job/web", "")
	if code != 500 || !strings.Contains(body, "No cluster leader") {
		t.Fatalf("read without leader: %d %s", code, body)
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Fatalf("answered after %v, before the hold ended", took)
	}
}

// A server that stepped down still answers requests forwarded to it by a
// follower whose view of the leader lags the election: it serves nothing
// and says so, and the follower sends the request to the new leader
// instead of passing a 500 on (issue 37: 1-2 % of forwarded reads under
// load). A write it refused is sent again as well, having been applied
// nowhere.
func TestRequestAnsweredByADeposedLeaderGoesToTheNewOne(t *testing.T) {
	for _, write := range []bool{false, true} {
		leader, leaderSrv := newTestAPI(t)
		if !write {
			if code, body, _ := do(t, "PUT", leaderSrv.URL+"/v1/jobs", webJob); code != 200 {
				t.Fatalf("register on the leader: %d %s", code, body)
			}
		}
		_, deposedSrv := newHoldingFollower(t, 5*time.Second) // knows no leader yet
		follower, followerSrv := newHoldingFollower(t, 5*time.Second)
		setLeader(follower, false, strings.TrimPrefix(deposedSrv.URL, "http://"))
		after(300*time.Millisecond, func() { setLeader(follower, false, strings.TrimPrefix(leaderSrv.URL, "http://")) })
		if write {
			if code, body, _ := do(t, "PUT", followerSrv.URL+"/v1/jobs", webJob); code != 200 {
				t.Fatalf("write sent to the deposed leader: %d %s", code, body)
			}
			if j, _ := leader.State().Snapshot().JobByID("default", "web"); j == nil {
				t.Fatal("the new leader does not hold the write")
			}
			continue
		}
		code, body, _ := do(t, "GET", followerSrv.URL+"/v1/job/web", "")
		if code != 200 || !strings.Contains(body, `"ID":"web"`) {
			t.Fatalf("read sent to the deposed leader: %d %s", code, body)
		}
	}
}

// When only a server that does not lead answers for the whole hold, the
// request ends as every request that finds no leader: 500 "No cluster
// leader", not the deposed server's own answer.
func TestDeposedLeaderForTheWholeHoldIsNoLeader(t *testing.T) {
	_, deposedSrv := newHoldingFollower(t, 5*time.Second)
	follower, followerSrv := newHoldingFollower(t, 300*time.Millisecond)
	setLeader(follower, false, strings.TrimPrefix(deposedSrv.URL, "http://"))
	code, body, hdr := do(t, "GET", followerSrv.URL+"/v1/job/web", "")
	if code != 500 || !strings.Contains(body, "No cluster leader") {
		t.Fatalf("read while only a deposed leader answers: %d %s", code, body)
	}
	if hdr.Get("X-Drover-Not-Leader") != "" {
		t.Fatalf("the follower passed the deposed server's mark on: %v", hdr)
	}
}
