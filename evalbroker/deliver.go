package evalbroker

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/droverhq/drover/structs"
)

// waiter is a Dequeue call waiting for an evaluation of one of its types.
type waiter struct {
	types []string
	ch    chan delivery // buffered: one delivery, sent under the lock
}

// delivery is what a waiter receives: an evaluation or an error.
type delivery struct {
	eval  *structs.Evaluation
	token string
	err   error
}

// Dequeue returns the first ready evaluation of the given scheduler types
// (for example "service", "batch") with the token that acks or nacks it. It
// waits until one is ready, ctx is done (the error wraps ctx.Err()), or the
// broker is disabled (ErrDisabled). A cancelled Dequeue never keeps an
// evaluation: one handed over as it was cancelled goes back to the queue.
func (b *Broker) Dequeue(ctx context.Context, schedulerTypes []string) (*structs.Evaluation, string, error) {
	if len(schedulerTypes) == 0 {
		return nil, "", ErrNoSchedulerTypes
	}
	if err := ctx.Err(); err != nil {
		return nil, "", fmt.Errorf("evalbroker: dequeue: %w", err)
	}
	b.mu.Lock()
	if !b.enabled {
		b.mu.Unlock()
		return nil, "", ErrDisabled
	}
	if e := b.firstReadyLocked(schedulerTypes); e != nil {
		token := b.deliverLocked(e)
		var waited time.Duration
		if b.cfg.OnDequeue != nil {
			waited = b.cfg.Clock.Now().Sub(e.readySince)
		}
		b.mu.Unlock()
		if b.cfg.OnDequeue != nil {
			b.cfg.OnDequeue(e.eval, waited)
		}
		return e.eval, token, nil
	}
	w := &waiter{types: slices.Clone(schedulerTypes), ch: make(chan delivery, 1)}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()

	select {
	case d := <-w.ch:
		if d.err == nil && b.cfg.OnDequeue != nil {
			b.cfg.OnDequeue(d.eval, 0)
		}
		return d.eval, d.token, d.err
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.Index(b.waiters, w); i >= 0 {
		b.waiters = slices.Delete(b.waiters, i, i+1)
	} else if d := <-w.ch; d.err == nil {
		// Handed an evaluation as ctx ended: put it back.
		b.undeliverLocked(d)
	}
	return nil, "", fmt.Errorf("evalbroker: dequeue: %w", ctx.Err())
}

// firstReadyLocked pops the ready evaluation that leaves first among the
// given types.
func (b *Broker) firstReadyLocked(types []string) *entry {
	var best *readyQueue
	for _, typ := range types {
		q := b.ready[typ]
		if q == nil || q.Len() == 0 {
			continue
		}
		if best == nil || before(q.peek(), best.peek()) {
			best = q
		}
	}
	if best == nil {
		return nil
	}
	return heapPop(best)
}

// takeWaiterLocked removes and returns the oldest waiter serving typ.
func (b *Broker) takeWaiterLocked(typ string) *waiter {
	for i, w := range b.waiters {
		if slices.Contains(w.types, typ) {
			b.waiters = slices.Delete(b.waiters, i, i+1)
			return w
		}
	}
	return nil
}

// deliverLocked marks a ready entry as out with a worker, arms its
// visibility timer and returns its new token: the term's random prefix and
// a counter, unique across terms and cheaper than a fresh UUID.
func (b *Broker) deliverLocked(e *entry) string {
	e.phase = phaseUnacked
	e.deliveries++
	b.tokens++
	e.token = b.term + "." + strconv.FormatUint(b.tokens, 10)
	b.unacked++
	b.armVisibilityLocked(e)
	return e.token
}

// armVisibilityLocked (re)starts the visibility timer of an unacked entry.
func (b *Broker) armVisibilityLocked(e *entry) {
	if e.timer != nil {
		e.timer.Stop()
	}
	id, token := e.eval.ID, e.token
	e.timer = b.cfg.TimeoutClock.AfterFunc(b.cfg.VisibilityTimeout, func() { b.visibilityExpired(id, token) })
}

// clearOutstandingLocked ends an entry's delivery.
func (b *Broker) clearOutstandingLocked(e *entry) {
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	e.token = ""
	b.unacked--
}

// undeliverLocked takes back an evaluation handed to a Dequeue that was
// cancelled, as if it had never been delivered.
func (b *Broker) undeliverLocked(d delivery) {
	e := b.entries[d.eval.ID]
	if e == nil || e.phase != phaseUnacked || e.token != d.token {
		return
	}
	b.clearOutstandingLocked(e)
	e.deliveries--
	b.readyLocked(e)
}

// outstandingLocked returns the entry out under evalID with token.
func (b *Broker) outstandingLocked(evalID, token string) (*entry, error) {
	if !b.enabled {
		return nil, ErrDisabled
	}
	e := b.entries[evalID]
	if e == nil || e.phase != phaseUnacked {
		return nil, fmt.Errorf("%w: %s", ErrNotOutstanding, evalID)
	}
	if e.token != token {
		return nil, fmt.Errorf("%w: %s", ErrTokenMismatch, evalID)
	}
	return e, nil
}

// Ack marks an evaluation done: the broker forgets it and lets the next
// evaluation of its job go.
func (b *Broker) Ack(evalID, token string) error {
	b.mu.Lock()
	e, err := b.outstandingLocked(evalID, token)
	if err != nil {
		b.mu.Unlock()
		return err
	}
	b.clearOutstandingLocked(e)
	b.releaseLocked(e)
	b.mu.Unlock()
	return nil
}

// Nack reports a failed attempt. The evaluation is delivered again after
// InitialNackDelay (after its first delivery) or SubsequentNackDelay, still
// holding its job's slot; once it has been delivered DeliveryLimit times it
// is handed to OnFailed and forgotten instead.
func (b *Broker) Nack(evalID, token string) error {
	var fx effects
	b.mu.Lock()
	e, err := b.outstandingLocked(evalID, token)
	if err != nil {
		b.mu.Unlock()
		return err
	}
	b.nackLocked(e, &fx)
	b.mu.Unlock()
	b.run(fx)
	return nil
}

// nackLocked ends a failed delivery.
func (b *Broker) nackLocked(e *entry, fx *effects) {
	b.clearOutstandingLocked(e)
	if e.deliveries >= b.cfg.DeliveryLimit {
		fx.failed = append(fx.failed, e.eval)
		b.releaseLocked(e)
		return
	}
	wait := b.cfg.SubsequentNackDelay
	if e.deliveries == 1 {
		wait = b.cfg.InitialNackDelay
	}
	if wait <= 0 {
		b.readyLocked(e)
		return
	}
	b.retryLocked(e, b.cfg.Clock.Now(), wait)
}

// visibilityExpired nacks a delivery that outlived the visibility timeout.
func (b *Broker) visibilityExpired(evalID, token string) {
	var fx effects
	b.mu.Lock()
	e := b.entries[evalID]
	if !b.enabled || e == nil || e.phase != phaseUnacked || e.token != token {
		b.mu.Unlock()
		return
	}
	b.nackLocked(e, &fx)
	b.mu.Unlock()
	b.run(fx)
}

// Outstanding returns the token of an evaluation that is out with a worker.
func (b *Broker) Outstanding(evalID string) (token string, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[evalID]
	if e == nil || e.phase != phaseUnacked {
		return "", false
	}
	return e.token, true
}

// OutstandingReset restarts the visibility timeout of an evaluation out with
// a worker; workers call it while a long scheduling pass is still making
// progress.
func (b *Broker) OutstandingReset(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, err := b.outstandingLocked(evalID, token)
	if err != nil {
		return err
	}
	b.armVisibilityLocked(e)
	return nil
}

// PauseNackTimeout stops the visibility timeout of an evaluation out with a
// worker while the worker waits on something that is not its own doing,
// such as the leader's plan queue. ResumeNackTimeout starts it again in
// full.
func (b *Broker) PauseNackTimeout(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, err := b.outstandingLocked(evalID, token)
	if err != nil {
		return err
	}
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	return nil
}

// ResumeNackTimeout restarts the visibility timeout stopped by
// PauseNackTimeout.
func (b *Broker) ResumeNackTimeout(evalID, token string) error {
	return b.OutstandingReset(evalID, token)
}
