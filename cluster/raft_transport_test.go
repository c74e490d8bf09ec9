package cluster

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// logCmd is a command entry of the log.
func logCmd(i, term uint64, data string) *raft.Log {
	return &raft.Log{Index: i, Term: term, Type: raft.LogCommand, Data: []byte(data)}
}

// lonelyFollower starts server "a" of a three-server configuration (index
// 1, term 1) whose log holds entries after it, its log store wrapped by
// wrap when set (after the entries are stored). It stays a follower (no
// election of its own for 10 s); send hands it a request from a leader
// "b" at term 2 and returns the answer.
func lonelyFollower(t *testing.T, entries []*raft.Log, wrap func(raft.LogStore) raft.LogStore) (f *listFSM, send func(*raft.AppendEntriesRequest) raft.AppendEntriesResponse) {
	t.Helper()
	conf := raft.Configuration{Servers: []raft.Server{
		{Suffrage: raft.Voter, ID: "a", Address: "a-addr"},
		{Suffrage: raft.Voter, ID: "b", Address: "b-addr"},
		{Suffrage: raft.Voter, ID: "c", Address: "c-addr"},
	}}
	preload := append([]*raft.Log{{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: raft.EncodeConfiguration(conf)}}, entries...)
	_, trans := raft.NewInmemTransport("a-addr")
	f = &listFSM{}
	rc := LANRaftConfig()
	rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = 10*time.Second, 10*time.Second, 5*time.Second
	srv, err := New(Config{ID: "a", FSM: f, Transport: trans, InMemory: true, Logger: testLogger(t), Raft: rc,
		wrapLogs: func(l raft.LogStore) raft.LogStore {
			if err := l.StoreLogs(preload); err != nil {
				t.Fatal(err)
			}
			if wrap != nil {
				return wrap(l)
			}
			return l
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown() })
	_, leader := raft.NewInmemTransport("b-addr")
	leader.Connect("a-addr", trans)
	send = func(req *raft.AppendEntriesRequest) raft.AppendEntriesResponse {
		t.Helper()
		req.RPCHeader = raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("b"), Addr: []byte("b-addr")}
		req.Term = 2
		var resp raft.AppendEntriesResponse
		if err := leader.AppendEntries("a", "a-addr", req, &resp); err != nil {
			t.Fatal(err)
		}
		return resp
	}
	return f, send
}

// applied returns what f has applied.
func (f *listFSM) applied() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.entries)
}

// A server that was leader holds an entry of its own term (index 4) that
// never reached a quorum. The new leader's first request matches the two
// logs' shared part (up to 3) and carries a commit index of 5, past it:
// the server must not apply its own entry 4, which the cluster replaced.
// Then the request carrying the leader's 4 and 5 replaces it, and the
// server applies the leader's. Without the clamp, raft applied the stale
// "old4" (the follower commits up to its own last index).
func TestFollowerCommitsOnlyWhatTheRequestVouchesFor(t *testing.T) {
	f, leaderSends := lonelyFollower(t, []*raft.Log{logCmd(2, 1, "x2"), logCmd(3, 1, "x3"), logCmd(4, 1, "old4")}, nil)
	send := func(req *raft.AppendEntriesRequest) {
		t.Helper()
		if resp := leaderSends(req); !resp.Success {
			t.Fatalf("refused: %+v", resp)
		}
	}
	applied := f.applied

	send(&raft.AppendEntriesRequest{PrevLogEntry: 3, PrevLogTerm: 1, LeaderCommitIndex: 5})
	waitFor(t, "x2 and x3 applied", func() bool { return len(applied()) >= 2 })
	time.Sleep(100 * time.Millisecond) // room for a wrong apply to show
	if got := applied(); !slices.Equal(got, []string{"x2", "x3"}) {
		t.Fatalf("applied %q after a request vouching for index 3 only, want [x2 x3]", got)
	}

	send(&raft.AppendEntriesRequest{PrevLogEntry: 3, PrevLogTerm: 1, LeaderCommitIndex: 5,
		Entries: []*raft.Log{logCmd(4, 2, "new4"), logCmd(5, 2, "new5")}})
	waitFor(t, "the leader's entries applied", func() bool { return len(applied()) >= 4 })
	if got := applied(); !slices.Equal(got, []string{"x2", "x3", "new4", "new5"}) {
		t.Fatalf("applied %q, want [x2 x3 new4 new5]", got)
	}
}

func TestClampCommitIndex(t *testing.T) {
	for _, c := range []struct {
		prev    uint64
		entries int
		commit  uint64
		want    uint64
	}{
		{prev: 3, entries: 0, commit: 5, want: 3},
		{prev: 3, entries: 2, commit: 5, want: 5},
		{prev: 3, entries: 4, commit: 5, want: 5},
		{prev: 0, entries: 0, commit: 9, want: 0},
		{prev: 0, entries: 0, commit: 0, want: 0}, // a heartbeat
		{prev: 10, entries: 64, commit: 100, want: 74},
	} {
		a := &raft.AppendEntriesRequest{PrevLogEntry: c.prev, LeaderCommitIndex: c.commit, Entries: make([]*raft.Log, c.entries)}
		clampCommitIndex(a)
		if a.LeaderCommitIndex != c.want {
			t.Errorf("prev %d, %d entries, commit %d: got %d, want %d", c.prev, c.entries, c.commit, a.LeaderCommitIndex, c.want)
		}
	}
}

// As raft's leader does with a follower's pipeline: read answers until
// the first refusal, then stop reading, while the sending loop sends one
// or two more requests before it notices. Over the network transport's
// pipeline (two in flight, answers handed over unbuffered) the second of
// those sends blocked for ever, and with it the leader's replication to
// that follower. Drained, every send returns.
func TestPipelineSendsAfterARefusalReturn(t *testing.T) {
	follower, err := raft.NewTCPTransport("127.0.0.1:0", nil, 2, time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer follower.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case rpc := <-follower.Consumer():
				rpc.Respond(&raft.AppendEntriesResponse{Term: 1, Success: false}, nil) // a full disk
			case <-done:
				return
			}
		}
	}()
	leader, err := raft.NewTCPTransport("127.0.0.1:0", nil, 2, time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	trans := guardTransport(leader)
	defer trans.(raft.WithClose).Close()

	p, err := trans.AppendEntriesPipeline("f", follower.LocalAddr())
	if err != nil {
		t.Fatal(err)
	}
	req := func(i uint64) *raft.AppendEntriesRequest {
		return &raft.AppendEntriesRequest{
			RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("l"), Addr: []byte(leader.LocalAddr())},
			Term:      1, PrevLogEntry: i, PrevLogTerm: 1, LeaderCommitIndex: i,
			Entries: []*raft.Log{{Index: i + 1, Term: 1, Type: raft.LogCommand, Data: []byte("x")}},
		}
	}
	if _, err := p.AppendEntries(req(1), new(raft.AppendEntriesResponse)); err != nil {
		t.Fatal(err)
	}
	select {
	case f := <-p.Consumer():
		if f.Response().Success {
			t.Fatal("the follower took the entry")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
	// Nobody reads the pipeline's answers any more.
	sent := make(chan error, 1)
	go func() {
		for i := uint64(2); i <= 4; i++ {
			if _, err := p.AppendEntries(req(i), new(raft.AppendEntriesResponse)); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	select {
	case err := <-sent:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a send blocked on an answer nobody read: the leader's replication to this follower would stall for good")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
