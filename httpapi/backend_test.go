package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// fakeBackend applies writes straight to a real FSM, as a one-server
// leader would; leader and leaderHTTP can be changed to play a follower.
type fakeBackend struct {
	mu         sync.Mutex
	fsm        *fsm.FSM
	index      uint64
	leader     bool
	leaderHTTP string
	joins      []*structs.ServerJoinRequest
}

func newFakeBackend() *fakeBackend { return &fakeBackend{fsm: fsm.New(nil), leader: true} }

func (b *fakeBackend) State() *state.Store { return b.fsm.State() }

func (b *fakeBackend) Apply(_ context.Context, t fsm.MessageType, req any) (any, uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.leader {
		return nil, 0, cluster.ErrNotLeader
	}
	data, err := fsm.Encode(t, req)
	if err != nil {
		return nil, 0, err
	}
	b.index++
	resp := b.fsm.Apply(&raft.Log{Index: b.index, Type: raft.LogCommand, Data: data})
	if err, ok := resp.(error); ok {
		return nil, b.index, err
	}
	return resp, b.index, nil
}

func (b *fakeBackend) IsLeader() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.leader
}

func (b *fakeBackend) Leader() (string, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.leader {
		return "127.0.0.1:4647", "self"
	}
	if b.leaderHTTP != "" {
		return "127.0.0.2:4647", "other"
	}
	return "", ""
}

func (b *fakeBackend) LeaderHTTPAddr() (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.leaderHTTP == "" {
		return "", cluster.ErrNoLeader
	}
	return b.leaderHTTP, nil
}

func (b *fakeBackend) LastContact() time.Duration { return 0 }

func (b *fakeBackend) RaftConfiguration() (*structs.RaftConfiguration, error) {
	return &structs.RaftConfiguration{Index: 1, Servers: []*structs.RaftServer{
		{ID: "self", Node: "s1", Address: "127.0.0.1:4647", Leader: true, Voter: true, RaftProtocol: "3"},
		{ID: "other", Node: "s2", Address: "127.0.0.2:4647", Voter: true, RaftProtocol: "3"},
		{ID: "learner", Node: "s3", Address: "127.0.0.3:4647", RaftProtocol: "3"},
	}}, nil
}

func (b *fakeBackend) Self() *structs.AgentSelf {
	return &structs.AgentSelf{Config: structs.AgentConfig{Region: "global", NodeName: "s1"}}
}

func (b *fakeBackend) Join(_ context.Context, req *structs.ServerJoinRequest) (*structs.ServerJoinResponse, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.joins = append(b.joins, req)
	return &structs.ServerJoinResponse{Self: structs.ServerMember{ID: "self"}, Bootstrapped: true}, nil
}

// newTestAPI serves a fresh API over a fake backend.
// testForwardHold is the test servers' hold for the leader: short, so
// that a test of "no leader" answers quickly.
const testForwardHold = 50 * time.Millisecond

func newTestAPI(t *testing.T) (*fakeBackend, *httptest.Server) {
	t.Helper()
	b := newFakeBackend()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	srv := httptest.NewServer(New(b, nil, WithClock(func() time.Time { return now }), WithForwardHold(testForwardHold)).Handler())
	t.Cleanup(srv.Close)
	return b, srv
}

// answer is what a request sent in the background got: its status, body
// and X-Nomad-Index.
type answer struct {
	code  int
	body  string
	index string
}

// doAsync sends one request in the background (a blocking query, say);
// its answer arrives on the channel.
func doAsync(t *testing.T, method, url, body string) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		code, b, hdr := do(t, method, url, body)
		ch <- answer{code, b, hdr.Get("X-Nomad-Index")}
	}()
	return ch
}

// do sends one request and returns the status, body and headers.
func do(t *testing.T, method, url, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return send(t, req)
}

// send sends req and returns the status, the body and the headers.
func send(t *testing.T, req *http.Request) (int, string, http.Header) {
	t.Helper()
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, sb.String(), resp.Header
}

const webJob = `{"Job":{"ID":"web","Name":"web","Type":"service","Datacenters":["dc1"],
 "TaskGroups":[{"Name":"g","Count":1,"Tasks":[{"Name":"t","Driver":"raw_exec","Config":{"command":"/bin/true"}}]}]}}`
