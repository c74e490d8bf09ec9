package health

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/structs"
)

// ErrInvalidConfig: the tracker's Config is unusable.
var ErrInvalidConfig = errors.New("invalid health tracker config")

// Config is what a Tracker needs.
type Config struct {
	// Strategy is the group's update block (health_check,
	// min_healthy_time, healthy_deadline).
	Strategy *structs.UpdateStrategy
	// Tasks are the names of the tasks that must run.
	Tasks []string
	// Ephemeral are the names of tasks that may also have ended, if they
	// succeeded: the prestart and poststart tasks that are not sidecars,
	// as Nomad judges them (poststop tasks are not judged at all).
	Ephemeral []string
	// Checks are the names of the checks that must pass (mode checks).
	Checks []string
	Clock  clock.Clock
	// OnResult receives the decision once, from whichever goroutine made
	// it, the moment it is made.
	OnResult func(Result)
}

// Tracker watches one allocation's tasks and checks and decides its
// health. Its methods are safe for concurrent use.
type Tracker struct {
	cfg    Config
	clock  clock.Clock
	manual bool

	mu      sync.Mutex
	started bool
	obs     observation
	timer   clock.Timer
	result  *Result
	stopped bool
}

// NewTracker returns a tracker; it decides nothing until Start.
func NewTracker(cfg Config) (*Tracker, error) {
	if cfg.Strategy == nil {
		return nil, fmt.Errorf("%w: no update strategy", ErrInvalidConfig)
	}
	switch cfg.Strategy.HealthCheck {
	case structs.UpdateHealthCheckChecks, structs.UpdateHealthCheckTaskStates, structs.UpdateHealthCheckManual:
	default:
		return nil, fmt.Errorf("%w: health_check %q", ErrInvalidConfig, cfg.Strategy.HealthCheck)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.OnResult == nil {
		cfg.OnResult = func(Result) {}
	}
	t := &Tracker{cfg: cfg, clock: cfg.Clock, manual: cfg.Strategy.HealthCheck == structs.UpdateHealthCheckManual}
	t.obs = observation{
		minHealthy: cfg.Strategy.MinHealthyTime,
		useChecks:  cfg.Strategy.HealthCheck == structs.UpdateHealthCheckChecks,
		tasks:      make(map[string]taskObs, len(cfg.Tasks)),
		checks:     make(map[string]checkObs, len(cfg.Checks)),
	}
	for _, n := range cfg.Tasks {
		t.obs.tasks[n] = taskObs{}
	}
	for _, n := range cfg.Ephemeral {
		t.obs.tasks[n] = taskObs{ephemeral: true}
	}
	for _, n := range cfg.Checks {
		t.obs.checks[n] = checkObs{}
	}
	return t, nil
}

// Start begins watching: healthy_deadline counts from now.
func (t *Tracker) Start() {
	t.mu.Lock()
	if t.started || t.manual {
		t.mu.Unlock()
		return
	}
	t.started = true
	t.obs.deadline = t.clock.Now().Add(t.cfg.Strategy.HealthyDeadline)
	t.evaluateLocked()
}

// TaskUpdated records a task's new state. Tasks not named in the config
// are ignored.
func (t *Tracker) TaskUpdated(name string, st *structs.TaskState) {
	if st == nil {
		return
	}
	t.mu.Lock()
	o, ok := t.obs.tasks[name]
	if !ok {
		t.mu.Unlock()
		return
	}
	now := t.clock.Now()
	o.seen = true
	o.dead = st.State == structs.TaskStateDead
	o.failed = st.Failed
	running := st.State == structs.TaskStateRunning
	switch {
	case running && !st.StartedAt.IsZero():
		o.since = st.StartedAt
	case running && !o.running:
		o.since = now
	}
	o.running = running
	t.obs.tasks[name] = o
	t.evaluateLocked()
}

// CheckUpdated records a check result. Checks not named in the config
// are ignored.
func (t *Tracker) CheckUpdated(name string, passing bool, output string) {
	t.mu.Lock()
	c, ok := t.obs.checks[name]
	if !ok {
		t.mu.Unlock()
		return
	}
	if passing && (!c.seen || !c.passing) {
		c.since = t.clock.Now()
	}
	c.seen, c.passing, c.output = true, passing, output
	t.obs.checks[name] = c
	t.evaluateLocked()
}

// CheckResult records a check's result: a pass passes, and a warning of a
// check whose on_update is ignore_warnings (CheckResult.PassesDeployment).
func (t *Tracker) CheckResult(r CheckResult) { t.CheckUpdated(r.Name, r.PassesDeployment(), r.Output) }

// Result returns the decision, if made.
func (t *Tracker) Result() (Result, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.result == nil {
		return Result{}, false
	}
	return *t.result, true
}

// Stop ends watching; no result is reported after it returns.
func (t *Tracker) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
}

// evaluateLocked runs decide, reports a result or re-arms the timer, and
// unlocks t.mu (the report is made without the lock held).
func (t *Tracker) evaluateLocked() {
	if !t.started || t.result != nil || t.stopped {
		t.mu.Unlock()
		return
	}
	t.obs.now = t.clock.Now()
	res, wake := decide(t.obs)
	if res != nil {
		t.result = res
		if t.timer != nil {
			t.timer.Stop()
			t.timer = nil
		}
		t.mu.Unlock()
		t.cfg.OnResult(*res)
		return
	}
	if !wake.IsZero() {
		d := wake.Sub(t.obs.now)
		if t.timer == nil {
			t.timer = t.clock.AfterFunc(d, t.wake)
		} else {
			t.timer.Reset(d)
		}
	}
	t.mu.Unlock()
}

func (t *Tracker) wake() {
	t.mu.Lock()
	t.evaluateLocked()
}

// Deadline returns when the tracker gives up (zero before Start).
func (t *Tracker) Deadline() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.obs.deadline
}
