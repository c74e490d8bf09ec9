// Package taskrunner runs one task through its driver: it starts it (or
// re-attaches to it), watches it, restarts it per its restart policy,
// kills it on request, and reports every change of its TaskState.
package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// ErrInvalidConfig: the runner's Config lacks something it needs.
var ErrInvalidConfig = errors.New("invalid task runner config")

// maxEvents is how many events a TaskState keeps, as Nomad.
const maxEvents = 10

// Update is one change of a task, reported through Config.OnUpdate.
type Update struct {
	Task  string
	State *structs.TaskState // a copy, the caller's to keep
	// Handle is the current driver handle (nil when none runs); the alloc
	// runner persists it for re-attachment.
	Handle *drivers.TaskHandle
}

// Config is what a TaskRunner needs.
type Config struct {
	Task    *structs.Task
	JobType string
	Driver  drivers.Driver
	// TaskConfig is the driver's input, already interpolated.
	TaskConfig *drivers.TaskConfig
	// RestartPolicy is the task's (or its group's); nil means the
	// defaults for JobType.
	RestartPolicy *structs.RestartPolicy
	Clock         clock.Clock
	// Handle and State, when set, are what a previous client persisted:
	// the runner re-attaches instead of starting the task.
	Handle *drivers.TaskHandle
	State  *structs.TaskState
	// StartAfter, when set, holds the task's first start until it is
	// closed: the alloc runner's lifecycle ordering. While it waits the
	// task stays pending, with a structs.TaskHookWaiting event saying
	// WaitMessage; a kill ends the wait (the task never starts).
	StartAfter  <-chan struct{}
	WaitMessage string
	// AfterPrevious, when set, holds the first start before StartAfter
	// does, until it is closed: the alloc runner's wait for the previous
	// allocation on the node to stop and hand over its data (sticky
	// ephemeral disk), with a structs.TaskHookWaiting event saying
	// structs.TaskWaitingPrevious.
	AfterPrevious <-chan struct{}
	// Artifacts, already interpolated, are fetched into the task's
	// directory before its first start (artifacts.go), within
	// ArtifactLimits (nil: DefaultArtifactLimits).
	Artifacts      []*structs.TaskArtifact
	ArtifactLimits *ArtifactLimits
	// OnUpdate is called, from the runner's goroutine, after every change.
	// It must not block for long, and must not call back into the runner.
	OnUpdate func(Update)
	// Templates, when set, builds the renderer of the task's templates
	// (client/template), given the runner as what it acts on. It is
	// called once, from the runner's goroutine, before the task first
	// starts (or once the runner re-attached to it).
	Templates func(tr *TaskRunner) (TemplateHook, error)
}

// TemplateHook renders a task's templates (client/template.Manager).
type TemplateHook interface {
	// Prestart blocks until the templates have first rendered and
	// returns the variables they add to the task's environment; later
	// calls return the current ones at once.
	Prestart(ctx context.Context) (map[string]string, error)
	// Stop stops watching the templates' data.
	Stop()
}

// TaskRunner runs one task. Create it with New, start it with Run.
type TaskRunner struct {
	cfg     Config
	clock   clock.Clock
	restart *restartTracker

	killOnce   sync.Once
	killCh     chan struct{}
	restartCh  chan restartRequest
	detachOnce sync.Once
	detachCh   chan struct{}
	// skipDelay is closed when the task's shutdown_delay is to be skipped
	// (SkipShutdownDelay).
	skipOnce  sync.Once
	skipDelay chan struct{}
	doneCh    chan struct{}
	ctx       context.Context
	cancel    context.CancelFunc

	templatesOnce sync.Once
	templates     TemplateHook // nil without templates, or before setupTemplates
	templatesErr  error

	mu     sync.Mutex
	state  *structs.TaskState
	handle *drivers.TaskHandle
	// starting is set while the driver starts the task, closed once it
	// has (or failed to).
	starting chan struct{}
	killType string // event KillFor asked for, until recorded
	killMsg  string
	// killFails: the kill fails the task (Fail).
	killFails bool

	artifactsFetched bool // the runner's goroutine alone
}

