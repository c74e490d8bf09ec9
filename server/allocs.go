package server

import (
	"context"
	"fmt"
	"sync"
	"time"

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
	// opened is when the batch's first update arrived.
	opened time.Time
	// quiet: no batch had opened within clientBatchWindow before this
	// one; urgent: an update in it makes the scheduler run (it carries
	// an evaluation: a health verdict a rollout waits on, a failure).
	quiet, urgent bool

	done  chan struct{}
	index uint64
	err   error
}

// clientBatcher coalesces client updates: a batch is written once it has
// gathered updates for clientBatchWindow (or is full); callers that
// arrive meanwhile, or while a write is in flight, join the waiting
// batch, which the writing caller sends when its window ends. A batch holds at most
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
	// lastOpened is when the latest batch opened.
	lastOpened time.Time
	// wake tells the writing caller that a batch is waiting (capacity 1).
	wake chan struct{}
	// onJoin, when set (tests), is called after a caller joins a batch
	// that another caller will write.
	onJoin func()
}

// UpdateAllocsFromClient applies what a client reports of its allocations
// (status, task states, deployment health) at once, stamping the time;
// reports of concurrent callers are coalesced into one entry. An alloc
// that turned failed gets a retry-failed-alloc evaluation for its job
// (one per job), so that the scheduler reschedules it; an alloc's first
// healthy verdict in a running deployment gets the evaluation of the
// deployment's next pass (see healthEvals), and that of the replacement of
// an alloc moving off a draining node the pass that stops the old one. An alloc that finished frees
// capacity: blocked evaluations are woken. It returns the
// index of the entry that carried the updates.
func (l *Leader) UpdateAllocsFromClient(ctx context.Context, allocs []*structs.Allocation) (uint64, error) {
	snap := l.store().Snapshot()
	clock := l.clock.Now()
	now := clock.UnixNano()
	var updates []*structs.Allocation
	var evals []*structs.Evaluation
	var healthy map[healthKey]bool
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
		if turnsHealthy(existing, u) {
			if healthy == nil {
				healthy = map[healthKey]bool{}
			}
			healthy[healthKey{existing.Namespace, existing.JobID, existing.DeploymentID}] = true
		}
		if settles, err := settlesMigration(snap, existing, u); err != nil {
			return 0, err
		} else if settles {
			// The replacement of an alloc moving off a draining node is
			// healthy: the pass that stops the old one (drain.go).
			if job, err := snap.JobByID(existing.Namespace, existing.JobID); err != nil {
				return 0, err
			} else if !job.Stopped() {
				evals = append(evals, l.jobEval(job.Namespace, job.ID, job.Type, job.Priority, structs.EvalTriggerNodeDrain, now))
			}
		}
		if existing != nil && existing.ClientStatus == structs.AllocClientStatusUnknown &&
			u.ClientStatus != "" && u.ClientStatus != structs.AllocClientStatusUnknown {
			// Reconnected: the scheduler decides between it and its
			// replacement, or stops it if it was lost meanwhile.
			job, err := snap.JobByID(existing.Namespace, existing.JobID)
			if err != nil {
				return 0, err
			}
			if job != nil && !job.Stopped() {
				evals = append(evals, l.jobEval(job.Namespace, job.ID, job.Type, job.Priority, structs.EvalTriggerReconnect, now))
			}
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
	if len(healthy) > 0 {
		more, err := healthEvals(snap, healthy, clock, l.newID)
		if err != nil {
			return 0, err
		}
		evals = append(evals, more...)
	}
	b, lead := l.clients.join(updates, evals, freed, len(evals) > 0)
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
func (c *clientBatcher) join(allocs []*structs.Allocation, evals []*structs.Evaluation, freed, urgent bool) (*clientBatch, bool) {
	c.mu.Lock()
	var b *clientBatch
	if n := len(c.queue); n > 0 && len(c.queue[n-1].allocs)+len(allocs) <= maxClientBatchAllocs {
		b = c.queue[n-1]
	} else {
		now := time.Now()
		b = &clientBatch{jobs: map[[2]string]bool{}, done: make(chan struct{}), opened: now,
			quiet: c.lastOpened.IsZero() || now.Sub(c.lastOpened) >= clientBatchWindow}
		c.lastOpened = now
		c.queue = append(c.queue, b)
	}
	b.urgent = b.urgent || urgent
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
	if !lead {
		select {
		case c.wakeCh() <- struct{}{}:
		default:
		}
	}
	c.mu.Unlock()
	if !lead && onJoin != nil {
		onJoin()
	}
	return b, lead
}

// wakeCh returns the wake channel; c.mu must be held.
func (c *clientBatcher) wakeCh() chan struct{} {
	if c.wake == nil {
		c.wake = make(chan struct{}, 1)
	}
	return c.wake
}

// clientWriteTimeout bounds one batch's write (a variable for tests).
var clientWriteTimeout = waitIndexTimeout

// clientBatchWindow is how long a batch gathers client updates before it
// is written (a variable for tests). Nomad's servers batch theirs for
// 50 ms; drover's rollouts wait on these reports (a health verdict starts
// the next batch of the rollout), so the window is shorter. Without one,
// each report that arrived while none was waiting became an entry of its
// own: a 10,000-alloc rollout wrote an entry of two or three reports
// every 4 ms, and each entry's fixed costs (the log write, the state
// transaction, the watchers it wakes) were a large part of the leader's
// CPU.
var clientBatchWindow = 10 * time.Millisecond

// ready returns how long the batch must still wait before it is written:
// none once full or when its window has passed, nor when it is urgent and
// quiet. The window gathers the reports that arrive together (a batch of
// a rollout turning healthy); a report the scheduler waits on that comes
// alone, as the last report of a rollout's stage does, would only wait
// the window out for others that do not come, and every change of stage
// (the next zone or group placed) waited that long. Urgent batches are
// written at once only when quiet, so that entries come no more often
// than one per window as before: a stream of verdicts still gathers.
func (b *clientBatch) ready(now time.Time) time.Duration {
	if len(b.allocs) >= maxClientBatchAllocs || clientBatchWindow <= 0 || b.quiet && b.urgent {
		return 0
	}
	return b.opened.Add(clientBatchWindow).Sub(now)
}

// clientEntriesInFlight is how many client update entries the batcher
// hands to Raft before waiting for the oldest: a report that arrives while
// one entry commits is written at once in the next, instead of waiting a
// whole commit (an fsync on each of two servers) for its turn.
const clientEntriesInFlight = 4

// flushClientUpdates writes the waiting batches in order until none is
// left and none is in flight. With a Raft that can enqueue, up to
// clientEntriesInFlight batches are in flight together (Raft keeps their
// order), and a batch that forms while they commit is handed over at
// once; otherwise one is written at a time. Callers are answered in
// order. The writes outlive the leading caller's cancellation, since they
// carry other callers' updates; each batch gets its own
// clientWriteTimeout, so that under sustained load the later batches of a
// long flush do not fail for the time the earlier ones took.
func (l *Leader) flushClientUpdates(ctx context.Context) {
	base := context.WithoutCancel(ctx)
	enq, _ := l.raft.(Enqueuer)
	limit := 1
	if enq != nil {
		limit = clientEntriesInFlight
	}
	type write struct {
		b    *clientBatch
		done chan struct{}
	}
	var pending []write
	for {
		l.clients.mu.Lock()
		if len(l.clients.queue) == 0 && len(pending) == 0 {
			l.clients.flushing = false
			l.clients.mu.Unlock()
			return
		}
		var b *clientBatch
		var wait time.Duration
		if len(l.clients.queue) > 0 && len(pending) < limit {
			if wait = l.clients.queue[0].ready(time.Now()); wait <= 0 {
				b = l.clients.queue[0]
				l.clients.queue[0] = nil
				l.clients.queue = l.clients.queue[1:]
			}
		}
		wake := l.clients.wakeCh()
		l.clients.mu.Unlock()
		if b != nil {
			w := write{b: b, done: make(chan struct{})}
			l.startClientWrite(base, enq, b, w.done)
			pending = append(pending, w)
			continue
		}
		var timer *time.Timer
		var windowEnds <-chan time.Time
		if wait > 0 {
			timer = time.NewTimer(wait)
			windowEnds = timer.C
		}
		var applied <-chan struct{}
		if len(pending) > 0 {
			applied = pending[0].done
		}
		select {
		case <-windowEnds:
			continue
		case <-applied:
			if timer != nil {
				timer.Stop()
			}
			w := pending[0]
			pending = pending[1:]
			if w.b.err == nil && w.b.freed {
				if t, err := l.term(); err == nil {
					l.unblock(t, w.b.index)
				}
			}
			close(w.b.done)
		case <-wake:
			if timer != nil {
				timer.Stop()
			}
		}
	}
}

// startClientWrite hands one batch to Raft and closes done once its
// entry is applied (or failed), with the batch's index and error set.
func (l *Leader) startClientWrite(base context.Context, enq Enqueuer, b *clientBatch, done chan struct{}) {
	req := &structs.AllocClientUpdateRequest{Allocs: b.allocs, Evals: b.evals, UpdatedAt: l.clock.Now().UnixNano()}
	wctx, cancel := context.WithTimeout(base, clientWriteTimeout)
	if enq == nil {
		go func() {
			defer close(done)
			defer cancel()
			_, b.index, b.err = l.apply(wctx, fsm.AllocClientUpdateRequestType, req)
		}()
		return
	}
	wait := enq.Enqueue(wctx, fsm.AllocClientUpdateRequestType, req)
	go func() {
		defer close(done)
		defer cancel()
		if _, b.index, b.err = wait(); b.err != nil {
			b.err = fmt.Errorf("server: applying %s: %w", fsm.AllocClientUpdateRequestType, b.err)
		}
	}()
}
