package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/droverhq/drover/client/taskrunner"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// What a user asks of a running allocation (alloc exec, alloc restart,
// alloc signal), as Nomad's client does it.

// ErrUnknownTask: the allocation's group has no task of that name.
var ErrUnknownTask = errors.New("unknown task")

// kindError is an error whose message says it all and that wraps a
// sentinel (taskrunner.ErrTaskNotRunning).
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// notRunning is taskrunner.ErrTaskNotRunning for a task of the
// allocation, saying its state.
func (ar *AllocRunner) notRunning(task, state string) error {
	if state == "" {
		state = structs.TaskStateDead
	}
	return &kindError{msg: fmt.Sprintf("task %q of allocation %s is not running (%s)", task, ar.cfg.Alloc.ID, state),
		kind: taskrunner.ErrTaskNotRunning}
}

// noneRunning is taskrunner.ErrTaskNotRunning for an allocation none of
// whose tasks runs.
func (ar *AllocRunner) noneRunning() error {
	return &kindError{msg: fmt.Sprintf("no task of allocation %s is running", ar.cfg.Alloc.ID), kind: taskrunner.ErrTaskNotRunning}
}

// taskErr words a task runner's refusal.
func (ar *AllocRunner) taskErr(name string, tr *taskrunner.TaskRunner, err error) error {
	if errors.Is(err, taskrunner.ErrTaskNotRunning) {
		return ar.notRunning(name, tr.State().State)
	}
	return err
}

// task returns the runner of a task of the group, or an error: an
// unknown task, or one that has no runner (it was dead when the client
// restarted).
func (ar *AllocRunner) task(name string) (*taskrunner.TaskRunner, error) {
	if ar.group.LookupTask(name) == nil {
		return nil, fmt.Errorf("%w %q in allocation %s", ErrUnknownTask, name, ar.cfg.Alloc.ID)
	}
	tr := ar.runners[name]
	if tr == nil {
		return nil, ar.notRunning(name, structs.TaskStateDead)
	}
	return tr, nil
}

// ExecStream starts an interactive command in a running task through
// its driver (drivers.StreamExecDriver).
func (ar *AllocRunner) ExecStream(ctx context.Context, task string, req drivers.ExecStreamRequest) (drivers.ExecSession, error) {
	tr, err := ar.task(task)
	if err != nil {
		return nil, err
	}
	t := ar.group.LookupTask(task)
	sd, ok := ar.cfg.Drivers[t.Driver].(drivers.StreamExecDriver)
	if !ok {
		return nil, fmt.Errorf("%w: exec is not supported by the %s driver", drivers.ErrExecNotSupported, t.Driver)
	}
	h, st := tr.Handle(), tr.State()
	if h == nil || st.State != structs.TaskStateRunning {
		return nil, ar.notRunning(task, st.State)
	}
	s, err := sd.ExecStream(ctx, h, req)
	if errors.Is(err, drivers.ErrTaskNotFound) {
		return nil, ar.notRunning(task, structs.TaskStateDead)
	}
	return s, err
}

// running returns the names of the tasks that run, sorted.
func (ar *AllocRunner) running() []string {
	var out []string
	for name, tr := range ar.runners {
		if tr.Handle() != nil && tr.State().State == structs.TaskStateRunning {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// RestartTasks restarts, as a user asks (see
// taskrunner.RestartByUser), the named task, or with task "" every
// running task; allTasks is the same as "" (tasks that have died are
// not started again). It returns once they have been stopped.
func (ar *AllocRunner) RestartTasks(ctx context.Context, task string, allTasks bool) error {
	if task != "" && allTasks {
		return fmt.Errorf("%w: a task name and all tasks cannot both be given", drivers.ErrInvalidConfig)
	}
	names := []string{task}
	if task == "" {
		if names = ar.running(); len(names) == 0 {
			return ar.noneRunning()
		}
	}
	runners := make([]*taskrunner.TaskRunner, len(names))
	for i, n := range names {
		tr, err := ar.task(n)
		if err != nil {
			return err
		}
		runners[i] = tr
	}
	errs := make([]error, len(runners))
	var wg sync.WaitGroup
	for i, tr := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := tr.RestartByUser(ctx); err != nil {
				errs[i] = ar.taskErr(names[i], tr, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Signal sends a signal to the named task, or with task "" to every
// running task (taskrunner.Signal).
func (ar *AllocRunner) Signal(task, signal string) error {
	if _, err := drivers.ParseSignal(signal); err != nil {
		return err
	}
	names := []string{task}
	if task == "" {
		if names = ar.running(); len(names) == 0 {
			return ar.noneRunning()
		}
	}
	var errs []error
	for _, n := range names {
		tr, err := ar.task(n)
		if err == nil {
			err = ar.taskErr(n, tr, tr.Signal(signal))
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