// New checks the config and returns a runner that has not started.
func New(cfg Config) (*TaskRunner, error) {
	if cfg.Task == nil || cfg.Driver == nil || cfg.TaskConfig == nil {
		return nil, fmt.Errorf("%w: task, driver and task config are required", ErrInvalidConfig)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.OnUpdate == nil {
		cfg.OnUpdate = func(Update) {}
	}
	tr := &TaskRunner{
		cfg: cfg, clock: cfg.Clock,
		restart:   newRestartTracker(cfg.RestartPolicy, cfg.JobType, cfg.Task.IsEphemeral()),
		killCh:    make(chan struct{}),
		restartCh: make(chan restartRequest, 1),
		detachCh:  make(chan struct{}),
		skipDelay: make(chan struct{}),
		doneCh:    make(chan struct{}),
		state:     &structs.TaskState{State: structs.TaskStatePending},
		handle:    cfg.Handle,
	}
	if cfg.State != nil {
		tr.state = cfg.State.Copy()
	}
	tr.ctx, tr.cancel = context.WithCancel(context.Background())
	return tr, nil
}

// Run starts the runner's goroutine; it returns at once.
func (tr *TaskRunner) Run() { go tr.run() }

// Detach stops the runner but leaves the task running, for a client that
// shuts down and will re-attach from the persisted handle. It cancels the
// runner's context, so that whatever the runner waits on before the task
// runs (a template's first render, an artifact's download, the driver's
// start) ends at once: the task, not yet started, is started by the next
// client; one that runs is left running.
func (tr *TaskRunner) Detach() {
	tr.detachOnce.Do(func() {
		close(tr.detachCh)
		tr.cancel()
	})
}

func (tr *TaskRunner) detached() bool {
	select {
	case <-tr.detachCh:
		return true
	default:
		return false
	}
}

// Done is closed when the runner has stopped: the task is dead for good,
// or the runner was detached.
func (tr *TaskRunner) Done() <-chan struct{} { return tr.doneCh }

// State returns a copy of the task's state.
func (tr *TaskRunner) State() *structs.TaskState {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.state.Copy()
}

// Handle returns the current driver handle, or nil.
func (tr *TaskRunner) Handle() *drivers.TaskHandle {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.handle
}

func (tr *TaskRunner) killed() bool {
	select {
	case <-tr.killCh:
		return true
	default:
		return false
	}
}

// run is the runner's loop: start (or re-attach), wait, decide, repeat.
func (tr *TaskRunner) run() {
	defer close(tr.doneCh)
	defer tr.cancel()
	defer tr.stopTemplates()
	h := tr.Handle()
	if h != nil {
		if err := tr.cfg.Driver.Recover(h); err != nil {
			// The task ended while nobody watched; its status is unknown.
			tr.setHandle(nil)
			if tr.afterExit(drivers.ExitResult{Unknown: true, Err: err}, false) {
				return
			}
			h = nil
		} else {
			tr.mu.Lock()
			tr.state.State = structs.TaskStateRunning
			u := Update{Task: tr.cfg.Task.Name, State: tr.state.Copy(), Handle: h}
			tr.mu.Unlock()
			tr.cfg.OnUpdate(u)
			if tr.cfg.Templates != nil {
				// The task runs already: its templates are rendered again
				// beside it, and a file that changed meanwhile acts as a
				// change.
				go func() {
					if _, err := tr.prestartTemplates(); err != nil && !tr.killed() && !tr.detached() {
						tr.Fail(err.Error())
					}
				}()
			}
		}
	} else {
		tr.event(structs.TaskReceived, "Task received by client", nil)
		if !tr.awaitStart() {
			return
		}
	}
	for {
		if h == nil {
			if tr.killed() {
				tr.killReason()
				tr.finish(false, structs.TaskKilled, "Task killed before it started", nil)
				return
			}
			if tr.detached() {
				return
			}
			if ok, done := tr.prestartArtifacts(); done {
				return
			} else if !ok {
				continue
			}
			var err error
			if h, err = tr.start(); err != nil {
				if tr.afterStartFailure(err) {
					return
				}
				h = nil
				continue
			}
		}
		ch, err := tr.cfg.Driver.Wait(h)
		if err != nil {
			tr.setHandle(nil)
			if tr.afterExit(drivers.ExitResult{Unknown: true, Err: err}, false) {
				return
			}
			h = nil
			continue
		}
		switch res, how := tr.wait(h, ch); how {
		case waitExited:
			tr.destroy(h)
			if tr.afterExit(res, res.Successful()) {
				return
			}
			h = nil
		case waitRestart:
			tr.destroy(h)
			if tr.afterExit(res, false) {
				return
			}
			h = nil
		case waitUserRestart:
			tr.destroy(h)
			if tr.afterUserRestart(res) {
				return
			}
			h = nil
		case waitKilled:
			tr.kill(h, ch)
			return
		case waitDetached:
			return
		}
	}
}

// awaitStart waits for Config.AfterPrevious, then Config.StartAfter; it
// reports false when the runner is done instead (killed or detached
// meanwhile).
func (tr *TaskRunner) awaitStart() bool {
	return tr.await(tr.cfg.AfterPrevious, structs.TaskWaitingPrevious) &&
		tr.await(tr.cfg.StartAfter, tr.cfg.WaitMessage)
}

// await waits for ch (nil: at once), with an event saying msg when it
// has to; it reports false when the runner is done instead.
func (tr *TaskRunner) await(ch <-chan struct{}, msg string) bool {
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	default:
	}
	tr.event(structs.TaskHookWaiting, msg, nil)
	select {
	case <-ch:
		return true
	case <-tr.killCh:
		tr.killReason()
		tr.finish(false, structs.TaskKilled, "Task killed before it started", nil)
		return false
	case <-tr.detachCh:
		return false
	}
}

