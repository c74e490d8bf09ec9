package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestApplyReturnsResponseIndexAndFSMError(t *testing.T) {
	nodes := newTestCluster(t, 3)
	leader := waitLeader(t, nodes)
	ctx := context.Background()

	resp, idx1, err := leader.srv.ApplyBytes(ctx, []byte("one"))
	if err != nil || resp != 1 || idx1 == 0 {
		t.Fatalf("first apply = (%v, %d, %v), want (1, >0, nil)", resp, idx1, err)
	}
	resp, idx2, err := leader.srv.ApplyBytes(ctx, []byte("reject me"))
	if !errors.Is(err, errRejected) {
		t.Fatalf("rejected apply error = %v, want the state machine's error", err)
	}
	if resp != nil || idx2 <= idx1 {
		t.Fatalf("rejected apply = (%v, %d), want (nil, > %d)", resp, idx2, idx1)
	}
	resp, _, err = leader.srv.ApplyBytes(ctx, []byte("two"))
	if err != nil || resp != 2 {
		t.Fatalf("apply after a rejection = (%v, %v), want (2, nil)", resp, err)
	}
	// Every server applies the same entries.
	for _, nd := range nodes {
		waitFor(t, "replication", func() bool { return nd.fsm.len() == 2 })
	}
}

func TestApplyOnFollowerIsNotLeader(t *testing.T) {
	nodes := newTestCluster(t, 3)
	leader := waitLeader(t, nodes)
	for _, nd := range nodes {
		if nd == leader {
			continue
		}
		_, _, err := nd.srv.ApplyBytes(context.Background(), []byte("x"))
		if !errors.Is(err, ErrNotLeader) {
			t.Fatalf("follower apply error = %v, want ErrNotLeader", err)
		}
		if addr, id := nd.srv.Leader(); addr != leader.srv.Addr() || id != leader.srv.ID() {
			t.Fatalf("follower sees leader (%q, %q), want (%q, %q)", addr, id, leader.srv.Addr(), leader.srv.ID())
		}
	}
}

func TestApplyWithEndedContext(t *testing.T) {
	nodes := newTestCluster(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ctx, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel2()
	if _, _, err := nodes[0].srv.ApplyBytes(ctx, []byte("x")); !errors.Is(err, ErrTimeout) {
		t.Fatalf("error = %v, want ErrTimeout", err)
	}
}

func TestApplyAfterShutdown(t *testing.T) {
	nodes := newTestCluster(t, 1)
	if err := nodes[0].srv.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := nodes[0].srv.ApplyBytes(context.Background(), []byte("x")); !errors.Is(err, ErrShutdown) {
		t.Fatalf("error = %v, want ErrShutdown", err)
	}
}

// leaderEvent records a leader service starting or stopping.
type leaderEvent struct {
	id      string
	started bool
	applied int // entries in the local state when the service started
}

func TestLeaderServicesFollowLeadership(t *testing.T) {
	nodes := newTestCluster(t, 3)
	events := make(chan leaderEvent, 16)
	for _, nd := range nodes {
		nd := nd
		nd.srv.OnLeadership("recorder", func(ctx context.Context) {
			events <- leaderEvent{id: nd.srv.ID(), started: true, applied: nd.fsm.len()}
			<-ctx.Done()
			events <- leaderEvent{id: nd.srv.ID()}
		})
	}
	first := waitLeader(t, nodes)
	ev := nextEvent(t, events)
	if !ev.started || ev.id != first.srv.ID() {
		t.Fatalf("first event %+v, want the leader %s starting (registered after election)", ev, first.srv.ID())
	}

	for i := 0; i < 5; i++ {
		if _, _, err := first.srv.ApplyBytes(context.Background(), []byte("entry")); err != nil {
			t.Fatal(err)
		}
	}
	if err := first.srv.raft.LeadershipTransfer().Error(); err != nil {
		t.Fatalf("leadership transfer: %v", err)
	}
	// The old leader's services stop and the new leader's start on
	// different servers: the two events may arrive in either order.
	var stopped, started *leaderEvent
	for i := 0; i < 2; i++ {
		ev := nextEvent(t, events)
		switch {
		case !ev.started && ev.id == first.srv.ID() && stopped == nil:
			stopped = &ev
		case ev.started && ev.id != first.srv.ID() && started == nil:
			started = &ev
		default:
			t.Fatalf("event %+v; want the old leader %s stopping and a new leader starting", ev, first.srv.ID())
		}
	}
	// The Barrier before announcing leadership means the new leader's
	// services see every committed entry.
	if started.applied != 5 {
		t.Fatalf("new leader's service saw %d entries at start, want 5", started.applied)
	}
	if first.srv.LeaderReady() {
		t.Fatal("old leader still reports LeaderReady")
	}
}

func nextEvent(t *testing.T, ch <-chan leaderEvent) leaderEvent {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a leadership event")
		return leaderEvent{}
	}
}

