package scheduler

import (
	"time"

	"github.com/droverhq/drover/structs"
)

// rescheduleWhen is the outcome of a reschedule decision.
type rescheduleWhen int

const (
	rescheduleNever rescheduleWhen = iota
	rescheduleNow
	rescheduleLater
)

// followupBatchWindow groups delayed reschedules due within this window of
// each other into one follow-up evaluation.
const followupBatchWindow = 5 * time.Second

// rescheduleDecision says whether and when a failed allocation is replaced
// under policy, at time now. at is the reschedule time for Later; delay the
// delay chosen for this attempt.
func rescheduleDecision(a *structs.Allocation, policy *structs.ReschedulePolicy, now time.Time, force bool) (when rescheduleWhen, at time.Time, delay time.Duration) {
	if force {
		return rescheduleNow, now, 0
	}
	if policy == nil || (!policy.Unlimited && policy.Attempts <= 0) {
		return rescheduleNever, time.Time{}, 0
	}
	var events []*structs.RescheduleEvent
	if a.RescheduleTracker != nil {
		events = a.RescheduleTracker.Events
	}
	if !policy.Unlimited {
		windowStart := now.Add(-policy.Interval).UnixNano()
		used := 0
		for _, e := range events {
			if e != nil && e.RescheduleTime > windowStart {
				used++
			}
		}
		if used >= policy.Attempts {
			return rescheduleNever, time.Time{}, 0
		}
	}
	delay = nextDelay(policy, events)
	at = failTime(a).Add(delay)
	if !at.After(now) {
		return rescheduleNow, at, delay
	}
	return rescheduleLater, at, delay
}

// nextDelay computes the delay for the next attempt from the delays of the
// earlier ones: constant, exponential (doubling) or fibonacci, capped at
// MaxDelay when it is set.
func nextDelay(p *structs.ReschedulePolicy, events []*structs.RescheduleEvent) time.Duration {
	base := p.Delay
	var d time.Duration
	n := len(events)
	switch {
	case n == 0 || p.DelayFunction == structs.DelayFunctionConstant || p.DelayFunction == "":
		d = base
	case p.DelayFunction == structs.DelayFunctionExponential:
		last := events[n-1]
		if last == nil || last.Delay <= 0 {
			d = base
		} else {
			d = last.Delay * 2
		}
	case p.DelayFunction == structs.DelayFunctionFibonacci:
		if n < 2 || events[n-1] == nil || events[n-2] == nil {
			d = base
		} else {
			d = events[n-1].Delay + events[n-2].Delay
		}
	default:
		d = base
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	if d < 0 {
		d = 0
	}
	return d
}

// failTime is when the allocation failed: the latest task finish time, or
// its last modification.
func failTime(a *structs.Allocation) time.Time {
	var t time.Time
	for _, s := range a.TaskStates {
		if s != nil && s.FinishedAt.After(t) {
			t = s.FinishedAt
		}
	}
	if t.IsZero() && a.ModifyTime != 0 {
		t = time.Unix(0, a.ModifyTime)
	}
	return t
}

// nextTracker returns the reschedule tracker of a's replacement.
func nextTracker(a *structs.Allocation, now time.Time, delay time.Duration) *structs.RescheduleTracker {
	t := &structs.RescheduleTracker{}
	if a.RescheduleTracker != nil {
		t = a.RescheduleTracker.Copy()
	}
	t.Events = append(t.Events, &structs.RescheduleEvent{
		RescheduleTime: now.UnixNano(),
		PrevAllocID:    a.ID,
		PrevNodeID:     a.NodeID,
		Delay:          delay,
	})
	return t
}

// RescheduleAttemptsLeft reports whether a failed or unhealthy allocation
// may still be replaced under policy at now. The deployment watcher uses it
// to fail a deployment at once when an unhealthy alloc has no attempts
// left, instead of waiting for the progress deadline.
func RescheduleAttemptsLeft(a *structs.Allocation, policy *structs.ReschedulePolicy, now time.Time) bool {
	if a == nil {
		return false
	}
	when, _, _ := rescheduleDecision(a, policy, now, false)
	return when != rescheduleNever
}