// How a wait on a running task ended.
const (
	waitExited = iota
	waitRestart
	waitUserRestart
	waitKilled
	waitDetached
)

// wait waits for the task run h to exit, be killed, be detached from, or
// be restarted on request (which stops it here); a request for an
// earlier run is dropped.
func (tr *TaskRunner) wait(h *drivers.TaskHandle, exited <-chan drivers.ExitResult) (drivers.ExitResult, int) {
	for {
		select {
		case res := <-exited:
			return res, waitExited
		case <-tr.killCh:
			return drivers.ExitResult{}, waitKilled
		case <-tr.detachCh:
			return drivers.ExitResult{}, waitDetached
		case req := <-tr.restartCh:
			if req.h != h {
				if req.stopped != nil {
					close(req.stopped)
				}
				continue
			}
			tr.event(structs.TaskRestartSignal, req.reason, func(e *structs.TaskEvent) { e.SetExtra().RestartReason = req.reason })
			res := tr.stop(h, exited)
			if req.stopped != nil {
				close(req.stopped)
			}
			if req.user {
				return res, waitUserRestart
			}
			return res, waitRestart
		}
	}
}

// stop stops a running task with its kill timeout and signal and returns
// how it ended.
func (tr *TaskRunner) stop(h *drivers.TaskHandle, exited <-chan drivers.ExitResult) drivers.ExitResult {
	timeout := tr.cfg.Task.KillTimeout
	if timeout <= 0 {
		timeout = structs.DefaultKillTimeout
	}
	if err := tr.cfg.Driver.Stop(h, timeout, tr.cfg.Task.KillSignal); err != nil {
		return drivers.ExitResult{Err: err}
	}
	return <-exited
}

// start launches the task and reports it running.
func (tr *TaskRunner) start() (*drivers.TaskHandle, error) {
	tr.mu.Lock()
	first := tr.state.StartedAt.IsZero()
	tr.mu.Unlock()
	if first {
		tr.event(structs.TaskSetup, "Building Task Directory", nil)
	}
	tc := tr.cfg.TaskConfig
	if tr.cfg.Templates != nil {
		env, err := tr.prestartTemplates()
		if err != nil {
			return nil, err
		}
		c := *tc
		c.Env = mergeTemplateEnv(tc.Env, env)
		tc = &c
	}
	// While the driver starts the process, the process may read its
	// files before a template's change: the change waits (afterStart).
	starting := make(chan struct{})
	tr.mu.Lock()
	tr.starting = starting
	tr.mu.Unlock()
	defer func() {
		tr.mu.Lock()
		tr.starting = nil
		tr.mu.Unlock()
		close(starting)
	}()
	h, err := tr.cfg.Driver.Start(tr.ctx, tc)
	if err != nil {
		return nil, err
	}
	now := tr.clock.Now()
	tr.mu.Lock()
	tr.handle = h
	tr.state.State = structs.TaskStateRunning
	tr.state.StartedAt = now
	tr.state.FinishedAt = time.Time{}
	tr.mu.Unlock()
	tr.event(structs.TaskStarted, "Task started by client", nil)
	return h, nil
}

