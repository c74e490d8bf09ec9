package server

import (
	"slices"
	"sync"

	"github.com/droverhq/drover/scheduler"
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
	m  map[nsJob]*scheduler.Memo
}

type nsJob struct{ namespace, id string }

// take removes and returns the job's memo, or a new empty one.
func (p *passMemos) take(namespace, jobID string) *scheduler.Memo {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := nsJob{namespace, jobID}
	if m := p.m[k]; m != nil {
		delete(p.m, k)
		return m
	}
	return &scheduler.Memo{}
}

// put keeps the job's memo for its next pass when the job is rolling
// out; at the bound, another job's memo is dropped.
func (p *passMemos) put(namespace, jobID string, m *scheduler.Memo) {
	if !m.Active() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[nsJob]*scheduler.Memo{}
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
// plans.
func (l *Leader) reconcileMemo(in scheduler.Input, memo *scheduler.Memo) *scheduler.Plan {
	if l.memoPlans == nil {
		return scheduler.ReconcileMemo(in, memo)
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
