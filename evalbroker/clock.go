package evalbroker

import "time"

// Clock is the broker's source of time. Tests inject a fake one; servers use
// SystemClock.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has elapsed, unless the
	// returned Timer is stopped first. f may be called after Stop if it had
	// already been started; the broker tolerates that.
	AfterFunc(d time.Duration, f func()) Timer
}

// AtClock is a Clock that can also arm a call at an instant. The broker
// arms its delay timer that way when its clock can: with AfterFunc it
// computes the duration from a reading of Now, and a clock that moves
// between that reading and the arming (a test's fake clock advanced by
// another goroutine) would fire late by the difference.
type AtClock interface {
	Clock
	// AfterFuncAt calls f in its own goroutine once the clock reaches at.
	AfterFuncAt(at time.Time, f func()) Timer
}

// Timer is a pending call armed by Clock.AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started yet and reports whether
	// it did so.
	Stop() bool
}

// SystemClock is the Clock of the running process.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc arms a time.AfterFunc timer.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
