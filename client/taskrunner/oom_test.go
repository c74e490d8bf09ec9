package taskrunner

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

// oomDriver is the mock driver whose tasks end as the kernel's OOM
// killer ends a container: exit code 137, OOMKilled.
type oomDriver struct{ *mock.Driver }

func (d oomDriver) Wait(h *drivers.TaskHandle) (<-chan drivers.ExitResult, error) {
	in, err := d.Driver.Wait(h)
	if err != nil {
		return nil, err
	}
	out := make(chan drivers.ExitResult, 1)
	go func() {
		r := <-in
		r.ExitCode, r.OOMKilled = 137, true
		out <- r
		close(out)
	}()
	return out, nil
}

func TestOOMKilledTaskEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, structs.JobTypeBatch, map[string]any{"run_for": "1s"}, &structs.RestartPolicy{Mode: structs.RestartPolicyModeFail})
		h.driver = mock.New(mock.Options{Clock: h.clock})
		task := &structs.Task{Name: "web", Driver: "docker", KillTimeout: time.Second}
		tr, err := New(Config{
			Task: task, JobType: structs.JobTypeBatch, Driver: oomDriver{h.driver}, Clock: h.clock,
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
		if term == nil || term.ExitCode != 137 || term.Details["oom_killed"] != "true" ||
			term.DisplayMessage != `Exit Code: 137, Exit Message: "OOM Killed"` {
			t.Fatalf("terminated event %+v", term)
		}
		if st := tr.State(); !st.Failed {
			t.Fatalf("an OOM-killed batch task is not failed: %+v", st)
		}
	})
}