// afterStartFailure records a driver failure and applies the restart
// policy; it reports whether the runner is done.
func (tr *TaskRunner) afterStartFailure(err error) bool {
	if tr.killed() {
		tr.killReason()
		tr.finish(false, structs.TaskKilled, "Task killed while starting", nil)
		return true
	}
	if tr.detached() {
		// The client shuts down: the start was cut short, not failed; the
		// next client starts the task.
		return true
	}
	if errors.Is(err, errTemplates) {
		// As Nomad's: a template that cannot render fails the task,
		// whatever its restart policy.
		tr.finish(true, structs.TemplateEventType, err.Error(), nil)
		return true
	}
	tr.event(structs.TaskDriverFailure, "Failed to start task", func(e *structs.TaskEvent) {
		// As Nomad shows it: the driver's error is the event's description
		// (a missing image, say, with the reason the pull failed).
		e.SetExtra().DriverError = err.Error()
		e.DisplayMessage = err.Error()
	})
	return tr.decide(false)
}

// afterExit records a task's end and applies the restart policy to it
// as a success or a failure; it reports whether the runner is done.
func (tr *TaskRunner) afterExit(res drivers.ExitResult, success bool) bool {
	tr.setHandle(nil)
	tr.terminated(res)
	return tr.decide(success)
}

// terminated records a "Terminated" event for how the task ended.
func (tr *TaskRunner) terminated(res drivers.ExitResult) {
	msg := fmt.Sprintf("Exit Code: %d", res.ExitCode)
	if res.Signal != 0 {
		msg += fmt.Sprintf(", Signal: %d", res.Signal)
	}
	if res.Err != nil {
		// As Nomad's TaskEvent.SetExitMessage: the driver's error (the
		// docker driver's "OOM Killed") is the exit message.
		msg += fmt.Sprintf(", Exit Message: %q", res.Err.Error())
	}
	if res.Unknown {
		msg = "Exit status unknown: the task ended while the client was not watching"
	}
	tr.event(structs.TaskTerminated, msg, func(e *structs.TaskEvent) {
		e.ExitCode, e.Signal = res.ExitCode, res.Signal
		// As Nomad's TaskEvent.SetOOMKilled, on every Terminated event.
		e.SetExtra().Details = map[string]string{"oom_killed": strconv.FormatBool(res.OOMKilled)}
		if res.Err != nil {
			e.Details["exit_message"] = res.Err.Error()
		}
	})
}

// afterUserRestart records the end of a task a user restarted and starts
// it again at once, outside the restart policy (which neither counts it
// nor delays it); it reports whether the runner is done (killed
// meanwhile).
func (tr *TaskRunner) afterUserRestart(res drivers.ExitResult) bool {
	tr.setHandle(nil)
	tr.terminated(res)
	if tr.killed() {
		tr.killReason()
		tr.finish(false, structs.TaskKilled, "Task killed while restarting", nil)
		return true
	}
	now := tr.clock.Now()
	tr.mu.Lock()
	tr.state.State = structs.TaskStatePending
	tr.state.Restarts++
	tr.state.LastRestart = now
	tr.mu.Unlock()
	tr.event(structs.TaskRestarting, "Task restarting in 0s", func(e *structs.TaskEvent) {
		e.SetExtra().Details = map[string]string{"start_delay": "0"}
	})
	return false
}

// decide applies the restart policy and, when it says restart, waits out
// the delay; it reports whether the runner is done.
func (tr *TaskRunner) decide(success bool) bool {
	d := tr.restart.next(success, tr.clock.Now())
	if !d.restart {
		tr.finish(d.failed, structs.TaskNotRestarting, d.reason, func(e *structs.TaskEvent) {
			e.SetExtra().RestartReason = d.reason
		})
		return true
	}
	now := tr.clock.Now()
	tr.mu.Lock()
	tr.state.State = structs.TaskStatePending
	tr.state.Restarts++
	tr.state.LastRestart = now
	tr.mu.Unlock()
	tr.event(structs.TaskRestarting, fmt.Sprintf("Task restarting in %v", d.delay), func(e *structs.TaskEvent) {
		x := e.SetExtra()
		x.RestartReason = d.reason
		x.Details = map[string]string{"start_delay": fmt.Sprint(int64(d.delay))}
	})
	timer := tr.clock.NewTimer(d.delay)
	defer timer.Stop()
	select {
	case <-timer.C():
		return false
	case <-tr.killCh:
		tr.killReason()
		tr.finish(false, structs.TaskKilled, "Task killed while waiting to restart", nil)
		return true
	case <-tr.detachCh:
		return true
	}
}

