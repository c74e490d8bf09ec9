package evalbroker

import (
	"container/heap"
	"time"
)

// delayTimer is the single timer armed for the earliest entry of the delay
// queue. Each arming gets a generation so that a call from a timer that was
// replaced or stopped is recognised and ignored.
type delayTimer struct {
	t   Timer
	at  time.Time
	gen uint64
}

// stop disarms the timer.
func (d *delayTimer) stop() {
	if d.t != nil {
		d.t.Stop()
		d.t = nil
	}
	d.gen++
}

// armDelayLocked makes the timer fire when the earliest delayed entry is
// due, or disarms it when there is none.
func (b *Broker) armDelayLocked(now time.Time) {
	if len(b.delayed) == 0 {
		b.timer.stop()
		return
	}
	at := b.delayed[0].at
	if b.timer.t != nil && b.timer.at.Equal(at) {
		return
	}
	b.timer.stop()
	gen := b.timer.gen
	b.timer.at = at
	fire := func() { b.fireDelayed(gen) }
	if c, ok := b.cfg.Clock.(AtClock); ok {
		b.timer.t = c.AfterFuncAt(at, fire)
		return
	}
	b.timer.t = b.cfg.Clock.AfterFunc(at.Sub(now), fire)
}

// fireDelayed moves the due entries out of the delay queue: retrying ones
// become ready again (they still hold their job's slot), delayed ones are
// admitted like new evaluations.
func (b *Broker) fireDelayed(gen uint64) {
	var fx effects
	b.mu.Lock()
	if !b.enabled || gen != b.timer.gen {
		b.mu.Unlock()
		return
	}
	b.timer.t = nil
	now := b.cfg.Clock.Now()
	for _, e := range b.delayed.popDue(now) {
		if e.phase == phaseRetry {
			b.readyLocked(e)
		} else {
			b.admitLocked(e, &fx)
		}
	}
	b.armDelayLocked(now)
	b.mu.Unlock()
	b.run(fx)
}

// retryLocked puts a nacked entry in the delay queue until now+wait,
// keeping its job's slot.
func (b *Broker) retryLocked(e *entry, now time.Time, wait time.Duration) {
	e.phase = phaseRetry
	e.at = now.Add(wait)
	heap.Push(&b.delayed, e)
	b.armDelayLocked(now)
}
