package taskrunner

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

// oomDriver is the mock driver whose tasks end as the kernel's OOM
// killer ends them: the result of the docker driver (exit code 137, the
// error "OOM Killed") or, with signal, of the exec driver (137, SIGKILL,
// no error).
type oomDriver struct {
	*mock.Driver
	signal bool
}

func (d oomDriver) Wait(h *drivers.TaskHandle) (<-chan drivers.ExitResult, error) {
	in, err := d.Driver.Wait(h)
	if err != nil {
		return nil, err
	}
	out := make(chan drivers.ExitResult, 1)
	go func() {
		r := <-in
		r.ExitCode, r.OOMKilled = 137, true
		if d.signal {
			r.Signal = 9
		} else {
			r.Err = errors.New("OOM Killed")
		}
		out <- r
		close(out)
	}()
	return out, nil
}

// TestOOMKilledTaskEvent: the Terminated event of an OOM kill is Nomad's,
// for either driver: details oom_killed=true, and the driver's error, if
// any, as the exit message.
func TestOOMKilledTaskEvent(t *testing.T) {
	for _, c := range []struct {
		driver, display string
		signal          bool
	}{
		{"docker", `Exit Code: 137, Exit Message: "OOM Killed"`, false},
		{"exec", `Exit Code: 137, Signal: 9`, true},
	} {
		t.Run(c.driver, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				term, st := oomRun(t, c.driver, c.signal)
				if term == nil || term.ExitCode != 137 || term.Details["oom_killed"] != "true" || term.DisplayMessage != c.display {
					t.Fatalf("terminated event %+v", term)
				}
				if c.signal && len(term.Details) != 1 || !c.signal && term.Details["exit_message"] != "OOM Killed" {
					t.Fatalf("details %v", term.Details)
				}
				if !st.Failed {
					t.Fatalf("an OOM-killed batch task is not failed: %+v", st)
				}
			})
		})
	}
}

// oomRun runs a batch task of driver that the OOM killer ends, and
// returns its Terminated event and final state.
func oomRun(t *testing.T, driver string, signal bool) (*structs.TaskEvent, *structs.TaskState) {
	h := newHarness(t, structs.JobTypeBatch, map[string]any{"run_for": "1s"}, &structs.RestartPolicy{Mode: structs.RestartPolicyModeFail})
	h.driver = mock.New(mock.Options{Clock: h.clock})
	task := &structs.Task{Name: "web", Driver: driver, KillTimeout: time.Second}
	tr, err := New(Config{
		Task: task, JobType: structs.JobTypeBatch, Driver: oomDriver{h.driver, signal}, Clock: h.clock,
		RestartPolicy: &structs.RestartPolicy{Mode: structs.RestartPolicyModeFail},
		TaskConfig:    &drivers.TaskConfig{AllocID: "a1", TaskName: "web", Config: map[string]any{"run_for": "1s"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.runner = tr
	tr.Run()
	h.advance(time.Second)
	<-tr.Done()
	var term *structs.TaskEvent
	for _, e := range tr.State().Events {
		if e.Type == structs.TaskTerminated {
			term = e
		}
	}
	return term, tr.State()
}
