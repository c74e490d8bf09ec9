package taskrunner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// TestRestartByUser: a restart a user asks for records Nomad's events
// (Restart Signaled "User requested restart", Terminated, Restarting
// "Task restarting in 0s", Started), starts the task again at once and
// does not count against the restart policy: a task allowed no restarts
// is restarted as often as asked, and its next failure still fails it.
func TestRestartByUser(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &structs.RestartPolicy{Attempts: 0, Interval: time.Hour, Delay: 5 * time.Second, Mode: structs.RestartPolicyModeFail}
		h := newHarness(t, structs.JobTypeService, map[string]any{"run_for": "1h", "exit_code": 1}, p)
		if err := h.runner.RestartByUser(context.Background()); !errors.Is(err, ErrTaskNotRunning) {
			t.Fatalf("restart before the task ran: %v", err)
		}
		h.runner.Run()
		h.wantState(structs.TaskStateRunning, false, 0)
		for i := uint64(1); i <= 3; i++ {
			first := h.runner.Handle()
			if err := h.runner.RestartByUser(context.Background()); err != nil {
				t.Fatal(err)
			}
			h.wantState(structs.TaskStateRunning, false, i)
			if h.runner.Handle() == first {
				t.Fatal("the task was not started again")
			}
		}
		st := h.runner.State()
		n := len(st.Events)
		sig, term, rs, started := st.Events[n-4], st.Events[n-3], st.Events[n-2], st.Events[n-1]
		if sig.Type != structs.TaskRestartSignal || sig.RestartReason != structs.TaskRestartUserRequested ||
			sig.DisplayMessage != "User requested restart" || term.Type != structs.TaskTerminated ||
			rs.Type != structs.TaskRestarting || rs.DisplayMessage != "Task restarting in 0s" || started.Type != structs.TaskStarted {
			t.Fatalf("events %+v %+v %+v %+v", sig, term, rs, started)
		}
		// The policy's attempts are untouched: Nomad's "no restarts"
		// still holds for a failure.
		h.advance(time.Hour)
		<-h.runner.Done()
		h.wantState(structs.TaskStateDead, true, 3)
		if err := h.runner.RestartByUser(context.Background()); !errors.Is(err, ErrTaskNotRunning) {
			t.Fatalf("restart of a dead task: %v", err)
		}
	})
}

// TestSignal: a signal reaches the running task's driver after a
// "Signaling" event naming it; an unknown signal or a task that is not
// running records nothing.
func TestSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, structs.JobTypeService, nil, nil)
		if err := h.runner.Signal("SIGUSR1"); !errors.Is(err, ErrTaskNotRunning) {
			t.Fatalf("signal before the task ran: %v", err)
		}
		h.runner.Run()
		h.wantState(structs.TaskStateRunning, false, 0)
		if err := h.runner.Signal("usr1"); err != nil {
			t.Fatal(err)
		}
		if got := h.driver.Signals(h.runner.Handle()); len(got) != 1 || got[0] != "SIGUSR1" {
			t.Fatalf("driver got %v", got)
		}
		st := h.runner.State()
		e := st.Events[len(st.Events)-1]
		if e.Type != structs.TaskSignaling || e.TaskSignal != "SIGUSR1" || e.DisplayMessage != "Task being sent signal SIGUSR1" {
			t.Fatalf("event %+v", e)
		}
		before := h.eventTypes()
		if err := h.runner.Signal("SIGNOPE"); !errors.Is(err, drivers.ErrInvalidConfig) {
			t.Fatalf("unknown signal: %v", err)
		}
		if got := h.eventTypes(); got != before || strings.Count(got, structs.TaskSignaling) != 1 {
			t.Fatalf("events %s after a refused signal", got)
		}
		h.runner.Kill()
		<-h.runner.Done()
		if err := h.runner.Signal("SIGUSR1"); !errors.Is(err, ErrTaskNotRunning) {
			t.Fatalf("signal to a dead task: %v", err)
		}
	})
}
