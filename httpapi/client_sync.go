package httpapi

import (
	"net/http"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The allocs-sync endpoint: a node's long poll for the allocs the servers
// changed, answered in one round trip (see AllocsSyncRequest), from the
// changed allocs alone when the client is current.

// nodeAllocsSync answers the node's allocs-index and, in the same answer,
// the allocs changed since the client's last answer (see AllocsSyncRequest).
func (s *Server) nodeAllocsSync(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	var req AllocsSyncRequest
	if err := decodeEncodedBody(r, &req); err != nil {
		return nil, err
	}
	held := heldIndex(req.HeldJobs)
	watch := nodeAllocsWatch{id: r.PathValue("id")}
	var last *AllocsSyncResponse
	st := s.backend.State()
	res, idx, err := st.BlockingQuery(r.Context(), o.MinIndex, o.Wait, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		out, wait, err := syncChanged(snap, &watch, &req, o.MinIndex, held)
		if err != nil {
			return nil, 0, err
		}
		if wait {
			// Nothing to answer yet: the query waits, and reads the
			// node's allocs only if it times out first.
			watch.read1 = false
			return nil, 0, nil
		}
		if out != nil {
			last = out
			return out, out.Index, nil
		}
		out, err = syncAll(snap, &watch, &req, held)
		if err != nil {
			return nil, 0, err
		}
		if out == nil {
			return last, last.Index, nil
		}
		last = out
		return out, out.Index, nil
	})
	if err == nil && res == any(nil) {
		// Timed out while nothing changed: the full answer.
		var out *AllocsSyncResponse
		if out, err = syncAll(st.Snapshot(), &nodeAllocsWatch{id: watch.id}, &req, held); err == nil {
			res, idx = out, out.Index
		}
	}
	s.setMeta(w, idx)
	return res, err
}

// syncAll answers a sync from every alloc of the node, or nil when the
// node's entry has not moved since the watch's last read (whose answer
// stands).
func syncAll(snap *state.Snapshot, watch *nodeAllocsWatch, req *AllocsSyncRequest, held map[structs.JobRef]int) (*AllocsSyncResponse, error) {
	allocs, idx, unchanged, err := watch.read(snap)
	if err != nil || unchanged {
		return nil, err
	}
	out := &AllocsSyncResponse{Index: idx}
	var known structs.AllocsDigest
	for _, a := range allocs {
		if ai := allocIndex(a); ai <= req.Since {
			known = known.Add(a.ID, ai)
		}
	}
	if out.KnownCurrent = req.Known != 0 && known == req.Known; !out.KnownCurrent {
		out.Allocs = make(map[string]uint64, len(allocs))
	}
	var changed []*structs.Allocation
	for _, a := range allocs {
		ai := allocIndex(a)
		if out.Allocs != nil {
			out.Allocs[a.ID] = ai
		}
		if ai > req.Since {
			changed = append(changed, a)
		}
	}
	out.addChanged(changed, held)
	return out, nil
}

// syncChanged answers a sync from the node's allocs changed since the
// client's index alone, when the store's digest of the node's allocs,
// less those, is the digest of what the client holds (the common case: the
// client is current up to its index). It returns nil when the answer
// needs every alloc (the node's entry has not moved since the client's
// index, the client sent no digest, the store keeps none for the node, or
// the digests differ); the answer is otherwise the one the full read
// gives (TestAllocsSyncFromChangesMatchesFull).
//
// wait is set instead when nothing changed past the client's index and the
// query waits past it (minIndex): the full read's answer would make the
// query wait too (its index is at most the client's), and reading it is
// left to the end of the wait.
func syncChanged(snap *state.Snapshot, watch *nodeAllocsWatch, req *AllocsSyncRequest, minIndex uint64, held map[structs.JobRef]int) (out *AllocsSyncResponse, wait bool, err error) {
	entry, err := snap.NodeAllocsIndex(watch.id)
	if err != nil || entry == 0 || (watch.read1 && entry == watch.lastEntry) {
		return nil, false, err
	}
	// The node's entry is watched; the allocs are read unwatched, as
	// nodeAllocsWatch.read reads them.
	read := snap.WithWatch(nil)
	changed, err := read.NodeAllocsChangedAfter(watch.id, req.Since)
	if err != nil {
		return nil, false, err
	}
	all, ok, err := read.NodeAllocsDigest(watch.id)
	if err != nil || !ok || all == 0 {
		// No digest, or no allocs: the full read's index is then the
		// allocs table's.
		return nil, false, err
	}
	if len(changed) == 0 && entry <= req.Since {
		return nil, minIndex >= req.Since, nil
	}
	if req.Known == 0 {
		return nil, false, nil
	}
	idx := entry
	for _, a := range changed {
		ai := allocIndex(a)
		all = all.Remove(a.ID, ai)
		idx = max(idx, ai)
	}
	if all != req.Known {
		return nil, false, nil
	}
	out = &AllocsSyncResponse{Index: idx, KnownCurrent: true}
	out.addChanged(changed, held)
	watch.read1, watch.lastEntry = true, entry
	return out, false, nil
}

// addChanged sets the answer's changed allocs, in their client's form and
// sorted by ID, leaving out the jobs the client holds.
func (out *AllocsSyncResponse) addChanged(changed []*structs.Allocation, held map[structs.JobRef]int) {
	for _, a := range changed {
		c := clientView(a)
		if i, ok := held[a.Job.Ref()]; ok && a.Job != nil {
			if out.FromHeld == nil {
				out.FromHeld = map[string]int{}
			}
			out.FromHeld[a.ID] = i
			c.Job = nil
		}
		out.Changed = append(out.Changed, c)
	}
	sort.Slice(out.Changed, func(a, b int) bool { return out.Changed[a].ID < out.Changed[b].ID })
}

// clientView is a copy of an allocation without what its client has no
// use for: the task states it reported itself, the placement's metrics
// and the servers' record of its state changes (the larger part of an
// alloc without its job).
func clientView(a *structs.Allocation) *structs.Allocation {
	c := *a
	c.TaskStates, c.Metrics, c.AllocStates = nil, nil, nil
	return &c
}

// heldIndex maps each job version a client holds to its first position
// in the request's list.
func heldIndex(refs []structs.JobRef) map[structs.JobRef]int {
	held := make(map[structs.JobRef]int, len(refs))
	for i, ref := range refs {
		if _, dup := held[ref]; !dup {
			held[ref] = i
		}
	}
	return held
}
