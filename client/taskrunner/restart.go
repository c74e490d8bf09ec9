package taskrunner

import (
	"fmt"
	"time"

	"github.com/droverhq/drover/structs"
)

// Restart reasons, as Nomad words them.
const (
	ReasonWithinPolicy     = "Restart within policy"
	ReasonNoRestarts       = "Policy allows no restarts"
	ReasonUnnecessary      = "Restart unnecessary as task terminated successfully"
	reasonExceededAttempts = "Exceeded allowed attempts %d in interval %v and mode is %q"
)

// decision is what the restart policy says after a task ended.
type decision struct {
	restart bool
	delay   time.Duration
	reason  string
	// failed: the task ends for good because of failure.
	failed bool
}

// restartTracker applies a restart policy: at most Attempts restarts
// within Interval, each after Delay; past that, mode "fail" gives up and
// mode "delay" waits for the interval to end. It is a pure value: the
// caller passes the time.
type restartTracker struct {
	policy structs.RestartPolicy
	batch  bool
	count  int
	since  time.Time // start of the current interval
}

// newRestartTracker applies p (nil: jobType's default); a task that runs
// to completion (a batch job's, or an ephemeral lifecycle task of any job)
// is not restarted after it succeeded.
func newRestartTracker(p *structs.RestartPolicy, jobType string, ephemeral bool) *restartTracker {
	if p == nil {
		p = structs.DefaultRestartPolicy(jobType)
	}
	return &restartTracker{policy: *p, batch: structs.RunsToCompletion(jobType) || ephemeral}
}

// next decides what follows a task's end. success is a clean exit (exit
// code 0, no signal, known status); a start failure is not a success.
func (r *restartTracker) next(success bool, now time.Time) decision {
	if success && r.batch {
		return decision{reason: ReasonUnnecessary}
	}
	p := r.policy
	if p.Attempts <= 0 && p.Mode != structs.RestartPolicyModeDelay {
		return decision{reason: ReasonNoRestarts, failed: !success}
	}
	if r.since.IsZero() || (p.Interval > 0 && now.Sub(r.since) >= p.Interval) {
		r.since, r.count = now, 0
	}
	r.count++
	if r.count <= p.Attempts {
		return decision{restart: true, delay: p.Delay, reason: ReasonWithinPolicy}
	}
	reason := fmt.Sprintf(reasonExceededAttempts, p.Attempts, p.Interval, p.Mode)
	if p.Mode == structs.RestartPolicyModeDelay && p.Interval > 0 {
		// Wait out the interval (at least Delay); the next end starts a
		// new interval.
		wait := max(r.since.Add(p.Interval).Sub(now), p.Delay)
		return decision{restart: true, delay: wait, reason: reason}
	}
	return decision{reason: reason, failed: true}
}
