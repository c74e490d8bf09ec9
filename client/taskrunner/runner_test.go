package taskrunner

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type harness struct {
	t       *testing.T
	clock   *clock.Fake
	driver  *mock.Driver
	runner  *TaskRunner
	updates []Update
}

// newHarness builds a runner for a mock task inside a synctest bubble, so
// synctest.Wait tells when the runner is blocked.
func newHarness(t *testing.T, jobType string, conf map[string]any, policy *structs.RestartPolicy) *harness {
	h := &harness{t: t, clock: clock.NewFake(epoch)}
	h.driver = mock.New(mock.Options{Clock: h.clock})
	h.runner = h.newRunner(jobType, conf, policy, nil, nil)
	return h
}

func (h *harness) newRunner(jobType string, conf map[string]any, policy *structs.RestartPolicy,
	handle *drivers.TaskHandle, state *structs.TaskState) *TaskRunner {
	task := &structs.Task{Name: "web", Driver: "mock", Config: conf, KillTimeout: 5 * time.Second}
	tr, err := New(Config{
		Task: task, JobType: jobType, Driver: h.driver, RestartPolicy: policy, Clock: h.clock,
		TaskConfig: &drivers.TaskConfig{AllocID: "a1", TaskName: "web", Config: conf},
		Handle:     handle, State: state,
		OnUpdate: func(u Update) { h.updates = append(h.updates, u) },
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return tr
}

// advance moves the fake clock once every goroutine is blocked.
func (h *harness) advance(d time.Duration) {
	synctest.Wait()
	h.clock.Advance(d)
	synctest.Wait()
}

func (h *harness) eventTypes() string {
	synctest.Wait()
	st := h.runner.State()
	var out []string
	for _, e := range st.Events {
		out = append(out, e.Type)
	}
	return strings.Join(out, ",")
}

func (h *harness) wantState(state string, failed bool, restarts uint64) {
	h.t.Helper()
	synctest.Wait()
	st := h.runner.State()
	if st.State != state || st.Failed != failed || st.Restarts != restarts {
		h.t.Fatalf("state %s failed=%v restarts=%d, want %s %v %d (events %s)",
			st.State, st.Failed, st.Restarts, state, failed, restarts, h.eventTypes())
	}
}

func TestBatchSuccessCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, structs.JobTypeBatch, map[string]any{"run_for": "10s"}, nil)
		h.runner.Run()
		h.wantState(structs.TaskStateRunning, false, 0)
		h.advance(10 * time.Second)
		<-h.runner.Done()
		h.wantState(structs.TaskStateDead, false, 0)
		if got := h.eventTypes(); got != "Received,Task Setup,Started,Terminated,Not Restarting" {
			t.Fatalf("events %s", got)
		}
		last := h.updates[len(h.updates)-1].State
		if !last.FinishedAt.Equal(epoch.Add(10*time.Second)) || !last.StartedAt.Equal(epoch) {
			t.Fatalf("times %v %v", last.StartedAt, last.FinishedAt)
		}
	})
}

func TestRestartPolicyFailMode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &structs.RestartPolicy{Attempts: 2, Interval: time.Hour, Delay: 5 * time.Second, Mode: structs.RestartPolicyModeFail}
		h := newHarness(t, structs.JobTypeService, map[string]any{"run_for": "10s", "exit_code": 1}, p)
		h.runner.Run()
		h.advance(10 * time.Second)
		h.wantState(structs.TaskStatePending, false, 1)
		h.advance(5*time.Second - time.Nanosecond)
		h.wantState(structs.TaskStatePending, false, 1) // the delay is not over
		h.advance(time.Nanosecond)
		h.wantState(structs.TaskStateRunning, false, 1)
		h.advance(10 * time.Second)
		h.advance(5 * time.Second)
		h.wantState(structs.TaskStateRunning, false, 2)
		h.advance(10 * time.Second)
		<-h.runner.Done()
		h.wantState(structs.TaskStateDead, true, 2)
		st := h.runner.State()
		last := st.Events[len(st.Events)-1]
		if last.Type != structs.TaskNotRestarting || !strings.Contains(last.RestartReason, "Exceeded allowed attempts 2") {
			t.Fatalf("last event %+v", last)
		}
		if got := h.eventTypes(); got != "Task Setup,Started,Terminated,Restarting,Started,Terminated,Restarting,Started,Terminated,Not Restarting" {
			t.Fatalf("events %s (the oldest beyond 10 dropped)", got)
		}
	})
}

func TestStartFailureIsDriverFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &structs.RestartPolicy{Attempts: 1, Interval: time.Hour, Delay: time.Second, Mode: structs.RestartPolicyModeFail}
		h := newHarness(t, structs.JobTypeService, map[string]any{"start_error": "no such image"}, p)
		h.runner.Run()
		h.advance(time.Second)
		<-h.runner.Done()
		h.wantState(structs.TaskStateDead, true, 1)
		st := h.runner.State()
		if st.Events[2].Type != structs.TaskDriverFailure || !strings.Contains(st.Events[2].DriverError, "no such image") ||
			st.Events[2].DisplayMessage != st.Events[2].DriverError {
			t.Fatalf("event %+v", st.Events[2])
		}
	})
}

func TestKillRunningTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, structs.JobTypeService, map[string]any{"kill_after": "2s"}, nil)
		h.runner.Run()
		h.wantState(structs.TaskStateRunning, false, 0)
		h.runner.Kill()
		h.advance(time.Second)
		h.wantState(structs.TaskStateRunning, false, 0) // still shutting down
		h.advance(time.Second)
		<-h.runner.Done()
		h.wantState(structs.TaskStateDead, false, 0)
		st := h.runner.State()
		n := len(st.Events)
		if st.Events[n-2].Type != structs.TaskKilling || st.Events[n-2].KillTimeout != 5*time.Second || st.Events[n-1].Type != structs.TaskKilled {
			t.Fatalf("events %s", h.eventTypes())
		}
		if h.driver.Running() != 0 {
			t.Fatal("mock task still running")
		}
	})
}

func TestKillDuringRestartDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, structs.JobTypeService, map[string]any{"run_for": "1s"}, nil)
		h.runner.Run()
		h.advance(time.Second)
		h.wantState(structs.TaskStatePending, false, 1)
		h.runner.Kill()
		<-h.runner.Done()
		h.wantState(structs.TaskStateDead, false, 1)
	})
}

func TestReattachAfterDetach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, structs.JobTypeBatch, map[string]any{"run_for": "1m", "exit_code": 0}, nil)
		h.runner.Run()
		h.wantState(structs.TaskStateRunning, false, 0)
		h.runner.Detach()
		<-h.runner.Done()
		// The client persists the last update and restarts.
		last := h.updates[len(h.updates)-1]
		b, err := json.Marshal(last.Handle)
		if err != nil {
			t.Fatal(err)
		}
		var handle drivers.TaskHandle
		if err := json.Unmarshal(b, &handle); err != nil {
			t.Fatal(err)
		}
		h.advance(30 * time.Second)
		h.driver = mock.New(mock.Options{Clock: h.clock})
		h.runner = h.newRunner(structs.JobTypeBatch, map[string]any{"run_for": "1m"}, nil, &handle, last.State)
		h.runner.Run()
		h.wantState(structs.TaskStateRunning, false, 0)
		if h.driver.Running() != 1 {
			t.Fatal("re-attached task not running in the new driver")
		}
		h.advance(30 * time.Second)
		<-h.runner.Done()
		h.wantState(structs.TaskStateDead, false, 0)
		if got := h.eventTypes(); got != "Received,Task Setup,Started,Terminated,Not Restarting" {
			t.Fatalf("events %s (Started must not repeat)", got)
		}
	})
}

func TestReattachToGoneTaskRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, structs.JobTypeService, map[string]any{"run_for": "10s"}, nil)
		h.runner.Run()
		h.wantState(structs.TaskStateRunning, false, 0)
		h.runner.Detach()
		<-h.runner.Done()
		last := h.updates[len(h.updates)-1]
		h.advance(time.Minute) // the task ended while the client was away
		h.driver = mock.New(mock.Options{Clock: h.clock})
		h.runner = h.newRunner(structs.JobTypeService, map[string]any{"run_for": "10s"}, nil, last.Handle, last.State)
		h.runner.Run()
		h.wantState(structs.TaskStatePending, false, 1)
		st := h.runner.State()
		if e := st.Events[len(st.Events)-2]; e.Type != structs.TaskTerminated || !strings.Contains(e.Message, "unknown") {
			t.Fatalf("event %+v", e)
		}
		h.runner.Kill()
		<-h.runner.Done()
	})
}

func TestNewRejectsIncompleteConfig(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("New accepted an empty config")
	}
}

// TestRestartOnRequest: a restart asked for (a failing check) records
// Nomad's "Restart Signaled" event with its reason, stops the task and
// applies the restart policy as to a failure: it counts against the
// attempts and waits the delay; past them the task fails.
func TestRestartOnRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &structs.RestartPolicy{Attempts: 1, Interval: time.Hour, Delay: 5 * time.Second, Mode: structs.RestartPolicyModeFail}
		h := newHarness(t, structs.JobTypeService, nil, p)
		if h.runner.Restart("early") {
			t.Fatal("a restart was taken before the task ran")
		}
		h.runner.Run()
		h.wantState(structs.TaskStateRunning, false, 0)
		const reason = `healthcheck: check "alive" unhealthy`
		if !h.runner.Restart(reason) {
			t.Fatal("restart refused")
		}
		h.wantState(structs.TaskStatePending, false, 1)
		st := h.runner.State()
		n := len(st.Events)
		sig, term, rs := st.Events[n-3], st.Events[n-2], st.Events[n-1]
		if sig.Type != structs.TaskRestartSignal || sig.RestartReason != reason || sig.DisplayMessage != reason ||
			term.Type != structs.TaskTerminated || rs.Type != structs.TaskRestarting || rs.RestartReason != ReasonWithinPolicy {
			t.Fatalf("events %+v %+v %+v", sig, term, rs)
		}
		h.advance(5 * time.Second)
		h.wantState(structs.TaskStateRunning, false, 1)
		if !h.runner.Restart(reason) {
			t.Fatal("second restart refused")
		}
		<-h.runner.Done()
		h.wantState(structs.TaskStateDead, true, 1)
		if got := h.eventTypes(); !strings.HasSuffix(got, "Started,Restart Signaled,Terminated,Not Restarting") {
			t.Fatalf("events %s", got)
		}
	})
}

// TestStaleRestartIgnored: a restart asked of a run that has since ended
// does not restart the next run.
func TestStaleRestartIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &structs.RestartPolicy{Attempts: 5, Interval: time.Hour, Delay: time.Second, Mode: structs.RestartPolicyModeFail}
		h := newHarness(t, structs.JobTypeService, map[string]any{"run_for": "10s", "exit_code": 1}, p)
		h.runner.Run()
		h.wantState(structs.TaskStateRunning, false, 0)
		// Queue a request for a handle that is no longer current: as if
		// the run ended between the request and its turn.
		h.runner.restartCh <- restartRequest{h: &drivers.TaskHandle{}, reason: "stale"}
		h.advance(10 * time.Second)
		h.advance(time.Second)
		h.wantState(structs.TaskStateRunning, false, 1)
		if got := h.eventTypes(); strings.Contains(got, structs.TaskRestartSignal) {
			t.Fatalf("stale restart acted on: %s", got)
		}
		h.runner.Kill()
		<-h.runner.Done()
	})
}
