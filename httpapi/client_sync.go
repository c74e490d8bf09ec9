package httpapi

import (
	"net/http"
	"sort"
	"sync"

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
	q := syncQuery{store: s.backend.State(), marks: &s.syncMarks, minIndex: o.MinIndex}
	if err := decodeEncodedBody(r, &q.req); err != nil {
		return nil, err
	}
	q.held = heldIndex(q.req.HeldJobs)
	watch := nodeAllocsWatch{id: r.PathValue("id")}
	var last *AllocsSyncResponse
	res, idx, err := q.store.BlockingQuery(r.Context(), o.MinIndex, o.Wait, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		out, wait, err := q.changed(snap, &watch)
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
		out, err = q.all(snap, &watch)
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
		if out, err = q.all(q.store.Snapshot(), &nodeAllocsWatch{id: watch.id}); err == nil {
			res, idx = out, out.Index
		}
	}
	if out, ok := res.(*AllocsSyncResponse); ok && err == nil && out != nil && out.nodeDigest != 0 {
		q.marks.put(watch.id, syncMark{store: q.store, index: out.Index, digest: out.nodeDigest})
	}
	s.setMeta(w, idx)
	return res, err
}

// syncQuery is one sync request and what answering it needs.
type syncQuery struct {
	store    *state.Store
	marks    *syncMarks
	req      AllocsSyncRequest
	held     map[structs.JobRef]int
	minIndex uint64
}

// syncMarks remembers this server's last answer to each node's sync: the
// store it read, the answer's index and the digest of all the node's
// allocs in the state it answered from, which is the client's digest once
// it applied that answer. A client that asks next from that index with
// that digest holds what the servers held there, allocs the servers
// changed since included; it is current unless an alloc left the node
// since (see current).
type syncMarks struct {
	mu sync.Mutex
	m  map[string]syncMark
}

type syncMark struct {
	store  *state.Store
	index  uint64
	digest structs.AllocsDigest
}

// maxSyncMarks bounds the nodes remembered; past it they are forgotten
// and their next syncs read in full.
const maxSyncMarks = 100_000

func (m *syncMarks) put(node string, mark syncMark) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= maxSyncMarks {
		m.m = map[string]syncMark{}
	}
	m.m[node] = mark
}

func (m *syncMarks) get(node string) (syncMark, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mark, ok := m.m[node]
	return mark, ok
}

// current reports whether the client holds what the servers hold at or
// below its index: its digest is that of the node's allocs now at or
// below the index (known), or it is the digest of this server's last
// answer to the node, at the client's index, and no alloc left the node
// since. The second covers the allocs the servers changed since the
// client's index, which the client holds at their earlier index: the
// digest of the allocs now at or below the index leaves them out, and
// every sync that brought a change to an alloc the client ran (a stop)
// was answered with the whole index map.
func (q *syncQuery) current(snap *state.Snapshot, node string, known structs.AllocsDigest) (bool, error) {
	if q.req.Known == 0 {
		return false, nil
	}
	if known == q.req.Known {
		return true, nil
	}
	mark, ok := q.marks.get(node)
	if !ok || mark.store != q.store || mark.index != q.req.Since || mark.digest != q.req.Known {
		return false, nil
	}
	gone, err := snap.NodeAllocsGoneIndex(node)
	return err == nil && gone <= q.req.Since, err
}

// all answers a sync from every alloc of the node, or nil when the node's
// entry has not moved since the watch's last read (whose answer stands).
func (q *syncQuery) all(snap *state.Snapshot, watch *nodeAllocsWatch) (*AllocsSyncResponse, error) {
	allocs, idx, unchanged, err := watch.read(snap)
	if err != nil || unchanged {
		return nil, err
	}
	out := &AllocsSyncResponse{Index: idx}
	var known structs.AllocsDigest
	for _, a := range allocs {
		ai := allocIndex(a)
		if ai <= q.req.Since {
			known = known.Add(a.ID, ai)
		}
		out.nodeDigest = out.nodeDigest.Add(a.ID, ai)
	}
	if out.KnownCurrent, err = q.current(snap.WithWatch(nil), watch.id, known); err != nil {
		return nil, err
	}
	if !out.KnownCurrent {
		out.Allocs = make(map[string]uint64, len(allocs))
	}
	var changed []*structs.Allocation
	for _, a := range allocs {
		ai := allocIndex(a)
		if out.Allocs != nil {
			out.Allocs[a.ID] = ai
		}
		if ai > q.req.Since {
			changed = append(changed, a)
		}
	}
	out.addChanged(changed, q.held)
	return out, nil
}

// changed answers a sync from the node's allocs changed since the
// client's index alone, when the client is current (see current): the
// store's digest of the node's allocs less those changed is the client's,
// or the client applied this server's last answer to it. It returns nil
// when the answer needs every alloc (the node's entry has not moved since
// the client's index, the client sent no digest, the store keeps none for
// the node, or the client is not current); the answer is otherwise the
// one the full read gives (TestAllocsSyncFromChangesMatchesFull).
//
// wait is set instead when nothing changed past the client's index and the
// query waits past it (minIndex): the full read's answer would make the
// query wait too (its index is at most the client's), and reading it is
// left to the end of the wait.
func (q *syncQuery) changed(snap *state.Snapshot, watch *nodeAllocsWatch) (out *AllocsSyncResponse, wait bool, err error) {
	entry, err := snap.NodeAllocsIndex(watch.id)
	if err != nil || entry == 0 || (watch.read1 && entry == watch.lastEntry) {
		return nil, false, err
	}
	// The node's entry is watched; the allocs are read unwatched, as
	// nodeAllocsWatch.read reads them.
	read := snap.WithWatch(nil)
	changed, err := read.NodeAllocsChangedAfter(watch.id, q.req.Since)
	if err != nil {
		return nil, false, err
	}
	total, ok, err := read.NodeAllocsDigest(watch.id)
	if err != nil || !ok || total == 0 {
		// No digest, or no allocs: the full read's index is then the
		// allocs table's.
		return nil, false, err
	}
	if len(changed) == 0 && entry <= q.req.Since {
		return nil, q.minIndex >= q.req.Since, nil
	}
	idx, known := entry, total
	for _, a := range changed {
		ai := allocIndex(a)
		known = known.Remove(a.ID, ai)
		idx = max(idx, ai)
	}
	if current, err := q.current(read, watch.id, known); err != nil || !current {
		return nil, false, err
	}
	out = &AllocsSyncResponse{Index: idx, KnownCurrent: true, nodeDigest: total}
	out.addChanged(changed, q.held)
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
