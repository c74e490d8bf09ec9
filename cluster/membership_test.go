package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/droverhq/drover/internal/loopback"
)

// A bogus server added as a non-voter costs the cluster nothing: the single
// server keeps its leadership and takes writes; removing the bogus server
// works. (The same server added as a voter would cost the single server
// its quorum.)
func TestNonvoterAtABogusAddressKeepsTheQuorum(t *testing.T) {
	nodes := newTCPCluster(t, 1, true)
	leader := nodes[0].srv
	bogus := loopback.Addr(t) // nothing listens there
	if err := leader.AddNonvoter("bogus", bogus); err != nil {
		t.Fatal(err)
	}
	// Twice is a no-op.
	if err := leader.AddNonvoter("bogus", bogus); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, _, err := leader.ApplyBytes(context.Background(), []byte(fmt.Sprint(i))); err != nil {
			t.Fatalf("write %d with a bogus non-voter: %v", i, err)
		}
	}
	peers, _, err := leader.Configuration()
	if err != nil {
		t.Fatal(err)
	}
	if len(peers) != 2 || peers[1].ID != "bogus" || peers[1].Voter {
		t.Fatalf("configuration %+v, want the leader and a non-voter", peers)
	}
	if !leader.IsLeader() {
		t.Fatal("the leader stepped down")
	}
	// Neither the leader's own address nor its ID can be taken over.
	if err := leader.AddNonvoter("other", leader.Addr()); err == nil {
		t.Fatal("a join at the leader's address was accepted")
	}
	if err := leader.RemoveServer("bogus"); err != nil {
		t.Fatal(err)
	}
}

// A server added as a non-voter receives the log and is promoted by
// AddVoter.
func TestNonvoterCatchesUpAndIsPromoted(t *testing.T) {
	nodes := newTCPCluster(t, 1, true)
	leader := nodes[0].srv
	for i := range 10 {
		if _, _, err := leader.ApplyBytes(context.Background(), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	f := &listFSM{}
	joiner, err := New(Config{DataDir: t.TempDir(), RaftAddr: loopback.Addr(t), FSM: f, Logger: testLogger(t), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = joiner.Shutdown() })
	if err := leader.AddNonvoter(joiner.ID(), joiner.Addr()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the non-voter to catch up", func() bool { return f.len() == 10 })
	if err := leader.AddVoter(joiner.ID(), joiner.Addr()); err != nil {
		t.Fatal(err)
	}
	peers, _, _ := leader.Configuration()
	for _, p := range peers {
		if !p.Voter {
			t.Fatalf("%s is still a non-voter after AddVoter", p.ID)
		}
	}
}

// Two servers of three destroyed for good: the survivor restarts with a
// peers.json naming itself alone, becomes leader and keeps every write.
func TestPeersJSONRecoversASurvivorAsASingleServer(t *testing.T) {
	dir := t.TempDir()
	var nodes []*testNode
	var peers []Peer
	for i := range 3 {
		f := &listFSM{}
		srv, err := New(Config{DataDir: filepath.Join(dir, fmt.Sprint(i)), RaftAddr: loopback.Addr(t), FSM: f, Logger: testLogger(t), NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Shutdown() })
		nodes = append(nodes, &testNode{srv: srv, fsm: f})
		peers = append(peers, Peer{ID: srv.ID(), Address: srv.Addr(), Voter: true})
	}
	for _, nd := range nodes {
		if err := nd.srv.Bootstrap(peers); err != nil {
			t.Fatal(err)
		}
	}
	leader := waitLeader(t, nodes)
	for i := range 25 {
		if _, _, err := leader.srv.ApplyBytes(context.Background(), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	var survivor *testNode
	for _, nd := range nodes {
		if nd != leader {
			survivor = nd
		}
	}
	waitFor(t, "the survivor to hold every write", func() bool { return survivor.fsm.len() == 25 })
	for _, nd := range nodes {
		_ = nd.srv.Shutdown()
	}

	id, addr := survivor.srv.ID(), survivor.srv.Addr()
	survivorDir := filepath.Join(dir, fmt.Sprint(indexOf(nodes, survivor)))
	open := func() *testNode {
		f := &listFSM{}
		srv, err := New(Config{DataDir: survivorDir, RaftAddr: addr, FSM: f, Logger: testLogger(t), NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Shutdown() })
		return &testNode{srv: srv, fsm: f}
	}

	// A bad file stops the start and is left in place.
	peersJSON := filepath.Join(survivorDir, PeersJSONFile)
	if err := os.WriteFile(peersJSON, []byte(`[{"id": "x"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{DataDir: survivorDir, RaftAddr: addr, FSM: &listFSM{}, Logger: testLogger(t)}); err == nil {
		t.Fatal("a malformed peers.json was accepted")
	}
	if _, err := os.Stat(peersJSON); err != nil {
		t.Fatalf("the malformed peers.json was removed: %v", err)
	}

	content := fmt.Sprintf(`[{"id": %q, "address": %q, "non_voter": false}]`, id, addr)
	if err := os.WriteFile(peersJSON, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	recovered := open()
	waitLeader(t, []*testNode{recovered})
	waitFor(t, "every write to be back", func() bool { return recovered.fsm.len() >= 25 })
	if _, err := os.Stat(peersJSON); !os.IsNotExist(err) {
		t.Fatalf("peers.json is still there after the recovery: %v", err)
	}
	got, _, err := recovered.srv.Configuration()
	if err != nil || len(got) != 1 || got[0].ID != id || !got[0].Voter {
		t.Fatalf("configuration after recovery %+v, %v", got, err)
	}
	if _, _, err := recovered.srv.ApplyBytes(context.Background(), []byte("after")); err != nil {
		t.Fatalf("write after recovery: %v", err)
	}
	n := recovered.fsm.len()
	_ = recovered.srv.Shutdown()

	// A plain restart afterwards keeps the single-server configuration.
	again := open()
	waitLeader(t, []*testNode{again})
	waitFor(t, "the log to be replayed", func() bool { return again.fsm.len() == n })
}

func indexOf(nodes []*testNode, nd *testNode) int {
	for i, n := range nodes {
		if n == nd {
			return i
		}
	}
	return -1
}
