package client

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/structs"
)

// reporter sends the allocations' status to the servers. One goroutine
// sends; a change is sent the moment the previous send has returned, and
// everything that changed while a send was in flight goes together in the
// next one (the latest state of each allocation). There is no timer
// between a change and its send: a rollout waits on every health report.
type reporter struct {
	send   func(context.Context, []*structs.Allocation) error
	clock  clock.Clock
	logger hclog.Logger
	retry  time.Duration

	mu      sync.Mutex
	pending map[string]*structs.Allocation
	wake    chan struct{}
}

func newReporter(send func(context.Context, []*structs.Allocation) error, c clock.Clock, logger hclog.Logger, retry time.Duration) *reporter {
	return &reporter{
		send: send, clock: c, logger: logger, retry: retry,
		pending: map[string]*structs.Allocation{}, wake: make(chan struct{}, 1),
	}
}

// enqueue records an allocation's latest state for the next send. It
// never blocks.
func (r *reporter) enqueue(a *structs.Allocation) {
	r.mu.Lock()
	r.pending[a.ID] = a
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
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
	for _, a := range r.pending {
		out = append(out, a)
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
// of an allocation arrived meanwhile.
func (r *reporter) putBack(batch []*structs.Allocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range batch {
		if _, newer := r.pending[a.ID]; !newer {
			r.pending[a.ID] = a
		}
	}
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
		for {
			batch := r.take()
			if len(batch) == 0 {
				break
			}
			if err := r.send(ctx, batch); err != nil {
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
		if err := r.send(ctx, batch); err != nil {
			return err
		}
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
