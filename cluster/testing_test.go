package cluster

import (
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// errRejected is what listFSM returns for entries starting with "reject".
var errRejected = errors.New("rejected by the state machine")

// listFSM is a minimal state machine: it appends every entry and answers
// with the new length, or rejects entries that start with "reject".
type listFSM struct {
	mu      sync.Mutex
	entries []string
}

func (f *listFSM) Apply(l *raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.HasPrefix(string(l.Data), "reject") {
		return errRejected
	}
	f.entries = append(f.entries, string(l.Data))
	return len(f.entries)
}

func (f *listFSM) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.entries)
}

func (f *listFSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &listSnapshot{data: strings.Join(f.entries, "\n")}, nil
}

func (f *listFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries = nil
	if len(b) > 0 {
		f.entries = strings.Split(string(b), "\n")
	}
	return nil
}

type listSnapshot struct{ data string }

func (s *listSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write([]byte(s.data)); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *listSnapshot) Release() {}

// testNode is one in-memory server of a test cluster.
type testNode struct {
	srv   *Server
	fsm   *listFSM
	trans *raft.InmemTransport
}

// testLogger sends logs to t.Log so they print only on failure.
func testLogger(t testing.TB) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Output: tWriter{t}, Level: hclog.Debug})
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// newTestNode starts one in-memory server that is not bootstrapped.
func newTestNode(t testing.TB, id string) *testNode {
	t.Helper()
	_, trans := raft.NewInmemTransport(raft.ServerAddress(id + "-addr"))
	f := &listFSM{}
	srv, err := New(Config{ID: id, FSM: f, Transport: trans, InMemory: true, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("New(%s): %v", id, err)
	}
	t.Cleanup(func() { _ = srv.Shutdown() })
	return &testNode{srv: srv, fsm: f, trans: trans}
}

// newTestCluster starts n connected servers, bootstraps them all with the
// same configuration and waits for a leader.
func newTestCluster(t testing.TB, n int) []*testNode {
	t.Helper()
	nodes := make([]*testNode, n)
	var peers []Peer
	for i := range nodes {
		nodes[i] = newTestNode(t, string(rune('a'+i)))
		peers = append(peers, Peer{ID: nodes[i].srv.ID(), Address: nodes[i].srv.Addr(), Voter: true})
	}
	for _, a := range nodes {
		for _, b := range nodes {
			if a != b {
				a.trans.Connect(b.trans.LocalAddr(), b.trans)
			}
		}
	}
	for _, nd := range nodes {
		if err := nd.srv.Bootstrap(peers); err != nil {
			t.Fatalf("Bootstrap: %v", err)
		}
	}
	waitLeader(t, nodes)
	return nodes
}

// waitLeader returns the leader among nodes whose leader services are
// running, failing the test after 10s.
func waitLeader(t testing.TB, nodes []*testNode) *testNode {
	t.Helper()
	var leader *testNode
	waitFor(t, "a ready leader", func() bool {
		for _, nd := range nodes {
			if nd.srv.LeaderReady() {
				leader = nd
				return true
			}
		}
		return false
	})
	return leader
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
