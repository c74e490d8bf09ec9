package allocrunner

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/drivers/rawexec"
	"github.com/droverhq/drover/structs"
)

// closedPort returns a port on 127.0.0.1 nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	n, _ := strconv.Atoi(p)
	return n
}

// TestCheckRestartRestartsTask: a task's tcp check against a closed port
// (real TCP on 127.0.0.1) with check_restart { limit = 2 } restarts the
// task after two failures past grace, through the group's restart policy
// (one attempt, 5s delay); the next two failures exceed it and fail the
// allocation. The allocation is in no deployment: checks with
// check_restart run whatever the deployment.
func TestCheckRestartRestartsTask(t *testing.T) {
	port := closedPort(t)
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		rec := &recorder{}
		web := mockTask("web", nil)
		web.Services = []*structs.Service{{Name: "web", PortLabel: "http", TaskName: "web", Checks: []*structs.ServiceCheck{{
			Name: "alive", Type: structs.CheckTypeTCP, Interval: 10 * time.Second, Timeout: time.Second,
			CheckRestart: &structs.CheckRestart{Limit: 2, Grace: time.Second},
		}}}}
		alloc := testAlloc(structs.JobTypeService, web, mockTask("side", nil))
		alloc.DeploymentID = ""
		alloc.Job.TaskGroups[0].RestartPolicy = &structs.RestartPolicy{Attempts: 1, Interval: time.Hour, Delay: 5 * time.Second, Mode: structs.RestartPolicyModeFail}
		alloc.AllocatedResources = &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{
			Ports: []structs.PortMapping{{Label: "http", Value: port}},
		}}
		ar := newRunner(t, t.TempDir(), c, mock.New(mock.Options{Clock: c}), alloc, rec)
		ar.Run()
		step := func(d time.Duration) {
			synctest.Wait()
			c.Advance(d)
			synctest.Wait()
		}
		// t=0 fails within grace; t=10 is the first failure that counts.
		step(10 * time.Second)
		if s := rec.last().TaskStates["web"]; s.State != structs.TaskStateRunning || s.Restarts != 0 {
			t.Fatalf("after one failure: %+v", s)
		}
		step(10 * time.Second) // t=20: the second
		s := rec.last().TaskStates["web"]
		if s.State != structs.TaskStatePending || s.Restarts != 1 {
			t.Fatalf("after two failures: %s restarts=%d", s.State, s.Restarts)
		}
		var sig *structs.TaskEvent
		for _, e := range s.Events {
			if e.Type == structs.TaskRestartSignal {
				sig = e
			}
		}
		if want := `healthcheck: check "alive" unhealthy`; sig == nil || sig.RestartReason != want || sig.DisplayMessage != want {
			t.Fatalf("no restart event %+v in %+v", sig, s.Events)
		}
		if side := rec.last().TaskStates["side"]; side.Restarts != 0 || side.State != structs.TaskStateRunning {
			t.Fatalf("the other task was touched: %+v", side)
		}
		step(5 * time.Second)  // t=25: started again
		step(5 * time.Second)  // t=30: a failure past the new grace
		step(10 * time.Second) // t=40: the second: beyond the policy
		<-ar.Done()
		u := rec.last()
		if u.ClientStatus != structs.AllocClientStatusFailed || !u.TaskStates["web"].Failed || u.TaskStates["web"].Restarts != 1 {
			t.Fatalf("status %s web %+v", u.ClientStatus, u.TaskStates["web"])
		}
	})
}

// TestScriptCheckGatesHealth runs a raw_exec task whose script check
// (run in the task's directory, with its environment) fails until a file
// exists, warns while it says "warn", and passes after: the allocation
// turns healthy only once the check passes (a warning does not). Real
// processes on the real clock, bounded in time.
func TestScriptCheckGatesHealth(t *testing.T) {
	data := t.TempDir()
	task := &structs.Task{Name: "web", Driver: "raw_exec", KillTimeout: time.Second,
		Config: map[string]any{"command": "/bin/sleep", "args": []any{"60"}},
		Env:    map[string]string{"STATE_FILE": "state"},
		Services: []*structs.Service{{Name: "web", TaskName: "web", Checks: []*structs.ServiceCheck{{
			Name: "state", Type: structs.CheckTypeScript, Command: "/bin/sh",
			Args:     []string{"-c", `test -f "$STATE_FILE" || exit 2; grep -q warn "$STATE_FILE" && exit 1; exit 0`},
			Interval: 20 * time.Millisecond, Timeout: 5 * time.Second,
		}}}}}
	alloc := testAlloc(structs.JobTypeService, task)
	tg := alloc.Job.TaskGroups[0]
	tg.Update.HealthCheck = structs.UpdateHealthCheckChecks
	tg.Update.MinHealthyTime = 100 * time.Millisecond
	tg.Update.HealthyDeadline = time.Hour
	healthCh := make(chan Update, 16)
	ar, err := New(Config{
		Alloc: alloc, DataDir: data,
		Drivers: map[string]drivers.Driver{"raw_exec": rawexec.New(rawexec.Options{})},
		OnUpdate: func(u Update) {
			if u.Health != nil {
				select {
				case healthCh <- u:
				default:
				}
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ar.Run()
	defer func() { ar.Kill(); <-ar.Done() }()
	state := filepath.Join(ar.Dir().TaskDir("web"), "state")
	hold := func(what string) {
		// The check is given many runs; no decision may come.
		select {
		case u := <-healthCh:
			t.Fatalf("health decided while the check %s: %+v", what, u.Health)
		case <-time.After(500 * time.Millisecond):
		}
	}
	hold("fails")
	if err := os.WriteFile(state, []byte("warn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hold("warns")
	if err := os.WriteFile(state, []byte("ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case u := <-healthCh:
		if !u.Health.Healthy {
			t.Fatalf("health %+v", u.Health)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("not healthy once the script check passed")
	}
}

// TestScriptCheckNeedsExecDriver: a script check in a task whose driver
// cannot run commands (mock) is refused when the allocation is set up,
// naming the check and the driver.
func TestScriptCheckNeedsExecDriver(t *testing.T) {
	web := mockTask("web", nil)
	web.Services = []*structs.Service{{Name: "web", TaskName: "web", Checks: []*structs.ServiceCheck{{
		Name: "s", Type: structs.CheckTypeScript, Command: "true", Interval: time.Second, Timeout: time.Second,
	}}}}
	alloc := testAlloc(structs.JobTypeService, web)
	alloc.Job.TaskGroups[0].Update.HealthCheck = structs.UpdateHealthCheckChecks
	_, err := New(Config{Alloc: alloc, DataDir: t.TempDir(), Drivers: map[string]drivers.Driver{"mock": mock.New(mock.Options{})}})
	if !errors.Is(err, drivers.ErrExecNotSupported) || !strings.Contains(err.Error(), "web/s") || !strings.Contains(err.Error(), "mock") {
		t.Fatalf("err %v", err)
	}
}
