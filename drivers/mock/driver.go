// Package mock is a driver that simulates tasks without processes: a
// task is a timer. It is cheap enough to run thousands of tasks in one
// client, which is what load tests and rollout tests need.
//
// Config: run_for (duration; 0 runs until stopped), exit_code (used when
// run_for elapses), start_error (Start fails with it), start_delay (Start
// takes that long) and kill_after (the time Stop takes; a task that takes
// longer than Stop's timeout is killed then), stdout_string and
// stderr_string (written to the task's log files once, at start, as by
// Nomad's mock_driver).
//
// With Options.Nomad the driver is Nomad's test driver as Nomad names
// it, "mock_driver", with Nomad's one different default: a run_for of 0
// exits at once instead of running until stopped.
package mock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// Name is the driver's name.
const Name = structs.DriverMock

// ErrStartError is wrapped by Start when the config asks it to fail.
var ErrStartError = errors.New("mock start_error")

// Options tune the driver.
type Options struct {
	// Clock drives run_for, start_delay and kill_after (default: real).
	Clock clock.Clock
	// Nomad makes the driver "mock_driver": a task with no run_for
	// exits at once (exit_code), as under Nomad's driver of that name.
	Nomad bool
}

// Driver is the mock driver. Create it with New.
type Driver struct {
	clock clock.Clock
	name  string // Name or structs.DriverMockNomad
	nomad bool   // run_for 0 exits at once

	mu    sync.Mutex
	tasks map[string]*task
}

var _ drivers.Driver = (*Driver)(nil)

// New returns a mock driver.
func New(o Options) *Driver {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	name := Name
	if o.Nomad {
		name = structs.DriverMockNomad
	}
	return &Driver{clock: o.Clock, name: name, nomad: o.Nomad, tasks: make(map[string]*task)}
}

// handleState is the mock's part of a handle: enough to recompute, after
// a client restart, whether the task would still be running.
type handleState struct {
	RunFor    time.Duration
	ExitCode  int
	KillAfter time.Duration
}

// task is a simulated task: no goroutine, at most one timer at a time.
type task struct {
	exit drivers.ExitNotifier
	// killAfter is the handle's KillAfter, kept so that Stop need not
	// decode the handle's driver state again.
	killAfter time.Duration

	mu      sync.Mutex
	timer   clock.Timer // run_for, then the kill timer while stopping
	signals []string    // sent by Signal
}

// Name returns "mock", or "mock_driver" with Options.Nomad.
func (d *Driver) Name() string { return d.name }

// Fingerprint reports the driver as healthy.
func (d *Driver) Fingerprint() drivers.Fingerprint {
	return drivers.Fingerprint{
		Attributes:        map[string]string{"driver." + d.name: "1"},
		Healthy:           true,
		HealthDescription: "Healthy",
	}
}

// Start simulates starting the task: it waits start_delay, fails with
// start_error if set, then arms run_for.
func (d *Driver) Start(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: no task config", drivers.ErrInvalidConfig)
	}
	tc, err := parseConfig(cfg.Config)
	if err != nil {
		return nil, err
	}
	if tc.StartDelay > 0 {
		t := d.clock.NewTimer(tc.StartDelay)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	if tc.StartError != "" {
		return nil, fmt.Errorf("%w: %w: %s", drivers.ErrStartFailed, ErrStartError, tc.StartError)
	}
	if err := writeOutput(cfg, tc); err != nil {
		return nil, fmt.Errorf("%w: mock output: %w", drivers.ErrStartFailed, err)
	}
	h := &drivers.TaskHandle{Version: drivers.HandleVersion, Driver: d.name, Config: cfg, StartedAt: d.clock.Now()}
	if err := h.SetDriverState(handleState{RunFor: tc.RunFor, ExitCode: tc.ExitCode, KillAfter: tc.KillAfter}); err != nil {
		return nil, err
	}
	d.run(h.ID(), tc.RunFor, tc.ExitCode, tc.KillAfter)
	return h, nil
}

