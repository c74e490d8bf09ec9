package allocrunner

import (
	"net"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers/mock"
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