// SkipShutdownDelay makes a kill of the task skip its shutdown_delay, or
// end the wait of one under way (an allocation stopped with
// no_shutdown_delay, a client stopping its tasks).
func (tr *TaskRunner) SkipShutdownDelay() { tr.skipOnce.Do(func() { close(tr.skipDelay) }) }

// shutdownDelay waits the task's shutdown_delay before its kill, as
// Nomad's: its services are deregistered already (the servers drop them
// when they stop the allocation), so that clients stop sending it work
// first. It reports the task's exit when it exited meanwhile, and whether
// the client detached from it (the task runs on).
func (tr *TaskRunner) shutdownDelay(exited <-chan drivers.ExitResult) (res *drivers.ExitResult, detached bool) {
	d := tr.cfg.Task.ShutdownDelay
	if d <= 0 {
		return nil, false
	}
	select {
	case <-tr.skipDelay:
		tr.event(structs.TaskSkippingShutdownDelay, fmt.Sprintf("Skipping shutdown_delay of %s before killing the task.", d), nil)
		return nil, false
	default:
	}
	tr.event(structs.TaskWaitingShuttingDownDelay, fmt.Sprintf("Waiting for shutdown_delay of %s before killing the task.", d), nil)
	t := tr.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-tr.skipDelay:
	case r := <-exited:
		return &r, false
	case <-tr.detachCh:
		return nil, true
	}
	return nil, false
}

// kill stops a running task with its kill timeout and signal, after its
// shutdown_delay.
func (tr *TaskRunner) kill(h *drivers.TaskHandle, exited <-chan drivers.ExitResult) {
	early, detached := tr.shutdownDelay(exited)
	if detached {
		return
	}
	if early != nil {
		// It exited during its shutdown delay: nothing to signal.
		tr.killReason()
		tr.destroy(h)
		tr.terminated(*early)
		tr.finish(false, structs.TaskKilled, "Task successfully killed", func(e *structs.TaskEvent) {
			e.ExitCode, e.Signal = early.ExitCode, early.Signal
		})
		return
	}
	msg, reason := "Sent interrupt", ""
	tr.mu.Lock()
	if tr.killType == structs.TaskKilling {
		msg, reason = tr.killMsg, tr.killMsg
		tr.killType = ""
	}
	tr.mu.Unlock()
	tr.killReason()
	timeout := tr.cfg.Task.KillTimeout
	if timeout <= 0 {
		timeout = structs.DefaultKillTimeout
	}
	tr.event(structs.TaskKilling, msg, func(e *structs.TaskEvent) { e.KillTimeout, e.SetExtra().KillReason = timeout, reason })
	res := tr.stop(h, exited)
	tr.destroy(h)
	tr.finish(false, structs.TaskKilled, "Task successfully killed", func(e *structs.TaskEvent) {
		e.ExitCode, e.Signal = res.ExitCode, res.Signal
		if res.Err != nil {
			e.SetExtra().DriverError = res.Err.Error()
		}
	})
}

func (tr *TaskRunner) destroy(h *drivers.TaskHandle) {
	_ = tr.cfg.Driver.Destroy(h)
	tr.setHandle(nil)
}

func (tr *TaskRunner) setHandle(h *drivers.TaskHandle) {
	tr.mu.Lock()
	tr.handle = h
	tr.mu.Unlock()
}

// finish marks the task dead and records the last event.
func (tr *TaskRunner) finish(failed bool, typ, msg string, fill func(*structs.TaskEvent)) {
	now := tr.clock.Now()
	tr.mu.Lock()
	tr.state.State = structs.TaskStateDead
	tr.state.Failed = tr.state.Failed || failed || tr.killFails
	tr.state.FinishedAt = now
	tr.handle = nil
	tr.mu.Unlock()
	tr.event(typ, msg, fill)
}

// event appends an event to the state and reports the new state.
func (tr *TaskRunner) event(typ, msg string, fill func(*structs.TaskEvent)) {
	e := &structs.TaskEvent{Type: typ, Time: tr.clock.Now().UnixNano(), Message: msg, DisplayMessage: msg}
	if fill != nil {
		fill(e)
	}
	tr.mu.Lock()
	tr.state.Events = append(tr.state.Events, e)
	if n := len(tr.state.Events); n > maxEvents {
		tr.state.Events = append([]*structs.TaskEvent(nil), tr.state.Events[n-maxEvents:]...)
	}
	u := Update{Task: tr.cfg.Task.Name, State: tr.state.Copy(), Handle: tr.handle}
	tr.mu.Unlock()
	tr.cfg.OnUpdate(u)
}