func TestLeaderServiceStopsOnShutdown(t *testing.T) {
	nodes := newTestCluster(t, 1)
	stopped := make(chan struct{})
	nodes[0].srv.OnLeadership("waiter", func(ctx context.Context) {
		<-ctx.Done()
		close(stopped)
	})
	if err := nodes[0].srv.Shutdown(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("leader service still running after Shutdown")
	}
}

func TestBootstrapOnlyOnce(t *testing.T) {
	nodes := newTestCluster(t, 3)
	leader := waitLeader(t, nodes)
	has, err := leader.srv.HasState()
	if err != nil || !has {
		t.Fatalf("HasState = (%v, %v), want (true, nil)", has, err)
	}
	err = leader.srv.Bootstrap([]Peer{{ID: leader.srv.ID(), Address: leader.srv.Addr()}})
	if !errors.Is(err, ErrAlreadyBootstrapped) {
		t.Fatalf("second Bootstrap error = %v, want ErrAlreadyBootstrapped", err)
	}
	fresh := newTestNode(t, "fresh")
	if has, err := fresh.srv.HasState(); err != nil || has {
		t.Fatalf("fresh HasState = (%v, %v), want (false, nil)", has, err)
	}
}

func TestAddVoterJoinsAndCatchesUp(t *testing.T) {
	nodes := newTestCluster(t, 3)
	leader := waitLeader(t, nodes)
	if _, _, err := leader.srv.ApplyBytes(context.Background(), []byte("before")); err != nil {
		t.Fatal(err)
	}
	late := newTestNode(t, "late")
	for _, nd := range nodes {
		nd.trans.Connect(late.trans.LocalAddr(), late.trans)
		late.trans.Connect(nd.trans.LocalAddr(), nd.trans)
	}
	if err := nodes[0].srv.AddVoter(late.srv.ID(), late.srv.Addr()); err == nil && nodes[0] != leader {
		t.Fatal("AddVoter on a follower succeeded")
	}
	if err := leader.srv.AddVoter(late.srv.ID(), late.srv.Addr()); err != nil {
		t.Fatalf("AddVoter: %v", err)
	}
	waitFor(t, "the new voter to catch up", func() bool { return late.fsm.len() == 1 })
	peers, _, err := leader.srv.Configuration()
	if err != nil {
		t.Fatal(err)
	}
	if len(peers) != 4 {
		t.Fatalf("configuration has %d servers, want 4: %+v", len(peers), peers)
	}
	// A replacement at an existing address takes the old server's place.
	if err := leader.srv.AddVoter("replacement", late.srv.Addr()); err != nil {
		t.Fatalf("AddVoter(replacement): %v", err)
	}
	peers, _, _ = leader.srv.Configuration()
	for _, p := range peers {
		if p.ID == late.srv.ID() {
			t.Fatalf("replaced server %s still in configuration %+v", p.ID, peers)
		}
	}
}

func TestServerIDIsKeptOnDisk(t *testing.T) {
	dir := t.TempDir()
	id1, err := LoadOrCreateServerID(dir)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := LoadOrCreateServerID(dir)
	if err != nil || id1 != id2 {
		t.Fatalf("second load = (%q, %v), want (%q, nil)", id2, err, id1)
	}
	if err := os.WriteFile(filepath.Join(dir, serverIDFile), []byte("not-a-uuid"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateServerID(dir); err == nil {
		t.Fatal("a corrupt server-id file was accepted")
	}
}
