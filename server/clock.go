package server

import (
	"time"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/evalbroker"
)

// Clock is the leader's source of time, shared by the eval broker, the
// heartbeat timers and the deployment watcher, so that a test can move
// them all with one fake clock.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has elapsed, unless
	// the returned Timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call armed by Clock.AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started and reports whether it
	// did so.
	Stop() bool
}

// SystemClock is the Clock of the running process.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc arms a time.AfterFunc timer.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// brokerClock adapts a Clock to the eval broker's.
type brokerClock struct{ c Clock }

func (b brokerClock) Now() time.Time { return b.c.Now() }
func (b brokerClock) AfterFunc(d time.Duration, f func()) evalbroker.Timer {
	return b.c.AfterFunc(d, f)
}

// AfterFuncAt arms a call at an instant: exactly, when the Clock can
// (a test's fake clock; see evalbroker.AtClock), else after the time from
// now to at.
func (b brokerClock) AfterFuncAt(at time.Time, f func()) evalbroker.Timer {
	if c, ok := b.c.(interface {
		AfterFuncAt(time.Time, func()) Timer
	}); ok {
		return c.AfterFuncAt(at, f)
	}
	return b.c.AfterFunc(at.Sub(b.c.Now()), f)
}

// watcherClock adapts a Clock to the deployment watcher's, whose timers
// deliver on a channel.
type watcherClock struct{ c Clock }

func (w watcherClock) Now() time.Time { return w.c.Now() }
func (w watcherClock) NewTimer(d time.Duration) deployment.Timer {
	ch := make(chan time.Time, 1)
	t := &chanTimer{ch: ch}
	t.t = w.c.AfterFunc(d, func() {
		select {
		case ch <- w.c.Now():
		default:
		}
	})
	return t
}

type chanTimer struct {
	ch chan time.Time
	t  Timer
}

func (c *chanTimer) C() <-chan time.Time { return c.ch }
func (c *chanTimer) Stop() bool          { return c.t.Stop() }
