package clock

import (
	"sort"
	"sync"
	"time"
)

// Fake is a clock that moves only when Advance or Set is called. Timers
// that come due fire in deadline order: AfterFunc callbacks run in the
// goroutine that advances the clock, channel timers get a non-blocking
// send on a one-slot channel.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	seq    uint64
}

// NewFake returns a fake clock set to start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// AfterFunc arms a timer that calls fn when the clock passes now+d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	return f.add(d, fn, nil)
}

// NewTimer arms a timer whose channel receives when the clock passes now+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	return f.add(d, nil, make(chan time.Time, 1))
}

// Pending returns how many timers are armed; tests use it to know that the
// code under test has reached the point where it waits.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// Advance moves the clock forward by d, firing every timer that comes due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	target := f.now.Add(d)
	f.mu.Unlock()
	f.Set(target)
}

// Set moves the clock to t (never backwards), firing due timers in order.
// A callback that arms a new timer already due fires in the same call.
func (f *Fake) Set(t time.Time) {
	for {
		f.mu.Lock()
		if len(f.timers) == 0 || f.timers[0].when.After(t) {
			if t.After(f.now) {
				f.now = t
			}
			f.mu.Unlock()
			return
		}
		ft := f.timers[0]
		f.timers = f.timers[1:]
		ft.armed = false
		if ft.when.After(f.now) {
			f.now = ft.when
		}
		now := f.now
		f.mu.Unlock()
		if ft.fn != nil {
			ft.fn()
		} else {
			select {
			case ft.ch <- now:
			default:
			}
		}
	}
}

func (f *Fake) add(d time.Duration, fn func(), ch chan time.Time) *fakeTimer {
	f.mu.Lock()
	defer f.mu.Unlock()
	ft := &fakeTimer{clock: f, fn: fn, ch: ch}
	f.arm(ft, d)
	return ft
}

// arm inserts ft keeping timers sorted by deadline, then by arming order.
// Callers hold f.mu.
func (f *Fake) arm(ft *fakeTimer, d time.Duration) {
	f.seq++
	ft.when, ft.seq, ft.armed = f.now.Add(d), f.seq, true
	i := sort.Search(len(f.timers), func(i int) bool {
		o := f.timers[i]
		return o.when.After(ft.when) || (o.when.Equal(ft.when) && o.seq > ft.seq)
	})
	f.timers = append(f.timers, nil)
	copy(f.timers[i+1:], f.timers[i:])
	f.timers[i] = ft
}

// disarm removes ft; callers hold f.mu.
func (f *Fake) disarm(ft *fakeTimer) bool {
	if !ft.armed {
		return false
	}
	for i, o := range f.timers {
		if o == ft {
			f.timers = append(f.timers[:i], f.timers[i+1:]...)
			break
		}
	}
	ft.armed = false
	return true
}

type fakeTimer struct {
	clock *Fake
	fn    func()
	ch    chan time.Time
	when  time.Time
	seq   uint64
	armed bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	return t.clock.disarm(t)
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := t.clock.disarm(t)
	t.clock.arm(t, d)
	return was
}
