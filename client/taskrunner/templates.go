package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// errTemplates marks a start that failed because the task's templates
// did not render.
var errTemplates = errors.New("Template failed")

// setupTemplates builds the task's template renderer, once; every call
// returns its error. A builder that failed leaves no hook, whatever it
// returned beside its error (a nil pointer in the interface would be
// stopped, and panic).
func (tr *TaskRunner) setupTemplates() error {
	tr.templatesOnce.Do(func() {
		hook, err := tr.cfg.Templates(tr)
		if err != nil {
			hook = nil
		} else if hook == nil || reflect.ValueOf(hook).Kind() == reflect.Pointer && reflect.ValueOf(hook).IsNil() {
			hook, err = nil, errors.New("no template renderer")
		}
		tr.mu.Lock()
		tr.templates, tr.templatesErr = hook, err
		tr.mu.Unlock()
	})
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.templatesErr
}

// prestartTemplates waits for the templates' first render and returns
// their variables; its error wraps errTemplates.
func (tr *TaskRunner) prestartTemplates() (map[string]string, error) {
	if err := tr.setupTemplates(); err != nil {
		return nil, fmt.Errorf("%w: %w", errTemplates, err)
	}
	tr.mu.Lock()
	hook := tr.templates
	tr.mu.Unlock()
	env, err := hook.Prestart(tr.ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errTemplates, err)
	}
	return env, nil
}

func (tr *TaskRunner) stopTemplates() {
	tr.mu.Lock()
	hook := tr.templates
	tr.mu.Unlock()
	if hook != nil {
		hook.Stop()
	}
}

// mergeTemplateEnv adds the templates' variables to the task's: they
// override the host's and the env block's, not the built-in NOMAD_* and
// DROVER_* ones.
func mergeTemplateEnv(base, tmpl map[string]string) map[string]string {
	if len(tmpl) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range tmpl {
		if _, builtin := base[k]; builtin && (strings.HasPrefix(k, "NOMAD_") || strings.HasPrefix(k, "DROVER_")) {
			continue
		}
		out[k] = v
	}
	return out
}

// The template renderer's view of the task (client/template.Lifecycle).

// Running reports whether the task runs.
func (tr *TaskRunner) Running() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.handle != nil && tr.state.State == structs.TaskStateRunning
}

// RestartForTemplate restarts the running task at once, outside its
// restart policy, as Nomad restarts a task whose template changed: a
// "Restart Signaled" event with reason, the task stopped with its kill
// timeout and signal, and started again with the new files. It does
// nothing unless the task runs (it will start with them anyway).
func (tr *TaskRunner) RestartForTemplate(reason string) {
	tr.afterStart()
	tr.mu.Lock()
	h, running := tr.handle, tr.state.State == structs.TaskStateRunning
	tr.mu.Unlock()
	if h == nil || !running || tr.killed() {
		return
	}
	select {
	case tr.restartCh <- restartRequest{h: h, reason: reason, user: true}:
	case <-tr.doneCh:
	case <-tr.killCh:
	}
}

// SignalForTemplate sends a signal to the running task, its "Signaling"
// event saying why (message). A task being started gets it once it runs;
// a task that does not run (not yet started, restarting, dead) gets none:
// it starts, if it does, with the new files.
func (tr *TaskRunner) SignalForTemplate(signal, message string) error {
	tr.afterStart()
	err := tr.signal(signal, message)
	if errors.Is(err, ErrTaskNotRunning) {
		return nil
	}
	return err
}

// afterStart waits while the driver is starting the task: its process
// may already run, and may have read its files before a template's
// change that the task must then be told of.
func (tr *TaskRunner) afterStart() {
	tr.mu.Lock()
	starting := tr.starting
	tr.mu.Unlock()
	if starting == nil {
		return
	}
	select {
	case <-starting:
	case <-tr.doneCh:
	case <-tr.killCh:
	}
}

// Exec runs cmd in the running task through its driver
// (drivers.ExecTaskDriver), as a template's change_script.
func (tr *TaskRunner) Exec(ctx context.Context, cmd []string) ([]byte, int, error) {
	ed, ok := tr.cfg.Driver.(drivers.ExecTaskDriver)
	if !ok {
		return nil, 0, fmt.Errorf("%w: %s", drivers.ErrExecNotSupported, tr.cfg.Driver.Name())
	}
	tr.afterStart()
	h := tr.Handle()
	if h == nil {
		return nil, 0, fmt.Errorf("%w: task %q is not running", drivers.ErrTaskNotFound, tr.cfg.Task.Name)
	}
	return ed.Exec(ctx, h, cmd)
}

// Fail kills the task and marks it failed; reason is the "Killing"
// event's message.
func (tr *TaskRunner) Fail(reason string) {
	tr.mu.Lock()
	tr.killFails = true
	tr.mu.Unlock()
	tr.KillFor(structs.TaskKilling, reason)
}

// Event records a task event.
func (tr *TaskRunner) Event(typ, message string) { tr.event(typ, message, nil) }
