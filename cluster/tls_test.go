package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/tlsutil"
	"github.com/droverhq/drover/tlsutil/tlstest"
)

// newTLSNode starts an in-memory server whose Raft transport is mutual TLS
// over real TCP on 127.0.0.1, with the given agent TLS configuration.
func newTLSNode(t *testing.T, id string, c *tlsutil.Configurator) *testNode {
	t.Helper()
	f := &listFSM{}
	srv, err := New(Config{
		ID: id, RaftAddr: loopback.Addr(t), FSM: f, InMemory: true, Logger: testLogger(t),
		TLS: &TLS{Server: c.RaftServer(), Client: c.RaftClient()},
	})
	if err != nil {
		t.Fatalf("New(%s): %v", id, err)
	}
	t.Cleanup(func() { _ = srv.Shutdown() })
	return &testNode{srv: srv, fsm: f}
}

// A three-server cluster with tls.rpc elects a leader and replicates.
func TestRaftOverTLSElectsAndReplicates(t *testing.T) {
	ca := tlstest.NewCA(t)
	var nodes []*testNode
	var peers []Peer
	for _, id := range []string{"s1", "s2", "s3"} {
		nd := newTLSNode(t, id, ca.Configurator(tlsutil.RoleServer))
		nodes = append(nodes, nd)
		peers = append(peers, Peer{ID: id, Address: nd.srv.Addr(), Voter: true})
	}
	for _, nd := range nodes {
		if err := nd.srv.Bootstrap(peers); err != nil {
			t.Fatal(err)
		}
	}
	leader := waitLeader(t, nodes)
	ctx, cancel := context.WithTimeout(context.Background(), 10e9)
	defer cancel()
	for i := range 5 {
		if _, _, err := leader.srv.ApplyBytes(ctx, fmt.Appendf(nil, "e%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, nd := range nodes {
		waitFor(t, nd.srv.ID()+" to replicate", func() bool { return nd.fsm.len() == 5 })
	}
}

// A node with a client's certificate, or one of another CA, can neither
// send Raft RPCs to the cluster nor be replicated to.
func TestRaftOverTLSRefusesOtherRoles(t *testing.T) {
	ca := tlstest.NewCA(t)
	other := tlstest.NewCA(t)
	s1 := newTLSNode(t, "s1", ca.Configurator(tlsutil.RoleServer))
	if err := s1.srv.Bootstrap([]Peer{{ID: "s1", Address: s1.srv.Addr(), Voter: true}}); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, []*testNode{s1})
	if _, _, err := s1.srv.ApplyBytes(context.Background(), []byte("x")); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		c    *tlsutil.Configurator
	}{
		{"client certificate", ca.Configurator(tlsutil.RoleClient)},
		{"another CA", other.Configurator(tlsutil.RoleServer)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rogue := newTLSNode(t, "rogue-"+tc.name, tc.c)
			rt := rogue.srv.transport.(*raft.NetworkTransport)
			// The rogue claims a later term: accepted, it would depose the
			// leader.
			var resp raft.RequestVoteResponse
			err := rt.RequestVote("s1", raft.ServerAddress(s1.srv.Addr()), &raft.RequestVoteRequest{
				RPCHeader: raft.RPCHeader{ID: []byte(rogue.srv.ID()), Addr: []byte(rogue.srv.Addr())},
				Term:      100, LastLogIndex: 100, LastLogTerm: 100,
			}, &resp)
			if err == nil {
				t.Fatalf("the cluster answered the rogue's vote request: %+v", resp)
			}
			t.Logf("vote request refused: %v", err)
			if !s1.srv.IsLeader() {
				t.Fatal("the leader stepped down")
			}
			// The leader's transport refuses the rogue as a peer.
			lt := s1.srv.transport.(*raft.NetworkTransport)
			var aresp raft.AppendEntriesResponse
			err = lt.AppendEntries(raft.ServerID(rogue.srv.ID()), raft.ServerAddress(rogue.srv.Addr()), &raft.AppendEntriesRequest{
				RPCHeader: raft.RPCHeader{ID: []byte("s1"), Addr: []byte(s1.srv.Addr())}, Term: 1,
			}, &aresp)
			if err == nil {
				t.Fatal("the leader's transport accepted the rogue as a peer")
			}
			t.Logf("append entries refused: %v", err)
			if tc.name == "client certificate" && !errors.Is(err, tlsutil.ErrPeerRole) {
				t.Errorf("err = %v, want the role refusal", err)
			}
		})
	}
}
