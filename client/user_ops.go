package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/droverhq/drover/client/allocrunner"
	"github.com/droverhq/drover/client/taskrunner"
	"github.com/droverhq/drover/drivers"
)

// What a user asks of an allocation the client runs, for the agent's
// client endpoints (see website/api/client.md): an interactive command in
// a task (alloc exec), a restart in place (alloc restart), a signal
// (alloc signal). Errors wrap ErrUnknownAlloc, allocrunner.ErrUnknownTask,
// taskrunner.ErrTaskNotRunning (an allocation that is stopping or has
// ended, a task that is dead or restarting), drivers.ErrInvalidConfig (an
// empty command, an unknown signal), drivers.ErrExecStart,
// drivers.ErrExecNotSupported or taskrunner.ErrSignalNotSupported.

// ErrUnknownAlloc: the client does not hold the allocation.
var ErrUnknownAlloc = errors.New("unknown allocation")

// liveRunner returns the runner of an allocation that runs.
func (a *Agent) liveRunner(allocID string) (*allocrunner.AllocRunner, error) {
	a.mu.Lock()
	e := a.allocs[allocID]
	a.mu.Unlock()
	if e == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownAlloc, allocID)
	}
	e.mu.Lock()
	runner, killed, setupErr := e.runner, e.killed, e.setupErr
	status := e.last.ClientStatus
	if status == "" {
		status = allocrunner.ClientStatus(e.last.TaskStates)
	}
	e.mu.Unlock()
	switch {
	case setupErr != nil:
		return nil, stateError(fmt.Sprintf("allocation %s could not be set up: %v", allocID, setupErr))
	case killed:
		return nil, stateError(fmt.Sprintf("allocation %s is stopped (%s)", allocID, status))
	case runner == nil || terminal(status):
		return nil, stateError(fmt.Sprintf("allocation %s is not running (%s)", allocID, status))
	}
	return runner, nil
}

// stateError is taskrunner.ErrTaskNotRunning with its own message.
type stateError string

func (e stateError) Error() string { return string(e) }
func (e stateError) Unwrap() error { return taskrunner.ErrTaskNotRunning }

// ExecTask starts an interactive command in a running task of an
// allocation (drivers.StreamExecDriver); ending ctx kills it.
func (a *Agent) ExecTask(ctx context.Context, allocID, task string, req drivers.ExecStreamRequest) (drivers.ExecSession, error) {
	if len(req.Command) == 0 || req.Command[0] == "" {
		return nil, fmt.Errorf("%w: missing command", drivers.ErrInvalidConfig)
	}
	ar, err := a.liveRunner(allocID)
	if err != nil {
		return nil, err
	}
	return ar.ExecStream(ctx, task, req)
}

// RestartAlloc restarts a task of the allocation in place, or every
// running task when task is "" (allTasks is the same), as a user asks:
// not counted against the restart policy. It returns once the tasks have
// been stopped.
func (a *Agent) RestartAlloc(ctx context.Context, allocID, task string, allTasks bool) error {
	ar, err := a.liveRunner(allocID)
	if err != nil {
		return err
	}
	return ar.RestartTasks(ctx, task, allTasks)
}

// SignalAlloc sends a signal to a task of the allocation, or to every
// running task when task is "".
func (a *Agent) SignalAlloc(allocID, task, signal string) error {
	if _, err := drivers.ParseSignal(signal); err != nil {
		return err
	}
	ar, err := a.liveRunner(allocID)
	if err != nil {
		return err
	}
	return ar.Signal(task, signal)
}
