package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// clientServices is the shape the HTTP API's client endpoints call
// (httpapi.ClientBackend); the Leader fits it as is.
type clientServices interface {
	RegisterNode(ctx context.Context, node *structs.Node) (ttl time.Duration, index uint64, err error)
	NodeHeartbeat(ctx context.Context, nodeID string) (time.Duration, error)
	UpdateAllocsFromClient(ctx context.Context, allocs []*structs.Allocation) (uint64, error)
}

var _ clientServices = (*Leader)(nil)

func TestHeartbeatErrors(t *testing.T) {
	h := newHarness(t)
	if _, err := h.leader.NodeHeartbeat(context.Background(), "node-a"); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("heartbeat between terms: %v, want ErrNotLeader", err)
	}
	h.start()
	_, err := h.leader.NodeHeartbeat(h.ctx, "nobody")
	if !errors.Is(err, ErrNodeNotFound) || !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("heartbeat of an unknown node: %v", err)
	}
	ttl, idx, err := h.leader.RegisterNode(h.ctx, testNode("a", 1000, 1024))
	must(t, err)
	if ttl != 10*time.Second || idx == 0 {
		t.Fatalf("register: ttl %v index %d", ttl, idx)
	}
	if _, err := h.leader.UpdateNodeStatus(h.ctx, "node-a", "bogus", ""); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("bogus status: %v", err)
	}
	if _, _, err := h.leader.RegisterNode(h.ctx, &structs.Node{}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("node without ID: %v", err)
	}
	if _, err := h.leader.RegisterJob(h.ctx, &structs.Job{}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("job without ID: %v", err)
	}
}
