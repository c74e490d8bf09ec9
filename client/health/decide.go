// Package health decides whether an allocation became healthy within its
// deployment, as website/rollouts.md A.9 defines it:
//
//   - task_states: every task has run without interruption for
//     min_healthy_time (a restart starts the wait again);
//   - checks: the same, and every service check has passed without
//     interruption for min_healthy_time;
//   - manual: the client never decides.
//
// A task that dies makes the allocation unhealthy at once, unless it is an
// ephemeral lifecycle task (a prestart or poststart task that is not a
// sidecar) that succeeded: such a task is healthy running or completed; an allocation
// not healthy by healthy_deadline (counted from when the client starts
// watching) is unhealthy. The decision is made once and reported at once.
//
// The rule itself is the pure function decide; Tracker is the thin shell
// that feeds it observations and arms one timer for the next deadline.
package health

import (
	"fmt"
	"sort"
	"time"
)

// Result is the decision on an allocation's health.
type Result struct {
	Healthy bool
	// Timestamp is when the decision was made.
	Timestamp time.Time
	// Reason says why, for humans.
	Reason string
}

// taskObs is what is known of one task.
type taskObs struct {
	// ephemeral: a prestart or poststart task that is not a sidecar.
	ephemeral bool
	seen      bool
	running   bool
	dead      bool
	failed    bool
	since     time.Time // start of the current uninterrupted run
}

// checkObs is what is known of one check.
type checkObs struct {
	seen    bool
	passing bool
	since   time.Time // first pass of the current streak
	output  string
}

// observation is everything decide looks at.
type observation struct {
	now        time.Time
	deadline   time.Time
	minHealthy time.Duration
	useChecks  bool
	tasks      map[string]taskObs
	checks     map[string]checkObs
}

// decide returns the result if one is due now, else the time at which
// to look again (zero: only a new observation can change anything).
func decide(o observation) (*Result, time.Time) {
	for _, name := range sortedKeys(o.tasks) {
		if t := o.tasks[name]; t.dead && (!t.ephemeral || t.failed) {
			return &Result{Healthy: false, Timestamp: o.now, Reason: fmt.Sprintf("task %q died", name)}, time.Time{}
		}
	}
	if !o.now.Before(o.deadline) {
		return &Result{Healthy: false, Timestamp: o.now, Reason: "not healthy by healthy_deadline"}, time.Time{}
	}
	var since time.Time
	ready := true
	for _, t := range o.tasks {
		if t.ephemeral && t.dead {
			continue // completed successfully (a failure decided above)
		}
		if !t.seen || !t.running {
			ready = false
			break
		}
		since = later(since, t.since)
	}
	if ready && o.useChecks {
		for _, c := range o.checks {
			if !c.seen || !c.passing {
				ready = false
				break
			}
			since = later(since, c.since)
		}
	}
	if !ready {
		return nil, o.deadline
	}
	due := since.Add(o.minHealthy)
	if !o.now.Before(due) {
		return &Result{Healthy: true, Timestamp: o.now, Reason: "healthy for min_healthy_time"}, time.Time{}
	}
	if due.After(o.deadline) {
		return nil, o.deadline
	}
	return nil, due
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
