package client

import (
	"context"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// allocsSyncer is a ServerAPI that reads the node's allocations index and
// the allocations changed since the last answer in one round trip (the
// servers' allocs-sync). The agent uses it when its ServerAPI has it, and
// AllocsIndex with GetAllocs when it has not or the servers do not offer
// it (an error wrapping apiclient.ErrSyncUnsupported).
type allocsSyncer interface {
	// AllocsSync returns what AllocsIndex returns and, in changed, the
	// allocations whose index is past since, each with its job (one of
	// held when the servers left it out), without their task states. It
	// blocks while minIndex (when > 0) is current, at most wait.
	AllocsSync(ctx context.Context, nodeID string, since uint64, held []*structs.Job, minIndex uint64, wait time.Duration) (present map[string]uint64, changed []*structs.Allocation, index uint64, err error)
}

// AllocsSync implements allocsSyncer, with ?stale as AllocsIndex.
func (h *HTTPServers) AllocsSync(ctx context.Context, nodeID string, since uint64, held []*structs.Job, minIndex uint64, wait time.Duration) (map[string]uint64, []*structs.Allocation, uint64, error) {
	s, meta, err := h.nc.AllocsSync(ctx, nodeID, since, held, &apiclient.QueryOptions{
		WaitIndex: minIndex, WaitTime: wait, AllowStale: true,
	})
	if err != nil {
		return nil, nil, 0, err
	}
	return s.Allocs, s.Changed, meta.LastIndex, nil
}

// AllocsSync implements allocsSyncer when the wrapped ServerAPI does.
func (n nodeAuth) AllocsSync(ctx context.Context, nodeID string, since uint64, held []*structs.Job, minIndex uint64, wait time.Duration) (map[string]uint64, []*structs.Allocation, uint64, error) {
	s, ok := n.api.(allocsSyncer)
	if !ok {
		return nil, nil, 0, apiclient.ErrSyncUnsupported
	}
	return s.AllocsSync(n.ctx(ctx), nodeID, since, held, minIndex, wait)
}
