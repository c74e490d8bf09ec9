package client

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// ServerAPI is how the agent talks to the servers; HTTPServers is the
// real one, tests use an in-memory fake. Calls may be made concurrently.
type ServerAPI interface {
	// Register registers (or re-registers) the node and returns the TTL
	// within which it must heartbeat.
	Register(ctx context.Context, node *structs.Node) (ttl time.Duration, err error)
	// Heartbeat tells the servers the node is alive and returns the TTL;
	// an error wrapping ErrNodeUnknown when they do not know the node.
	Heartbeat(ctx context.Context, nodeID string) (ttl time.Duration, err error)
	// AllocsIndex returns the node's allocation IDs, each with the index
	// of the servers' last change to it (AllocModifyIndex), and the
	// highest of them. It blocks while minIndex (when > 0) is current, at
	// most wait.
	AllocsIndex(ctx context.Context, nodeID string, minIndex uint64, wait time.Duration) (map[string]uint64, uint64, error)
	// GetAllocs returns the named allocations with their jobs, leaving
	// out those the servers do not know. An alloc whose job is one of
	// held may be given that copy of it (the servers need not send it
	// again). It waits (at most wait) until one of them is past minIndex
	// when minIndex > 0.
	GetAllocs(ctx context.Context, ids []string, held []*structs.Job, minIndex uint64, wait time.Duration) ([]*structs.Allocation, error)
	// UpdateAllocs reports the client's view of its allocations.
	UpdateAllocs(ctx context.Context, allocs []*structs.Allocation) error
}

// HTTPServers is the ServerAPI over the servers' HTTP API, failing over
// between their addresses (see apiclient.NodeClient).
type HTTPServers struct {
	nc *apiclient.NodeClient
}

// ResolveACL asks the servers what a token grants, as the node whose
// secret the context carries (see nodeAuth).
func (h *HTTPServers) ResolveACL(ctx context.Context, token string) (*structs.ACLResolveResponse, error) {
	return h.nc.ResolveACL(ctx, token)
}

var _ ServerAPI = (*HTTPServers)(nil)

// Address returns the address of the server calls go to first; tasks'
// templates read Nomad's API there.
func (h *HTTPServers) Address() string { return h.nc.Current() }

// Rebalance moves the calls to a server picked at random (see
// apiclient.NodeClient.Rebalance); the agent calls it every few minutes.
func (h *HTTPServers) Rebalance() { h.nc.Rebalance() }

// NewHTTPServers returns the ServerAPI for the given HTTP addresses.
func NewHTTPServers(addrs []string) (*HTTPServers, error) {
	nc, err := apiclient.NewNodeClient(addrs)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return &HTTPServers{nc: nc}, nil
}

// Register implements ServerAPI.
func (h *HTTPServers) Register(ctx context.Context, node *structs.Node) (time.Duration, error) {
	r, err := h.nc.Register(ctx, node)
	if err != nil {
		return 0, err
	}
	return r.HeartbeatTTL, nil
}

// Heartbeat implements ServerAPI.
func (h *HTTPServers) Heartbeat(ctx context.Context, nodeID string) (time.Duration, error) {
	r, err := h.nc.Heartbeat(ctx, nodeID)
	if apiclient.IsNotFound(err) {
		return 0, fmt.Errorf("%w: %w", ErrNodeUnknown, err)
	}
	if err != nil {
		return 0, err
	}
	return r.HeartbeatTTL, nil
}

// AllocsIndex implements ServerAPI. It reads with ?stale, as Nomad's
// clients do, so that any server answers from its own copy.
func (h *HTTPServers) AllocsIndex(ctx context.Context, nodeID string, minIndex uint64, wait time.Duration) (map[string]uint64, uint64, error) {
	ix, meta, err := h.nc.AllocsIndex(ctx, nodeID, &apiclient.QueryOptions{
		WaitIndex: minIndex, WaitTime: wait, AllowStale: true,
	})
	if err != nil {
		return nil, 0, err
	}
	return ix.Allocs, meta.LastIndex, nil
}

// GetAllocs implements ServerAPI, with ?stale as AllocsIndex.
func (h *HTTPServers) GetAllocs(ctx context.Context, ids []string, held []*structs.Job, minIndex uint64, wait time.Duration) ([]*structs.Allocation, error) {
	allocs, _, err := h.nc.GetAllocs(ctx, ids, held, &apiclient.QueryOptions{
		WaitIndex: minIndex, WaitTime: wait, AllowStale: true,
	})
	return allocs, err
}

// UpdateAllocs implements ServerAPI.
func (h *HTTPServers) UpdateAllocs(ctx context.Context, allocs []*structs.Allocation) error {
	_, err := h.nc.UpdateAllocs(ctx, allocs)
	return err
}

// AllocIdentities asks the servers for the workload identities of an
// allocation's tasks, as the node whose secret the context carries.
func (h *HTTPServers) AllocIdentities(ctx context.Context, allocID string, tasks []string) (*structs.AllocIdentityResponse, error) {
	return h.nc.AllocIdentities(ctx, allocID, tasks)
}
