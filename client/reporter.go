package client

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/structs"
)

// reporter sends the allocations' status to the servers. One goroutine
// sends; everything that changed while a send was in flight goes together
// in the next one (the latest state of each allocation).
//
// A change that a rollout or a reschedule waits on (urgent: a new health
// verdict, a failure) is sent the moment the previous send has returned.
// Any other change (a task received, started, killed) waits up to window
// for more, as Nomad's clients batch theirs: the steps of one transition
// (pending then running, killing then complete) and the allocs placed
// together go in one write through the servers' log, not several.
type reporter struct {
	send   func(context.Context, []*structs.Allocation) error
	clock  clock.Clock
	logger hclog.Logger
	retry  time.Duration
	window time.Duration

	mu      sync.Mutex
	pending map[string]pendingReport
	wake    chan struct{}
	urgent  chan struct{}
	// sent holds, per alloc, the task states of its last report the
	// servers took. A report whose task states are those same values
	// (the runner shares a task's state between updates until the task
	// changes: a health verdict, a new deployment) leaves them out, and
	// the servers keep theirs.
	sent map[string]map[string]*structs.TaskState
}

// pendingReport is an allocation's latest state not sent yet, and whether
// one of the states it replaced (or it) was urgent.
type pendingReport struct {
	alloc  *structs.Allocation
	urgent bool
}

// reportWindow is how long a change that is not urgent waits for others
// before it is sent.
const reportWindow = 50 * time.Millisecond

func newReporter(send func(context.Context, []*structs.Allocation) error, c clock.Clock, logger hclog.Logger, retry, window time.Duration) *reporter {
	return &reporter{
		send: send, clock: c, logger: logger, retry: retry, window: window,
		pending: map[string]pendingReport{}, wake: make(chan struct{}, 1), urgent: make(chan struct{}, 1),
		sent: map[string]map[string]*structs.TaskState{},
	}
}

// enqueue records an allocation's latest state for the next send; urgent
// ends the wait of the window. It never blocks.
func (r *reporter) enqueue(a *structs.Allocation, urgent bool) {
	r.mu.Lock()
	r.pending[a.ID] = pendingReport{a, urgent || r.pending[a.ID].urgent}
	r.mu.Unlock()
	signal(r.wake)
	if urgent {
		signal(r.urgent)
	}
}

// signal wakes whoever waits on ch, without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// mustWait reports whether something is pending and none of it urgent.
func (r *reporter) mustWait() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.pending {
		if p.urgent {
			return false
		}
	}
	return len(r.pending) > 0
}

// hold waits out the window while what is pending is not urgent, until
// something urgent is; false if ctx ended. A wake-up with nothing pending
// (its change went with the previous send) does not wait.
func (r *reporter) hold(ctx context.Context) bool {
	select {
	case <-r.urgent: // drain a signal already sent
	default:
	}
	if r.window <= 0 || !r.mustWait() {
		return ctx.Err() == nil
	}
	t := r.clock.NewTimer(r.window)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
	case <-r.urgent:
	}
	return true
}

// maxBatch bounds the allocations of one send, so that a request stays
// well under the servers' body limit (8 MiB) whatever piled up; the rest
// goes in the next send, at once.
const maxBatch = 256

// take removes up to maxBatch allocations from the pending set, in ID
// order.
func (r *reporter) take() []*structs.Allocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pending) == 0 {
		return nil
	}
	out := make([]*structs.Allocation, 0, len(r.pending))
	for _, p := range r.pending {
		out = append(out, p.alloc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if len(out) > maxBatch {
		out = out[:maxBatch]
	}
	for _, a := range out {
		delete(r.pending, a.ID)
	}
	return out
}

// putBack returns a failed batch to the pending set, unless a newer state
// of an allocation arrived meanwhile. It is sent again after the retry
// pause, without a window.
func (r *reporter) putBack(batch []*structs.Allocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range batch {
		if _, newer := r.pending[a.ID]; !newer {
			r.pending[a.ID] = pendingReport{alloc: a}
		}
	}
}

// withoutSentStates returns the batch to send: each report whose task
// states are those its last report the servers took carried goes
// without them (a copy; batch is left as it is, to be put back should
// the send fail).
func (r *reporter) withoutSentStates(batch []*structs.Allocation) []*structs.Allocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := batch
	for i, a := range batch {
		if a.TaskStates == nil || !sameStates(r.sent[a.ID], a.TaskStates) {
			continue
		}
		if &out[0] == &batch[0] {
			out = slices.Clone(batch)
		}
		c := *a
		c.TaskStates = nil
		out[i] = &c
	}
	return out
}

// sameStates reports whether two sets of task states hold the same
// values (pointers: a changed state is a new value).
func sameStates(a, b map[string]*structs.TaskState) bool {
	if a == nil || len(a) != len(b) {
		return false
	}
	for name, st := range b {
		if prev, ok := a[name]; !ok || prev != st {
			return false
		}
	}
	return true
}

// took records the task states of a batch the servers took.
func (r *reporter) took(batch []*structs.Allocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range batch {
		if a.TaskStates != nil {
			r.sent[a.ID] = a.TaskStates
		}
	}
}

// forget drops what was sent of an alloc: it was collected, or (all) the
// node registered again and reports everything in full.
func (r *reporter) forget(allocID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if allocID == "" {
		clear(r.sent)
		return
	}
	delete(r.sent, allocID)
}

// run sends until ctx ends; failed sends are retried with a growing pause.
func (r *reporter) run(ctx context.Context) {
	backoff := r.retry
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		if !r.hold(ctx) {
			return
		}
		for {
			batch := r.take()
			if len(batch) == 0 {
				break
			}
			if err := r.send(ctx, r.withoutSentStates(batch)); err != nil {
				r.putBack(batch)
				if ctx.Err() != nil {
					return
				}
				r.logger.Warn("reporting alloc status failed; retrying", "allocs", len(batch), "error", err, "in", backoff)
				if !sleep(ctx, r.clock, backoff) {
					return
				}
				backoff = min(2*backoff, MaxRetryInterval)
				continue
			}
			r.took(batch)
			backoff = r.retry
		}
	}
}

// flush sends what is pending, for a client that shuts down.
func (r *reporter) flush(ctx context.Context) error {
	for {
		batch := r.take()
		if len(batch) == 0 {
			return nil
		}
		if err := r.send(ctx, r.withoutSentStates(batch)); err != nil {
			return err
		}
		r.took(batch)
	}
}

// sleep waits d on the clock; false if ctx ended first.
func sleep(ctx context.Context, c clock.Clock, d time.Duration) bool {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
