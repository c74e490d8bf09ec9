// Package clock is the time source of the client's runners: an interface
// with a real implementation and a fake one that tests advance by hand, so
// restart delays and health deadlines are tested without sleeping.
package clock

import "time"

// Clock tells the time and arms timers. Implementations are safe for
// concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine (real clock) or in the
	// goroutine that advances time (fake clock) once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
	// NewTimer returns a timer whose channel receives the time once d has
	// passed.
	NewTimer(d time.Duration) Timer
}

// Timer is a stoppable, resettable timer.
type Timer interface {
	// C is the channel the time is sent on; nil for AfterFunc timers.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was
	// still armed.
	Stop() bool
	// Reset re-arms the timer to fire after d; it reports whether it was
	// still armed.
	Reset(d time.Duration) bool
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{t: time.AfterFunc(d, f)}
}

// NewTimer wraps time.NewTimer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{t: time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }
