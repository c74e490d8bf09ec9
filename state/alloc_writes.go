package state

import (
	"sync"

	"github.com/droverhq/drover/structs"
)

// Which of a job's allocations were written since an index.
//
// A rollout's scheduling pass works from the job's memo (scheduler.Memo):
// it needs the job's allocs that changed since the job's last pass, and
// finding them by walking the job index read all 10,000 entries of a big
// job on every pass. The store notes, per job, the IDs of the allocs each
// transaction writes or deletes, before the transaction commits: a reader
// that takes a snapshot afterwards finds every write the snapshot holds
// among them (and perhaps a few more, of transactions after it or that
// aborted, which cost a lookup and change nothing). The notes are not
// replicated state: each store keeps its own from its creation, bounded
// per job, and a reader that asks about an index before what a job's notes
// cover is told so and reads the job's allocs in full.

// maxJobAllocWrites bounds the notes kept per job (past it the older half
// is dropped), maxAllocWrites those of all jobs (past it all are dropped):
// 24 bytes a note.
var (
	maxJobAllocWrites = 1 << 14
	maxAllocWrites    = 1 << 19
)

// allocWrites is a store's notes. Safe for concurrent use: the FSM writes,
// scheduler workers read.
type allocWrites struct {
	mu   sync.Mutex
	jobs map[jobKey]*jobAllocWrites
	// total counts the notes; from is the index up to which all notes
	// were dropped.
	total int
	from  uint64
}

// jobAllocWrites are one job's notes, in index order; since is the index
// up to which notes were dropped.
type jobAllocWrites struct {
	since  uint64
	writes []allocWrite
}

type allocWrite struct {
	index uint64
	id    string
}

// noteAllocWrite records, for Commit, that the transaction writes or
// deletes the alloc.
func (t *WriteTxn) noteAllocWrite(a *structs.Allocation) {
	if a != nil {
		t.allocWrites = append(t.allocWrites, a)
	}
}

// flushAllocWrites hands the transaction's alloc writes to the store's
// notes; Commit calls it before the transaction is visible.
func (t *WriteTxn) flushAllocWrites() {
	if t.store == nil || len(t.allocWrites) == 0 {
		return
	}
	w := &t.store.writes
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.total+len(t.allocWrites) > maxAllocWrites {
		w.jobs, w.total = nil, 0
		if t.index > 0 {
			w.from = max(w.from, t.index-1)
		}
	}
	if w.jobs == nil {
		w.jobs = map[jobKey]*jobAllocWrites{}
	}
	for _, a := range t.allocWrites {
		k := jobKey{a.Namespace, a.JobID}
		j := w.jobs[k]
		if j == nil {
			j = &jobAllocWrites{}
			w.jobs[k] = j
		}
		if len(j.writes) >= maxJobAllocWrites {
			half := max(1, len(j.writes)/2)
			j.since = j.writes[half-1].index
			j.writes = append(j.writes[:0:0], j.writes[half:]...)
			w.total -= half
		}
		j.writes = append(j.writes, allocWrite{t.index, a.ID})
		w.total++
	}
	t.allocWrites = nil
}

// AllocWritesSince returns the IDs of the job's allocations written or
// deleted in this store at an index after index (each once; possibly some
// the caller's snapshot does not hold yet), and whether the store's notes
// cover every such write: false when they were dropped or when the store
// wrote the job's allocs at an index not after an earlier note's (then
// read the job's allocs in full).
func (s *Store) AllocWritesSince(namespace, jobID string, index uint64) ([]string, bool) {
	w := &s.writes
	w.mu.Lock()
	defer w.mu.Unlock()
	if index < w.from {
		return nil, false
	}
	j := w.jobs[jobKey{namespace, jobID}]
	if j == nil {
		return nil, true
	}
	if index < j.since {
		return nil, false
	}
	var ids []string
	seen := map[string]bool{}
	for i := len(j.writes) - 1; i >= 0 && j.writes[i].index > index; i-- {
		if id := j.writes[i].id; !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, true
}
