package health

import (
	"fmt"
	"sync"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/structs"
)

// Check restarts (check_restart), as Nomad's: once grace has passed since
// the check's tasks started (or restarted), a check that has failed limit
// times in a row restarts them through their restart policy. A warning is
// a failure unless ignore_warnings is set; a passing result starts the
// count again. After a restart is asked for, the check restarts nothing
// more until its tasks run again.
//
// The rule is the pure method restartWatch.observe; RestartWatcher is the
// shell that feeds it task states and check results.

// RestartReason is the reason of the "Restart Signaled" event a failing
// check gives its task, worded as Nomad's.
func RestartReason(check string) string {
	return fmt.Sprintf("healthcheck: check %q unhealthy", check)
}

// restartWatch is what is known of one check with check_restart.
type restartWatch struct {
	cfg      structs.CheckRestart
	failures int
	// start is the task start the count belongs to; a later start begins
	// a new count (and a new grace).
	start time.Time
	// fired: a restart was asked for since start.
	fired bool
}

// observe takes one result of the check, given when its tasks started
// (zero: one of them is not running) and the time; it reports whether to
// restart them now.
func (w *restartWatch) observe(status string, started, now time.Time) bool {
	if started.IsZero() {
		w.failures = 0
		return false
	}
	if !started.Equal(w.start) {
		w.start, w.failures, w.fired = started, 0, false
	}
	if w.fired || now.Before(started.Add(w.cfg.Grace)) {
		return false
	}
	if status == structs.CheckPassing || status == structs.CheckWarning && w.cfg.IgnoreWarnings {
		w.failures = 0
		return false
	}
	w.failures++
	if w.failures < w.cfg.Limit {
		return false
	}
	w.failures, w.fired = 0, true
	return true
}

// RestartWatcher watches an allocation's checks that have check_restart
// and asks for their tasks' restarts. Its methods are safe for concurrent
// use; Restart is called without its lock held.
type RestartWatcher struct {
	clock   clock.Clock
	restart func(task, reason string)

	mu      sync.Mutex
	checks  map[string]*watchedCheck // by Check.Name
	running map[string]time.Time     // task → start of its current run
}

type watchedCheck struct {
	name  string // the check's own name, for the event
	tasks []string
	watch restartWatch
}

// NewRestartWatcher watches those of checks that restart tasks; it returns
// nil when none does. restart is asked to restart one task, with the
// reason for its event.
func NewRestartWatcher(clk clock.Clock, checks []Check, restart func(task, reason string)) *RestartWatcher {
	w := &RestartWatcher{clock: clk, restart: restart, checks: map[string]*watchedCheck{}, running: map[string]time.Time{}}
	for _, c := range checks {
		if c.Restart == nil || c.Restart.Limit <= 0 || len(c.RestartTasks) == 0 {
			continue
		}
		w.checks[c.Name] = &watchedCheck{name: c.CheckName, tasks: c.RestartTasks, watch: restartWatch{cfg: *c.Restart}}
	}
	if len(w.checks) == 0 {
		return nil
	}
	if w.clock == nil {
		w.clock = clock.Real{}
	}
	return w
}

// TaskUpdated records whether a task runs, and since when.
func (w *RestartWatcher) TaskUpdated(name string, st *structs.TaskState) {
	if w == nil || st == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if st.State != structs.TaskStateRunning {
		delete(w.running, name)
		return
	}
	since := st.StartedAt
	if since.IsZero() {
		if _, ok := w.running[name]; ok {
			return
		}
		since = w.clock.Now()
	}
	w.running[name] = since
}

// CheckResult takes one result of a check and restarts its tasks when the
// check has failed too often.
func (w *RestartWatcher) CheckResult(r CheckResult) {
	if w == nil {
		return
	}
	w.mu.Lock()
	c, ok := w.checks[r.Name]
	if !ok {
		w.mu.Unlock()
		return
	}
	// The count belongs to the latest start of the check's tasks; none
	// while one of them is not running.
	var started time.Time
	for _, t := range c.tasks {
		s, ok := w.running[t]
		if !ok {
			started = time.Time{}
			break
		}
		started = later(started, s)
	}
	fire := c.watch.observe(r.Status, started, w.clock.Now())
	tasks, name := c.tasks, c.name
	w.mu.Unlock()
	if !fire {
		return
	}
	for _, t := range tasks {
		w.restart(t, RestartReason(name))
	}
}
