package client

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// nodeAuth is the ServerAPI of one node: every call presents the node's
// secret (X-Nomad-Token, through the call's context), which the servers
// require with ACLs on. The ServerAPI it wraps may be shared by many
// nodes (a fleet simulator shares one between thousands), each with its
// own secret.
type nodeAuth struct {
	api    ServerAPI
	secret string
}

var _ ServerAPI = nodeAuth{}

func (n nodeAuth) ctx(ctx context.Context) context.Context { return apiclient.WithToken(ctx, n.secret) }

// Register implements ServerAPI.
func (n nodeAuth) Register(ctx context.Context, node *structs.Node) (time.Duration, error) {
	return n.api.Register(n.ctx(ctx), node)
}

// Heartbeat implements ServerAPI.
func (n nodeAuth) Heartbeat(ctx context.Context, nodeID string) (time.Duration, error) {
	return n.api.Heartbeat(n.ctx(ctx), nodeID)
}

// AllocsIndex implements ServerAPI.
func (n nodeAuth) AllocsIndex(ctx context.Context, nodeID string, minIndex uint64, wait time.Duration) (map[string]uint64, uint64, error) {
	return n.api.AllocsIndex(n.ctx(ctx), nodeID, minIndex, wait)
}

// GetAllocs implements ServerAPI.
func (n nodeAuth) GetAllocs(ctx context.Context, ids []string, held []*structs.Job, minIndex uint64, wait time.Duration) ([]*structs.Allocation, error) {
	return n.api.GetAllocs(n.ctx(ctx), ids, held, minIndex, wait)
}

// UpdateAllocs implements ServerAPI.
func (n nodeAuth) UpdateAllocs(ctx context.Context, allocs []*structs.Allocation) error {
	return n.api.UpdateAllocs(n.ctx(ctx), allocs)
}

// ResolveACL asks the servers, as this node, what a token grants.
func (n nodeAuth) ResolveACL(ctx context.Context, token string) (*structs.ACLResolveResponse, error) {
	r, ok := n.api.(aclResolver)
	if !ok {
		return nil, fmt.Errorf("%w: the servers' API cannot resolve tokens", ErrInvalidConfig)
	}
	return r.ResolveACL(n.ctx(ctx), token)
}
