package evalbroker

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/droverhq/drover/structs"
)

// Enqueuer takes evaluations that are ready to be scheduled again; the
// Broker is one.
type Enqueuer interface {
	Enqueue(eval *structs.Evaluation) error
}

// Blocked tracks evaluations that could not place every allocation for lack
// of capacity, one per job, and hands them back to an Enqueuer when capacity
// changes. Like the Broker it runs on the leader only, starts disabled and is
// safe for concurrent use.
//
// Drover keeps this simple: any capacity change (a node registers or becomes
// ready, allocations stop) unblocks every tracked evaluation. The capacity
// change's Raft index guards against a lost wake-up: an evaluation whose
// scheduler snapshot predates the latest unblock may have missed the capacity
// it needs, so Block sends it straight back instead of keeping it.
type Blocked struct {
	out         Enqueuer
	onDuplicate func(evals []*structs.Evaluation)

	mu           sync.Mutex
	enabled      bool
	seq          uint64
	byJob        map[jobKey]*entry
	unblockIndex uint64
}

// BlockedStats counts the evaluations in a Blocked tracker.
type BlockedStats struct {
	// Blocked is the number of tracked evaluations (one per job).
	Blocked int
	// UnblockIndex is the highest capacity change index seen.
	UnblockIndex uint64
}

// NewBlocked returns a disabled tracker that unblocks into out. onDuplicate
// receives evaluations replaced by a newer blocked evaluation of the same
// job, for the leader to mark cancelled; it is called without the tracker's
// lock held and must not block for long. It may be nil.
func NewBlocked(out Enqueuer, onDuplicate func(evals []*structs.Evaluation)) *Blocked {
	return &Blocked{out: out, onDuplicate: onDuplicate, byJob: make(map[jobKey]*entry)}
}

// SetEnabled turns the tracker on when this server becomes leader and off
// when it stops being leader; turning it off drops every evaluation.
func (b *Blocked) SetEnabled(enabled bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.enabled == enabled {
		return
	}
	b.enabled = enabled
	if !enabled {
		b.byJob = make(map[jobKey]*entry)
		b.unblockIndex = 0
	}
}

// Block tracks an evaluation that could not place everything. A newer one
// replaces an older one of the same job (the older goes to onDuplicate). If
// capacity changed after the evaluation's SnapshotIndex, it is enqueued at
// once rather than tracked, so the scheduler must stamp SnapshotIndex with
// the index of the state it read. On leadership gain the leader blocks again the
// evaluations whose status in state is blocked.
func (b *Blocked) Block(eval *structs.Evaluation) error {
	if err := checkEval(eval); err != nil {
		return err
	}
	key, ok := keyOf(eval)
	if !ok {
		return fmt.Errorf("%w: blocked evaluation %s has no job", ErrInvalidEval, eval.ID)
	}
	var dup *structs.Evaluation
	b.mu.Lock()
	if !b.enabled {
		b.mu.Unlock()
		return ErrDisabled
	}
	b.seq++
	e := &entry{eval: eval, seq: b.seq}
	old := b.byJob[key]
	if old != nil && old.eval.ID == eval.ID {
		b.mu.Unlock()
		return nil
	}
	if old != nil && !newer(e, old) {
		b.mu.Unlock()
		b.duplicates([]*structs.Evaluation{eval})
		return nil
	}
	if old != nil {
		dup = old.eval
	}
	missed := eval.SnapshotIndex < b.unblockIndex
	if missed {
		delete(b.byJob, key)
	} else {
		b.byJob[key] = e
	}
	b.mu.Unlock()

	if dup != nil {
		b.duplicates([]*structs.Evaluation{dup})
	}
	if missed {
		if err := b.out.Enqueue(eval); err != nil {
			return fmt.Errorf("evalbroker: enqueue blocked evaluation %s: %w", eval.ID, err)
		}
	}
	return nil
}

// duplicates reports replaced evaluations.
func (b *Blocked) duplicates(evals []*structs.Evaluation) {
	if len(evals) > 0 && b.onDuplicate != nil {
		b.onDuplicate(evals)
	}
}

// Unblock records a capacity change at Raft index index and enqueues every
// tracked evaluation, oldest first. It returns how many it enqueued; the
// error joins the enqueue failures, whose evaluations are tracked again
// unless a newer one of the same job arrived meanwhile.
func (b *Blocked) Unblock(index uint64) (int, error) {
	b.mu.Lock()
	if !b.enabled {
		b.mu.Unlock()
		return 0, ErrDisabled
	}
	b.unblockIndex = max(b.unblockIndex, index)
	todo := make([]*entry, 0, len(b.byJob))
	for _, e := range b.byJob {
		todo = append(todo, e)
	}
	clear(b.byJob)
	b.mu.Unlock()

	slices.SortFunc(todo, func(x, y *entry) int { return cmp.Compare(x.seq, y.seq) })
	var errs []error
	var failed []*entry
	n := 0
	for _, e := range todo {
		if err := b.out.Enqueue(e.eval); err != nil {
			errs = append(errs, fmt.Errorf("evalbroker: unblock %s: %w", e.eval.ID, err))
			failed = append(failed, e)
			continue
		}
		n++
	}
	if len(failed) > 0 {
		b.duplicates(b.retrack(failed))
	}
	return n, errors.Join(errs...)
}

// retrack tracks again evaluations that could not be enqueued, keeping the
// newest per job, and returns the ones that lost to a newer one.
func (b *Blocked) retrack(evals []*entry) []*structs.Evaluation {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled {
		return nil
	}
	var dups []*structs.Evaluation
	for _, e := range evals {
		key, _ := keyOf(e.eval)
		cur := b.byJob[key]
		switch {
		case cur == nil:
			b.byJob[key] = e
		case newer(e, cur):
			b.byJob[key] = e
			dups = append(dups, cur.eval)
		default:
			dups = append(dups, e.eval)
		}
	}
	return dups
}

// Untrack forgets the blocked evaluation of a job, if any: the leader calls
// it when the job is stopped or an evaluation of it completed without
// blocking, so the blocked one is no longer needed.
func (b *Blocked) Untrack(namespace, jobID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.byJob, jobKey{namespace: namespace, jobID: jobID})
}

// Tracked returns the blocked evaluation of a job, if any.
func (b *Blocked) Tracked(namespace, jobID string) (*structs.Evaluation, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.byJob[jobKey{namespace: namespace, jobID: jobID}]
	if e == nil {
		return nil, false
	}
	return e.eval, true
}

// Stats returns the tracker's counts.
func (b *Blocked) Stats() BlockedStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BlockedStats{Blocked: len(b.byJob), UnblockIndex: b.unblockIndex}
}
