package client

import (
	"context"
	"slices"
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

// knownAllocs is the index of the copy of each alloc the agent last
// applied, with the digest of them all kept as it changes: each
// allocs-sync names the digest of those at or below the index it asks
// from, which is all of them (counted again only when one is above it: a
// fetch that brought a copy newer than the index, or servers whose index
// went back).
type knownAllocs struct {
	idx map[string]uint64
	sum structs.AllocsDigest // of every entry
	top uint64               // no entry's index is above it
	// runnersKnown: when reconcile last looked through the agent's
	// allocs, each was known or being collected (reconcile adds only
	// known ones, and forgets one only when it looks through them all).
	runnersKnown bool
}

func newKnownAllocs() *knownAllocs { return &knownAllocs{idx: map[string]uint64{}} }

// set records the index of the copy of id applied.
func (k *knownAllocs) set(id string, index uint64) {
	if old, ok := k.idx[id]; ok {
		if old == index {
			return
		}
		k.sum = k.sum.Remove(id, old)
	}
	k.idx[id] = index
	k.sum = k.sum.Add(id, index)
	k.top = max(k.top, index)
}

// remove forgets id.
func (k *knownAllocs) remove(id string) {
	if old, ok := k.idx[id]; ok {
		k.sum = k.sum.Remove(id, old)
		delete(k.idx, id)
	}
}

// digest is knownDigest of the entries.
func (k *knownAllocs) digest(since uint64) structs.AllocsDigest {
	if k.top > since {
		// top may be left from an entry since removed.
		var top uint64
		for _, i := range k.idx {
			top = max(top, i)
		}
		k.top = top
	}
	if k.top <= since {
		return k.sum
	}
	return knownDigest(k.idx, since)
}

// allocsIndex is the node's allocs index as the servers answered it:
// each alloc they hold for the node at the index of their last change to
// it. When an allocs-sync matched the agent's digest it is the allocs
// the agent knows at or below the index asked from with the changed
// ones, read from those rather than copied out on each answer.
type allocsIndex struct {
	all map[string]uint64 // the whole index, unless synced
	// synced: the index is known (the agent's known allocs) at or below
	// since, and changed; byID indexes changed when it is long.
	synced  bool
	known   map[string]uint64
	since   uint64
	changed []*structs.Allocation
	byID    map[string]uint64
}

// indexOf is an index answered as a map.
func indexOf(m map[string]uint64) allocsIndex { return allocsIndex{all: m} }

// syncedPresent is the node's allocs index from an allocs-sync answer:
// its index map, or, when the servers matched the agent's digest, the
// allocs the agent knows at or below since with the changed ones.
func syncedPresent(s *apiclient.NodeAllocsSync, known map[string]uint64, since uint64) allocsIndex {
	if !s.KnownCurrent {
		return indexOf(s.Allocs)
	}
	p := allocsIndex{synced: true, known: known, since: since, changed: s.Changed}
	if len(s.Changed) > 8 {
		p.byID = make(map[string]uint64, len(s.Changed))
		for _, a := range s.Changed {
			if a != nil {
				p.byID[a.ID] = allocIndex(a)
			}
		}
	}
	return p
}

// get returns id's index and whether the servers hold it.
func (p allocsIndex) get(id string) (uint64, bool) {
	if !p.synced {
		i, ok := p.all[id]
		return i, ok
	}
	if i, ok := p.changedIndex(id); ok {
		return i, true
	}
	if i, ok := p.known[id]; ok && i <= p.since {
		return i, true
	}
	return 0, false
}

// has reports whether the servers hold id: get's answer without the
// index, which for an alloc the agent knows at or below since needs no
// look through the changed ones.
func (p allocsIndex) has(id string) bool {
	if p.synced {
		if i, ok := p.known[id]; ok && i <= p.since {
			return true
		}
	}
	_, ok := p.get(id)
	return ok
}

// changedIndex is the index of id among the changed allocs (the last
// one, should it be listed twice).
func (p allocsIndex) changedIndex(id string) (uint64, bool) {
	if p.byID != nil {
		i, ok := p.byID[id]
		return i, ok
	}
	for j := len(p.changed) - 1; j >= 0; j-- {
		if a := p.changed[j]; a != nil && a.ID == id {
			return allocIndex(a), true
		}
	}
	return 0, false
}

// each calls f with every alloc of the index whose index may differ from
// known's: all of them, or only the changed ones when the rest is known's
// own.
func (p allocsIndex) each(f func(id string, index uint64)) {
	switch {
	case !p.synced:
		for id, i := range p.all {
			f(id, i)
		}
	case p.byID != nil:
		for id, i := range p.byID {
			f(id, i)
		}
	default:
		for j, a := range p.changed {
			if a == nil || slices.ContainsFunc(p.changed[j+1:], func(b *structs.Allocation) bool { return b != nil && b.ID == a.ID }) {
				continue // listed again further on: that one counts
			}
			f(a.ID, allocIndex(a))
		}
	}
}

// holdsAllKnown reports, cheaply, that every alloc of known is in the
// index (false: it may not be).
func (p allocsIndex) holdsAllKnown(known *knownAllocs) bool {
	return p.synced && known.top <= p.since
}
