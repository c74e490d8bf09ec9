package agent

import (
	"context"
	"time"

	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/structs"
)

// The leader's services (eval broker, scheduling workers, plan applier,
// heartbeats, deployment watcher; see package server) run only while this
// server leads: they are registered with the cluster as a leader service.
// The client endpoints are write routes, so the HTTP layer forwards them
// to the leader before these methods are called; on a server that has just
// lost leadership they fail with server.ErrNotLeader.
//
// With them the Agent is an httpapi.ClientBackend.

// RegisterNode registers a client node.
func (a *Agent) RegisterNode(ctx context.Context, node *structs.Node) (time.Duration, uint64, error) {
	return a.leader.RegisterNode(ctx, node)
}

// NodeHeartbeat resets a node's heartbeat timer.
func (a *Agent) NodeHeartbeat(ctx context.Context, nodeID string) (time.Duration, error) {
	return a.leader.NodeHeartbeat(ctx, nodeID)
}

// UpdateAllocsFromClient writes what a client reports of its allocations.
func (a *Agent) UpdateAllocsFromClient(ctx context.Context, allocs []*structs.Allocation) (uint64, error) {
	return a.leader.UpdateAllocsFromClient(ctx, allocs)
}

var (
	_ httpapi.Backend       = (*Agent)(nil)
	_ httpapi.ClientBackend = (*Agent)(nil)
)
