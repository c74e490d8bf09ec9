package cluster

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestDeposedLeaderCannotCommit is the fencing the leader's services rely
// on (see server's plan applier): an entry a leader appends after it has
// been cut off from the others — a plan computed under a leadership that
// is already lost — never commits once a new leader exists, and is
// dropped from every log when the old leader rejoins. Raft's terms do
// this: the old leader can no longer reach a quorum in its term, and the
// new leader's log overrides its uncommitted tail. So no leadership epoch
// needs to be carried in the entries themselves.
func TestDeposedLeaderCannotCommit(t *testing.T) {
	nodes := newTestCluster(t, 3)
	old := waitLeader(t, nodes)
	ctx := context.Background()
	if _, _, err := old.srv.ApplyBytes(ctx, []byte("before")); err != nil {
		t.Fatal(err)
	}
	var rest []*testNode
	for _, nd := range nodes {
		if nd != old {
			rest = append(rest, nd)
			waitFor(t, "replication", func() bool { return nd.fsm.len() == 1 })
		}
	}
	// Cut the leader off.
	old.trans.DisconnectAll()
	for _, nd := range rest {
		nd.trans.Disconnect(old.trans.LocalAddr())
	}
	// The deposed leader's write, racing its step-down: it must fail.
	stale := make(chan error, 1)
	go func() {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, _, err := old.srv.ApplyBytes(c, []byte("stale-plan"))
		stale <- err
	}()
	newLeader := waitLeader(t, rest)
	if _, _, err := newLeader.srv.ApplyBytes(ctx, []byte("after")); err != nil {
		t.Fatalf("write on the new leader: %v", err)
	}
	select {
	case err := <-stale:
		if err == nil {
			t.Fatal("the deposed leader's write was acknowledged")
		}
		if !errors.Is(err, ErrLeadershipLost) && !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrTimeout) {
			t.Fatalf("deposed leader's write failed with %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the deposed leader's write never returned")
	}

	// Heal: the old leader rejoins as a follower and takes the new log.
	for _, nd := range rest {
		old.trans.Connect(nd.trans.LocalAddr(), nd.trans)
		nd.trans.Connect(old.trans.LocalAddr(), old.trans)
	}
	want := []string{"before", "after"}
	for _, nd := range nodes {
		waitFor(t, "the new leader's log everywhere", func() bool {
			nd.fsm.mu.Lock()
			defer nd.fsm.mu.Unlock()
			return slices.Equal(nd.fsm.entries, want)
		})
	}
}
