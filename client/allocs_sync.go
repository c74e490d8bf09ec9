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
	// AllocsSync returns the node's allocations index, as AllocsIndex
	// does, and the allocations whose index is past since, each with
	// its job (one of held when the servers left it out), without their
	// task states. known, when not 0, is the digest of the allocations
	// the agent holds at or below since; when the servers hold the same
	// there, the answer's index map is nil and KnownCurrent set. It
	// blocks while minIndex (when > 0) is current, at most wait.
	AllocsSync(ctx context.Context, nodeID string, since uint64, known structs.AllocsDigest, held []*structs.Job, minIndex uint64, wait time.Duration) (*apiclient.NodeAllocsSync, uint64, error)
}

// AllocsSync implements allocsSyncer, with ?stale as AllocsIndex.
func (h *HTTPServers) AllocsSync(ctx context.Context, nodeID string, since uint64, known structs.AllocsDigest, held []*structs.Job, minIndex uint64, wait time.Duration) (*apiclient.NodeAllocsSync, uint64, error) {
	s, meta, err := h.nc.AllocsSync(ctx, nodeID, since, known, held, &apiclient.QueryOptions{
		WaitIndex: minIndex, WaitTime: wait, AllowStale: true,
	})
	if err != nil {
		return nil, 0, err
	}
	return s, meta.LastIndex, nil
}

// AllocsSync implements allocsSyncer when the wrapped ServerAPI does.
func (n nodeAuth) AllocsSync(ctx context.Context, nodeID string, since uint64, known structs.AllocsDigest, held []*structs.Job, minIndex uint64, wait time.Duration) (*apiclient.NodeAllocsSync, uint64, error) {
	s, ok := n.api.(allocsSyncer)
	if !ok {
		return nil, 0, apiclient.ErrSyncUnsupported
	}
	return s.AllocsSync(n.ctx(ctx), nodeID, since, known, held, minIndex, wait)
}

// knownDigest is the digest of the allocs in known at or below since.
func knownDigest(known map[string]uint64, since uint64) structs.AllocsDigest {
	var d structs.AllocsDigest
	for id, idx := range known {
		if idx <= since {
			d = d.Add(id, idx)
		}
	}
	return d
}

// syncedPresent is the node's allocs index from an allocs-sync answer:
// its index map, or, when the servers matched the agent's digest, the
// allocs the agent knows at or below since with the changed ones.
func syncedPresent(s *apiclient.NodeAllocsSync, known map[string]uint64, since uint64) map[string]uint64 {
	if !s.KnownCurrent {
		return s.Allocs
	}
	present := make(map[string]uint64, len(known)+len(s.Changed))
	for id, idx := range known {
		if idx <= since {
			present[id] = idx
		}
	}
	for _, a := range s.Changed {
		if a != nil {
			present[a.ID] = allocIndex(a)
		}
	}
	return present
}