// run registers a task that exits with code after runFor (if 0: never,
// or at once for Nomad's mock_driver) and takes killAfter to stop.
func (d *Driver) run(id string, runFor time.Duration, code int, killAfter time.Duration) {
	t := &task{killAfter: killAfter}
	if runFor > 0 {
		t.timer = d.clock.AfterFunc(runFor, func() { t.exit.Exit(drivers.ExitResult{ExitCode: code}) })
	} else if d.nomad {
		t.exit.Exit(drivers.ExitResult{ExitCode: code})
	}
	d.mu.Lock()
	d.tasks[id] = t
	d.mu.Unlock()
}

// Recover re-attaches to a simulated task if, by the start time in the
// handle, its run_for has not yet elapsed.
func (d *Driver) Recover(h *drivers.TaskHandle) error {
	if err := drivers.CheckHandle(h, d.name); err != nil {
		return err
	}
	d.mu.Lock()
	_, known := d.tasks[h.ID()]
	d.mu.Unlock()
	if known {
		return nil
	}
	var st handleState
	if err := h.GetDriverState(&st); err != nil {
		return fmt.Errorf("%w: %w", drivers.ErrInvalidConfig, err)
	}
	left := time.Duration(0)
	if st.RunFor > 0 {
		left = h.StartedAt.Add(st.RunFor).Sub(d.clock.Now())
		if left <= 0 {
			return fmt.Errorf("%w: %s finished while detached", drivers.ErrTaskNotFound, h.ID())
		}
	} else if d.nomad {
		return fmt.Errorf("%w: %s finished while detached", drivers.ErrTaskNotFound, h.ID())
	}
	d.run(h.ID(), left, st.ExitCode, st.KillAfter)
	return nil
}

// Wait returns a channel that receives the task's exit result.
func (d *Driver) Wait(h *drivers.TaskHandle) (<-chan drivers.ExitResult, error) {
	t, err := d.lookup(h)
	if err != nil {
		return nil, err
	}
	return t.exit.Wait(), nil
}

// Stop simulates a stop: the task exits cleanly after kill_after, or is
// killed (SIGKILL) at timeout if kill_after is longer. It returns once
// the task has exited.
func (d *Driver) Stop(h *drivers.TaskHandle, timeout time.Duration, signal string) error {
	t, err := d.lookup(h)
	if err != nil {
		return err
	}
	if _, err := drivers.ParseSignal(signal); err != nil {
		return err
	}
	if _, exited := t.exit.Result(); exited {
		return nil
	}
	done := t.exit.Wait()
	// The handle's kill_after, as Start or Recover decoded it.
	after, res := t.killAfter, drivers.ExitResult{}
	if after > timeout {
		after = timeout
		res = drivers.ExitResult{ExitCode: 128 + int(syscall.SIGKILL), Signal: int(syscall.SIGKILL)}
	}
	t.mu.Lock()
	if t.timer != nil {
		t.timer.Stop()
	}
	if after > 0 {
		t.timer = d.clock.AfterFunc(after, func() { t.exit.Exit(res) })
		t.mu.Unlock()
	} else {
		t.timer = nil
		t.mu.Unlock()
		t.exit.Exit(res)
	}
	<-done
	return nil
}

// Destroy stops the task at once and forgets it.
func (d *Driver) Destroy(h *drivers.TaskHandle) error {
	t, err := d.lookup(h)
	if err != nil {
		return err
	}
	t.mu.Lock()
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	t.mu.Unlock()
	t.exit.Exit(drivers.ExitResult{ExitCode: 128 + int(syscall.SIGKILL), Signal: int(syscall.SIGKILL)})
	d.mu.Lock()
	if d.tasks[h.ID()] == t {
		delete(d.tasks, h.ID())
	}
	d.mu.Unlock()
	return nil
}

// Running returns how many tasks the driver holds that have not exited.
func (d *Driver) Running() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, t := range d.tasks {
		if _, done := t.exit.Result(); !done {
			n++
		}
	}
	return n
}

func (d *Driver) lookup(h *drivers.TaskHandle) (*task, error) {
	return drivers.Lookup(&d.mu, d.tasks, h, d.name)
}
