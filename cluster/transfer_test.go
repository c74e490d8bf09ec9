package cluster

import (
	"errors"
	"testing"
	"time"
)

// A leader hands its leadership to another voter and learns the new
// leader; a lone server has nobody to hand it to.
func TestTransferLeadership(t *testing.T) {
	nodes := newTestCluster(t, 3)
	old := waitLeader(t, nodes)
	id, err := old.srv.TransferLeadership(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if id == "" || id == old.srv.ID() || old.srv.IsLeader() {
		t.Fatalf("new leader %q, the old one %q still leading: %v", id, old.srv.ID(), old.srv.IsLeader())
	}
	if _, err := old.srv.TransferLeadership(time.Second); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("a follower's transfer: %v", err)
	}
	lone := newTestCluster(t, 1)
	if _, err := lone[0].srv.TransferLeadership(time.Second); !errors.Is(err, ErrNoTransferTarget) {
		t.Fatalf("a lone server's transfer: %v", err)
	}
}
