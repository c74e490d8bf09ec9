package cluster

import (
	"context"
	"fmt"
	"testing"
)

// Entries enqueued one after the other are appended, applied and answered
// in that order, on every server, while all are in flight together.
func TestEnqueuedEntriesKeepTheirOrder(t *testing.T) {
	nodes := newTestCluster(t, 3)
	leader := waitLeader(t, nodes)
	ctx := context.Background()
	const n = 20
	waits := make([]func() (any, uint64, error), 0, n)
	for i := range n {
		waits = append(waits, leader.srv.EnqueueBytes(ctx, fmt.Appendf(nil, "entry %d", i)))
	}
	var last uint64
	for i, wait := range waits {
		resp, idx, err := wait()
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if resp != i+1 || idx <= last {
			t.Fatalf("entry %d = (%v, index %d), want (%d, index > %d)", i, resp, idx, i+1, last)
		}
		last = idx
	}
	for _, nd := range nodes {
		waitFor(t, "replication", func() bool { return nd.fsm.len() == n })
	}
}

func TestEnqueueAfterShutdown(t *testing.T) {
	nodes := newTestCluster(t, 1)
	waitLeader(t, nodes)
	if err := nodes[0].srv.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := nodes[0].srv.EnqueueBytes(context.Background(), []byte("x"))(); err == nil {
		t.Fatal("enqueue after shutdown succeeded")
	}
}
