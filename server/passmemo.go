package server

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/droverhq/drover/scheduler"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// maxPassMemos and maxPassMemoAllocs bound the memos the leader keeps: a
// memo holds about 160 bytes per alloc of its job (and the allocs as its
// job's last pass read them), and only jobs in the middle of a rollout
// gain from one.
const (
	maxPassMemos      = 64
	maxPassMemoAllocs = 200_000
)

// passMemos keeps each job's scheduler.Memo between its passes
// (scheduler/delta.go), so that a rollout's pass reads the allocs that
// changed since the job's last pass rather than every alloc of the job.
// A memo is a cache: a pass without one (the first of a term, or after
// eviction) is a full pass that builds it, and any state it is given is
// compared with what it holds. Safe for concurrent use; the broker hands
// out one evaluation per job at a time, and a worker takes the job's memo
// for its pass and puts it back after.
type passMemos struct {
	mu sync.Mutex
	m  map[nsJob]*jobMemo
	// incremental counts the passes that read only the allocs written
	// since the job's last pass (tests).
	incremental atomic.Int64
}

// jobMemo is a job's memo with the store and the index of the snapshot
// its last pass read: the next pass reads only the job's allocs that store
// wrote since (state.Store.AllocWritesSince).
type jobMemo struct {
	*scheduler.Memo
	store *state.Store
	index uint64
}

type nsJob struct{ namespace, id string }

// take removes and returns the job's memo, or a new empty one.
func (p *passMemos) take(namespace, jobID string) *jobMemo {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := nsJob{namespace, jobID}
	if m := p.m[k]; m != nil {
		delete(p.m, k)
		return m
	}
	return &jobMemo{Memo: &scheduler.Memo{}}
}

// put keeps the job's memo for its next pass when the job is rolling
// out; at the bound, another job's memo is dropped.
func (p *passMemos) put(namespace, jobID string, m *jobMemo) {
	if !m.Active() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[nsJob]*jobMemo{}
	}
	total := m.Len()
	for _, o := range p.m {
		total += o.Len()
	}
	for k, o := range p.m {
		if len(p.m) < maxPassMemos && total <= maxPassMemoAllocs {
			break
		}
		delete(p.m, k)
		total -= o.Len()
	}
	if total > maxPassMemoAllocs {
		return
	}
	p.m[nsJob{namespace, jobID}] = m
}

// reconcileMemo is the pass's reconciliation from the job's memo. With
// the memoPlans hook set (tests), the full pass also runs on the same
// input, given the IDs the memo's pass minted, and the hook sees both
// plans; it sees two nil plans when the allocs read from the memo are
// not the job index's.
func (l *Leader) reconcileMemo(snap *state.Snapshot, namespace string, in scheduler.Input, memo *scheduler.Memo) *scheduler.Plan {
	if l.memoPlans == nil {
		return scheduler.ReconcileMemo(in, memo)
	}
	if want, err := jobAllocs(snap, namespace, in.JobID); err == nil && !slices.Equal(want, in.Allocs) {
		// The allocs read from the memo must be the job index's.
		l.memoPlans(nil, nil, false)
	}
	var minted []string
	ids := in.IDs
	in.IDs = func() string {
		id := ids()
		minted = append(minted, id)
		return id
	}
	before := memo.Passes()
	plan := scheduler.ReconcileMemo(in, memo)
	replay := slices.Clone(minted)
	in.IDs = func() string {
		if len(replay) == 0 {
			return ids()
		}
		id := replay[0]
		replay = replay[1:]
		return id
	}
	l.memoPlans(plan, scheduler.Reconcile(in), memo.Passes() > before)
	return plan
}

// allocs reads the job's live allocations from snap, taken from st:
// when the job's memo was last updated from a snapshot of st, as the
// memo's allocs with those st wrote since replaced (read by ID), else in
// full through the job index (jobAllocs). A big rollout's pass then reads
// the few allocs its batch changed, not the job's 10,000.
func (p *passMemos) allocs(st *state.Store, snap *state.Snapshot, jm *jobMemo, namespace, jobID string) ([]*structs.Allocation, error) {
	if jm == nil || jm.store != st || !jm.Active() || jm.index == 0 {
		return jobAllocs(snap, namespace, jobID)
	}
	ids, ok := st.AllocWritesSince(namespace, jobID, jm.index)
	if !ok || len(ids) > jm.Len()/4 {
		return jobAllocs(snap, namespace, jobID)
	}
	add := make([]*structs.Allocation, 0, len(ids))
	for _, id := range ids {
		a, err := snap.AllocByID(id)
		if err != nil {
			return nil, err
		}
		// As the job index's live entries: the job's, not stopped or
		// evicted by the servers.
		if a != nil && a.Namespace == namespace && a.JobID == jobID &&
			a.DesiredStatus != structs.AllocDesiredStatusStop && a.DesiredStatus != structs.AllocDesiredStatusEvict {
			add = append(add, a)
		}
	}
	p.incremental.Add(1)
	return jm.AllocsWith(ids, add), nil
}
