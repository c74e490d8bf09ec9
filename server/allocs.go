package server

import (
	"context"
	"sync"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// clientBatch is the client updates of concurrent callers, written as one
// entry.
type clientBatch struct {
	allocs []*structs.Allocation
	evals  []*structs.Evaluation
	jobs   map[[2]string]bool // jobs with a retry eval in the batch
	freed  bool

	done  chan struct{}
	index uint64
	err   error
}

// clientBatcher coalesces client updates without timers: a caller that
// finds no write in flight writes at once; callers that arrive while a
// write is in flight join the next batch, which the writing caller sends
// as soon as its own entry is applied. A batch holds at most
// maxClientBatchAllocs allocations (unless one caller brings more); later
// callers start the batch after it, so that no entry grows with the load:
// with thousands of nodes reporting, one unbounded batch became an entry
// of tens of megabytes, and a follower catching up was sent dozens of
// them in one call.
type clientBatcher struct {
	mu sync.Mutex
	// queue holds the batches waiting to be written, oldest first.
	queue    []*clientBatch
	flushing bool
	// onJoin, when set (tests), is called after a caller joins a batch
	// that another caller will write.
	onJoin func()
}

// UpdateAllocsFromClient applies what a client reports of its allocations
// (status, task states, deployment health) at once, stamping the time;
// reports of concurrent callers are coalesced into one entry. An alloc
// that turned failed gets a retry-failed-alloc evaluation for its job
// (one per job), so that the scheduler reschedules it. An alloc that
// finished frees capacity: blocked evaluations are woken. It returns the
// index of the entry that carried the updates.
func (l *Leader) UpdateAllocsFromClient(ctx context.Context, allocs []*structs.Allocation) (uint64, error) {
	snap := l.store().Snapshot()
	now := l.clock.Now().UnixNano()
	var updates []*structs.Allocation
	var evals []*structs.Evaluation
	freed := false
	for _, u := range allocs {
		if u == nil || u.ID == "" {
			continue
		}
		updates = append(updates, u)
		existing, err := snap.AllocByID(u.ID)
		if err != nil {
			return 0, err
		}
		if existing == nil || existing.ClientTerminalStatus() || !u.ClientTerminalStatus() {
			continue
		}
		freed = true
		if u.ClientStatus != structs.AllocClientStatusFailed || existing.DesiredStatus != structs.AllocDesiredStatusRun {
			continue
		}
		job, err := snap.JobByID(existing.Namespace, existing.JobID)
		if err != nil {
			return 0, err
		}
		if job.Stopped() {
			continue
		}
		evals = append(evals, l.jobEval(job.Namespace, job.ID, job.Type, job.Priority, structs.EvalTriggerRetryFailedAlloc, now))
	}
	if len(updates) == 0 {
		return 0, nil
	}
	b, lead := l.clients.join(updates, evals, freed)
	if lead {
		l.flushClientUpdates(ctx)
	}
	select {
	case <-b.done:
		return b.index, b.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// maxClientBatchAllocs bounds the allocations of one client update entry
// (a variable for tests).
var maxClientBatchAllocs = 500

// join adds updates to the last waiting batch, or to a new one when that
// one is full, and reports whether the caller must write the batches (no
// write is in flight).
func (c *clientBatcher) join(allocs []*structs.Allocation, evals []*structs.Evaluation, freed bool) (*clientBatch, bool) {
	c.mu.Lock()
	var b *clientBatch
	if n := len(c.queue); n > 0 && len(c.queue[n-1].allocs)+len(allocs) <= maxClientBatchAllocs {
		b = c.queue[n-1]
	} else {
		b = &clientBatch{jobs: map[[2]string]bool{}, done: make(chan struct{})}
		c.queue = append(c.queue, b)
	}
	b.allocs = append(b.allocs, allocs...)
	for _, e := range evals {
		k := [2]string{e.Namespace, e.JobID}
		if !b.jobs[k] {
			b.jobs[k] = true
			b.evals = append(b.evals, e)
		}
	}
	b.freed = b.freed || freed
	lead := !c.flushing
	c.flushing = true
	onJoin := c.onJoin
	c.mu.Unlock()
	if !lead && onJoin != nil {
		onJoin()
	}
	return b, lead
}

// clientWriteTimeout bounds one batch's write (a variable for tests).
var clientWriteTimeout = waitIndexTimeout

// flushClientUpdates writes the waiting batches in order until none is
// left. The
// writes outlive the leading caller's cancellation, since they carry
// other callers' updates; each batch gets its own clientWriteTimeout, so
// that under sustained load the later batches of a long flush do not
// fail for the time the earlier ones took.
func (l *Leader) flushClientUpdates(ctx context.Context) {
	base := context.WithoutCancel(ctx)
	for {
		l.clients.mu.Lock()
		if len(l.clients.queue) == 0 {
			l.clients.flushing = false
			l.clients.mu.Unlock()
			return
		}
		b := l.clients.queue[0]
		l.clients.queue[0] = nil
		l.clients.queue = l.clients.queue[1:]
		l.clients.mu.Unlock()
		req := &structs.AllocClientUpdateRequest{Allocs: b.allocs, Evals: b.evals, UpdatedAt: l.clock.Now().UnixNano()}
		wctx, cancel := context.WithTimeout(base, clientWriteTimeout)
		_, b.index, b.err = l.apply(wctx, fsm.AllocClientUpdateRequestType, req)
		cancel()
		if b.err == nil && b.freed {
			if t, err := l.term(); err == nil {
				l.unblock(t, b.index)
			}
		}
		close(b.done)
	}
}
