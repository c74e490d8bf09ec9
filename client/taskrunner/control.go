package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// What others ask of a running task: kill, restart, signal.

// Kill asks the runner to stop the task (with the task's kill timeout and
// signal) and not restart it. It does not wait: see Done.
func (tr *TaskRunner) Kill() { tr.KillFor("", "") }

// KillFor is Kill with a first event saying why, such as
// structs.TaskSiblingFailed; an empty eventType records none. With
// structs.TaskKilling the message is the kill's reason: the "Killing"
// event of a running task carries it (KillReason) instead of "Sent
// interrupt", as Nomad's.
func (tr *TaskRunner) KillFor(eventType, message string) {
	tr.killOnce.Do(func() {
		tr.mu.Lock()
		tr.killType, tr.killMsg = eventType, message
		tr.mu.Unlock()
		close(tr.killCh)
		tr.cancel()
	})
}

// killReason records the event KillFor was given, if any.
func (tr *TaskRunner) killReason() {
	tr.mu.Lock()
	typ, msg := tr.killType, tr.killMsg
	tr.killType = ""
	tr.mu.Unlock()
	if typ != "" {
		tr.event(typ, msg, nil)
	}
}

// restartRequest asks for a restart of the task run h names.
type restartRequest struct {
	h      *drivers.TaskHandle
	reason string
	// user: a restart outside the restart policy (a user's, or a
	// template's), which does not count against its attempts and
	// happens at once.
	user bool
	// stopped, when set, is closed once the run is stopped (or the
	// request dropped).
	stopped chan struct{}
}

// Restart asks the runner to restart the running task as a failure: a
// "Restart Signaled" event with reason, the task stopped with its kill
// timeout and signal, then its restart policy applied as to a task that
// failed (the restart counts against its attempts, after its delay).
// It does nothing unless the task runs, and reports whether the request
// was taken. It does not wait.
func (tr *TaskRunner) Restart(reason string) bool {
	tr.mu.Lock()
	h, running := tr.handle, tr.state.State == structs.TaskStateRunning
	tr.mu.Unlock()
	if h == nil || !running || tr.killed() {
		return false
	}
	select {
	case tr.restartCh <- restartRequest{h: h, reason: reason}:
		return true
	default:
		return false
	}
}

// Sentinel errors of the operations a user asks of a task.
var (
	// ErrTaskNotRunning: the task is not running (pending, restarting
	// or dead), so it cannot be restarted, signalled or exec'd into.
	ErrTaskNotRunning = errors.New("task not running")
	// ErrSignalNotSupported: the task's driver cannot signal its tasks.
	ErrSignalNotSupported = errors.New("driver cannot signal its tasks")
)

// RestartByUser restarts the running task as a user asks (alloc
// restart), as Nomad's: a "Restart Signaled" event ("User requested
// restart"), the task stopped with its kill timeout and signal, then
// started again at once; the restart does not count against the restart
// policy's attempts. It returns once the task has been stopped (not
// started again), or when ctx ends first; ErrTaskNotRunning unless the
// task runs.
func (tr *TaskRunner) RestartByUser(ctx context.Context) error {
	tr.mu.Lock()
	h, running := tr.handle, tr.state.State == structs.TaskStateRunning
	tr.mu.Unlock()
	if h == nil || !running || tr.killed() {
		return ErrTaskNotRunning
	}
	req := restartRequest{h: h, reason: structs.TaskRestartUserRequested, user: true, stopped: make(chan struct{})}
	select {
	case tr.restartCh <- req:
	case <-tr.doneCh:
		return ErrTaskNotRunning
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-req.stopped:
		return nil
	case <-tr.doneCh:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Signal sends a signal (by name, drivers.ParseSignal's forms) to the
// running task through its driver, after a "Signaling" event, as
// Nomad's. An unknown signal wraps drivers.ErrInvalidConfig and records
// nothing; a task that is not running is ErrTaskNotRunning.
func (tr *TaskRunner) Signal(signal string) error {
	return tr.signal(signal, "")
}

// signal sends a signal with a "Signaling" event whose message is msg
// ("" for the usual one).
func (tr *TaskRunner) signal(signal, msg string) error {
	name, err := signalName(signal)
	if err != nil {
		return err
	}
	sd, ok := tr.cfg.Driver.(drivers.TaskSignaler)
	if !ok {
		return fmt.Errorf("%w: %s", ErrSignalNotSupported, tr.cfg.Driver.Name())
	}
	tr.mu.Lock()
	h, running := tr.handle, tr.state.State == structs.TaskStateRunning
	tr.mu.Unlock()
	if h == nil || !running || tr.killed() {
		return ErrTaskNotRunning
	}
	if msg == "" {
		msg = "Task being sent signal " + name
	}
	tr.event(structs.TaskSignaling, msg, func(e *structs.TaskEvent) {
		x := e.SetExtra()
		x.TaskSignal = name
		x.Details = map[string]string{"signal": name}
	})
	if err := sd.Signal(h, name); err != nil {
		if errors.Is(err, drivers.ErrTaskNotFound) {
			return ErrTaskNotRunning
		}
		return err
	}
	return nil
}

// signalName returns a signal's canonical name ("usr1" → "SIGUSR1").
func signalName(s string) (string, error) {
	if _, err := drivers.ParseSignal(s); err != nil {
		return "", err
	}
	n := strings.ToUpper(s)
	if !strings.HasPrefix(n, "SIG") {
		n = "SIG" + n
	}
	return n, nil
}
