package allocrunner

import (
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

func hookTask(name, hook string, sidecar bool, conf map[string]any) *structs.Task {
	t := mockTask(name, conf)
	t.Lifecycle = &structs.TaskLifecycle{Hook: hook, Sidecar: sidecar}
	return t
}

// firstAt is the index of the first update in which task has an event
// of type typ (-1: never). Updates are reported one at a time, in the
// order the allocation's state changed.
func (r *recorder) firstAt(task, typ string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, u := range r.updates {
		if st := u.TaskStates[task]; st != nil {
			for _, e := range st.Events {
				if e.Type == typ {
					return i
				}
			}
		}
	}
	return -1
}

func countEvents(st *structs.TaskState, typ string) int {
	n := 0
	for _, e := range st.Events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// before is a step of an order: event a of task ta happens before event
// b of task tb (both happen).
type before struct{ ta, a, tb, b string }

// checkOrder checks that each a is reported no later than its b. Two
// events may first show in the same update (another task's event
// recorded while the update was being taken), so an equal index passes.
func checkOrder(t *testing.T, rec *recorder, order []before) {
	t.Helper()
	for _, o := range order {
		i, j := rec.firstAt(o.ta, o.a), rec.firstAt(o.tb, o.b)
		if i < 0 || j < 0 || i > j {
			t.Errorf("%s %q (update %d) should come before %s %q (update %d)", o.ta, o.a, i, o.tb, o.b, j)
		}
	}
}

// TestLifecycleOrder runs each scenario on the mock driver and a fake
// clock: which tasks start after which, what is stopped last, and how the
// allocation ends.
func TestLifecycleOrder(t *testing.T) {
	const (
		started, terminated = structs.TaskStarted, structs.TaskTerminated
		killing, killed     = structs.TaskKilling, structs.TaskKilled
	)
	for _, c := range []struct {
		name    string
		jobType string
		tasks   func() []*structs.Task
		restart *structs.RestartPolicy
		// act runs after the first tasks started; it returns once the
		// scenario's clock has been advanced as far as it needs.
		act        func(c *clock.Fake, ar *AllocRunner)
		order      []before
		status     string
		never      map[string]string // task → event type it must not have
		startCount map[string]int
	}{
		{
			name: "service: prestart, sidecar, main, poststart; stopped: sidecar last, then poststop", jobType: structs.JobTypeService,
			tasks: func() []*structs.Task {
				return []*structs.Task{
					mockTask("web", nil),
					hookTask("init", structs.TaskLifecycleHookPrestart, false, map[string]any{"run_for": "1s"}),
					hookTask("proxy", structs.TaskLifecycleHookPrestart, true, nil),
					hookTask("announce", structs.TaskLifecycleHookPoststart, false, map[string]any{"run_for": "1s"}),
					hookTask("cleanup", structs.TaskLifecycleHookPoststop, false, map[string]any{"run_for": "1s"}),
				}
			},
			act: func(c *clock.Fake, ar *AllocRunner) {
				for range 3 {
					c.Advance(time.Second)
					synctest.Wait()
				}
				ar.Kill()
				synctest.Wait()
				c.Advance(time.Second) // cleanup's run
			},
			order: []before{
				{"web", structs.TaskHookWaiting, "init", terminated},
				{"init", terminated, "web", started},
				{"proxy", started, "web", started},
				{"announce", structs.TaskHookWaiting, "web", started},
				{"web", started, "announce", started},
				{"announce", terminated, "web", killing},
				{"web", killed, "proxy", structs.TaskMainDead},
				{"proxy", killed, "cleanup", started},
			},
			status:     structs.AllocClientStatusComplete,
			startCount: map[string]int{"init": 1, "announce": 1, "cleanup": 1, "web": 1},
		},
		{
			name: "failed prestart: its restarts, then the alloc fails; main never starts, poststop runs", jobType: structs.JobTypeService,
			restart: &structs.RestartPolicy{Attempts: 1, Delay: time.Second, Interval: time.Hour, Mode: structs.RestartPolicyModeFail},
			tasks: func() []*structs.Task {
				return []*structs.Task{
					hookTask("init", structs.TaskLifecycleHookPrestart, false, map[string]any{"run_for": "1s", "exit_code": 3}),
					mockTask("web", nil),
					hookTask("cleanup", structs.TaskLifecycleHookPoststop, false, map[string]any{"run_for": "1s"}),
				}
			},
			act: func(c *clock.Fake, ar *AllocRunner) {
				for range 4 {
					c.Advance(time.Second)
					synctest.Wait()
				}
			},
			order: []before{
				{"init", structs.TaskRestarting, "init", structs.TaskNotRestarting},
				{"init", structs.TaskNotRestarting, "web", structs.TaskSiblingFailed},
				{"web", killed, "cleanup", started},
			},
			status:     structs.AllocClientStatusFailed,
			never:      map[string]string{"web": started},
			startCount: map[string]int{"init": 2, "cleanup": 1},
		},
		{
			name: "batch: complete when the main task is; the sidecar is stopped after it", jobType: structs.JobTypeBatch,
			tasks: func() []*structs.Task {
				return []*structs.Task{
					hookTask("proxy", structs.TaskLifecycleHookPrestart, true, nil),
					mockTask("work", map[string]any{"run_for": "2s"}),
					hookTask("report", structs.TaskLifecycleHookPoststop, false, map[string]any{"run_for": "1s"}),
				}
			},
			act: func(c *clock.Fake, ar *AllocRunner) {
				for range 3 {
					c.Advance(time.Second)
					synctest.Wait()
				}
			},
			order: []before{
				{"proxy", started, "work", started},
				{"work", terminated, "proxy", structs.TaskMainDead},
				{"proxy", killed, "report", started},
			},
			status:     structs.AllocClientStatusComplete,
			startCount: map[string]int{"proxy": 1, "work": 1, "report": 1},
		},
		{
			name: "leader: its end stops the other main task, then the sidecar", jobType: structs.JobTypeBatch,
			tasks: func() []*structs.Task {
				lead := mockTask("lead", map[string]any{"run_for": "2s"})
				lead.Leader = true
				return []*structs.Task{
					lead, mockTask("follower", nil),
					hookTask("proxy", structs.TaskLifecycleHookPoststart, true, nil),
				}
			},
			act: func(c *clock.Fake, ar *AllocRunner) {
				c.Advance(2 * time.Second)
				synctest.Wait()
			},
			order: []before{
				{"lead", started, "proxy", started},
				{"lead", terminated, "follower", structs.TaskLeaderDead},
				{"follower", killed, "proxy", structs.TaskMainDead},
			},
			status: structs.AllocClientStatusComplete,
			never:  map[string]string{"proxy": structs.TaskLeaderDead},
		},
		{
			name: "a main task's restart does not run a completed prestart again", jobType: structs.JobTypeService,
			restart: &structs.RestartPolicy{Attempts: 2, Delay: time.Second, Interval: time.Hour, Mode: structs.RestartPolicyModeFail},
			tasks: func() []*structs.Task {
				return []*structs.Task{
					hookTask("init", structs.TaskLifecycleHookPrestart, false, map[string]any{"run_for": "1s"}),
					mockTask("web", map[string]any{"run_for": "1s", "exit_code": 1}),
				}
			},
			act: func(c *clock.Fake, ar *AllocRunner) {
				for range 3 {
					c.Advance(time.Second)
					synctest.Wait()
				}
				ar.Kill()
			},
			order:      []before{{"init", terminated, "web", started}, {"web", structs.TaskRestarting, "web", killed}},
			status:     structs.AllocClientStatusComplete,
			startCount: map[string]int{"init": 1, "web": 2},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clk := clock.NewFake(epoch)
				rec := &recorder{}
				alloc := testAlloc(c.jobType, c.tasks()...)
				if c.restart != nil {
					alloc.Job.TaskGroups[0].RestartPolicy = c.restart
				}
				ar := newRunner(t, t.TempDir(), clk, mock.New(mock.Options{Clock: clk}), alloc, rec)
				ar.Run()
				synctest.Wait()
				c.act(clk, ar)
				synctest.Wait()
				select {
				case <-ar.Done():
				default:
					ar.Kill() // do not hang the bubble
					clk.Advance(time.Minute)
					<-ar.Done()
					t.Fatalf("alloc not done; states %+v", rec.last().TaskStates)
				}
				u := rec.last()
				if u.ClientStatus != c.status {
					t.Errorf("status %s, want %s", u.ClientStatus, c.status)
				}
				checkOrder(t, rec, c.order)
				for task, typ := range c.never {
					if n := countEvents(u.TaskStates[task], typ); n != 0 {
						t.Errorf("%s had %d %q events: %+v", task, n, typ, u.TaskStates[task].Events)
					}
				}
				for task, n := range c.startCount {
					if got := countEvents(u.TaskStates[task], started); got != n {
						t.Errorf("%s started %d times, want %d", task, got, n)
					}
				}
			})
		})
	}
}

// TestLifecycleWaitingTaskIsPending: a main task waiting for a prestart
// task is pending, with a "Task hook" event saying so.
func TestLifecycleWaitingTaskIsPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(epoch)
		rec := &recorder{}
		alloc := testAlloc(structs.JobTypeService, mockTask("web", nil),
			hookTask("init", structs.TaskLifecycleHookPrestart, false, map[string]any{"run_for": "5s"}))
		ar := newRunner(t, t.TempDir(), clk, mock.New(mock.Options{Clock: clk}), alloc, rec)
		ar.Run()
		synctest.Wait()
		st := rec.last().TaskStates["web"]
		if st.State != structs.TaskStatePending {
			t.Fatalf("web %s", st.State)
		}
		if e := st.Events[len(st.Events)-1]; e.Type != structs.TaskHookWaiting || e.DisplayMessage != structs.TaskWaitingPrestart {
			t.Fatalf("web's last event %+v", e)
		}
		if s := rec.last().ClientStatus; s != structs.AllocClientStatusRunning {
			t.Fatalf("alloc %s while init runs", s)
		}
		ar.Kill()
		<-ar.Done()
		if st := rec.last().TaskStates["web"]; countEvents(st, structs.TaskStarted) != 0 || st.State != structs.TaskStateDead {
			t.Fatalf("web %+v", st)
		}
	})
}

func TestLifecyclePhase(t *testing.T) {
	tasks := []*structs.Task{
		mockTask("web", nil),
		hookTask("init", structs.TaskLifecycleHookPrestart, false, nil),
		hookTask("proxy", structs.TaskLifecycleHookPrestart, true, nil),
		hookTask("cleanup", structs.TaskLifecycleHookPoststop, false, nil),
	}
	run := &structs.TaskState{State: structs.TaskStateRunning, StartedAt: epoch}
	ok := &structs.TaskState{State: structs.TaskStateDead, StartedAt: epoch}
	bad := &structs.TaskState{State: structs.TaskStateDead, Failed: true, StartedAt: epoch}
	for _, c := range []struct {
		name      string
		states    map[string]*structs.TaskState
		unhealthy map[string]bool
		want      phase
	}{
		{"nothing yet", nil, nil, phase{}},
		{"init running", map[string]*structs.TaskState{"init": run, "proxy": run}, nil, phase{}},
		{"init done, proxy running", map[string]*structs.TaskState{"init": ok, "proxy": run}, nil, phase{mainMay: true}},
		{"proxy's checks not passing", map[string]*structs.TaskState{"init": ok, "proxy": run}, map[string]bool{"proxy": true}, phase{}},
		{"init failed", map[string]*structs.TaskState{"init": bad, "proxy": run}, nil, phase{}},
		{"main started", map[string]*structs.TaskState{"init": ok, "proxy": run, "web": run}, nil, phase{mainMay: true, poststartMay: true}},
		{"main dead, proxy running", map[string]*structs.TaskState{"init": ok, "proxy": run, "web": ok}, nil, phase{mainMay: true, poststartMay: true, mainDead: true}},
		{"all but poststop dead", map[string]*structs.TaskState{"init": ok, "proxy": ok, "web": ok}, nil, phase{poststartMay: true, poststopMay: true, mainDead: true}},
	} {
		if got := lifecyclePhase(tasks, c.states, c.unhealthy); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestLifecyclePrestartSidecarChecks: the main task waits for a prestart
// sidecar's checks to pass, not only for it to run. The sidecar's tcp
// check is real TCP on 127.0.0.1: a closed port keeps the main task
// pending; a listening one lets it start.
func TestLifecyclePrestartSidecarChecks(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() // never accepted from: the kernel completes the handshakes
	open := l.Addr().(*net.TCPAddr).Port
	for _, c := range []struct {
		name    string
		port    int
		started bool
	}{{"check failing", closedPort(t), false}, {"check passing", open, true}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clk := clock.NewFake(epoch)
				rec := &recorder{}
				proxy := hookTask("proxy", structs.TaskLifecycleHookPrestart, true, nil)
				proxy.Services = []*structs.Service{{Name: "proxy", PortLabel: "p", TaskName: "proxy", Checks: []*structs.ServiceCheck{{
					Name: "up", Type: structs.CheckTypeTCP, Interval: 5 * time.Second, Timeout: time.Second,
				}}}}
				alloc := testAlloc(structs.JobTypeService, mockTask("web", nil), proxy)
				alloc.DeploymentID = ""
				alloc.AllocatedResources = &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{
					Ports: []structs.PortMapping{{Label: "p", Value: c.port}},
				}}
				ar := newRunner(t, t.TempDir(), clk, mock.New(mock.Options{Clock: clk}), alloc, rec)
				ar.Run()
				for range 4 {
					synctest.Wait()
					clk.Advance(5 * time.Second)
				}
				synctest.Wait()
				web := rec.last().TaskStates["web"]
				if got := web.State == structs.TaskStateRunning; got != c.started {
					t.Errorf("web %s after 20s, want started=%v: %+v", web.State, c.started, web.Events)
				}
				if rec.last().TaskStates["proxy"].State != structs.TaskStateRunning {
					t.Errorf("proxy not running")
				}
				ar.Kill()
				synctest.Wait()
				<-ar.Done()
			})
		})
	}
}

// TestLifecycleSecondKillStopsPoststop: a poststop task runs after a
// Kill; a second Kill (a client shutting down meanwhile) stops it too, so
// that a poststop task that never ends cannot hold the client.
func TestLifecycleSecondKillStopsPoststop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(epoch)
		rec := &recorder{}
		alloc := testAlloc(structs.JobTypeService, mockTask("web", nil),
			hookTask("cleanup", structs.TaskLifecycleHookPoststop, false, nil))
		ar := newRunner(t, t.TempDir(), clk, mock.New(mock.Options{Clock: clk}), alloc, rec)
		ar.Run()
		synctest.Wait()
		ar.Kill()
		synctest.Wait()
		if st := rec.last().TaskStates["cleanup"]; st.State != structs.TaskStateRunning {
			t.Fatalf("cleanup %s after the first kill", st.State)
		}
		select {
		case <-ar.Done():
			t.Fatal("done while the poststop task runs")
		default:
		}
		ar.Kill()
		<-ar.Done()
		if st := rec.last().TaskStates["cleanup"]; st.State != structs.TaskStateDead || countEvents(st, structs.TaskKilled) != 1 {
			t.Fatalf("cleanup %+v", st)
		}
	})
}

// TestLifecycleReattach: a restarted client re-attaches to the running
// main task and sidecar and runs no completed prestart task again; the
// poststop task still waits.
func TestLifecycleReattach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(epoch)
		data := t.TempDir()
		alloc := testAlloc(structs.JobTypeService, mockTask("web", nil),
			hookTask("init", structs.TaskLifecycleHookPrestart, false, map[string]any{"run_for": "1s"}),
			hookTask("proxy", structs.TaskLifecycleHookPoststart, true, nil),
			hookTask("cleanup", structs.TaskLifecycleHookPoststop, false, map[string]any{"run_for": "1s"}))
		ar := newRunner(t, data, clk, mock.New(mock.Options{Clock: clk}), alloc, &recorder{})
		ar.Run()
		synctest.Wait()
		clk.Advance(time.Second)
		synctest.Wait()
		ar.Detach()
		<-ar.Done()

		d2 := mock.New(mock.Options{Clock: clk})
		rec := &recorder{}
		ar2 := newRunner(t, data, clk, d2, alloc, rec)
		ar2.Run()
		synctest.Wait()
		u := rec.last()
		if d2.Running() != 2 || u.TaskStates["web"].State != structs.TaskStateRunning || u.TaskStates["proxy"].State != structs.TaskStateRunning {
			t.Fatalf("not re-attached: running=%d %+v", d2.Running(), u.TaskStates)
		}
		if n := countEvents(u.TaskStates["init"], structs.TaskStarted); n != 1 || u.TaskStates["init"].State != structs.TaskStateDead {
			t.Fatalf("init %+v", u.TaskStates["init"])
		}
		if st := u.TaskStates["cleanup"]; st.State != structs.TaskStatePending {
			t.Fatalf("cleanup %s", st.State)
		}
		ar2.Kill()
		synctest.Wait()
		clk.Advance(time.Second)
		<-ar2.Done()
		if u := rec.last(); u.ClientStatus != structs.AllocClientStatusComplete || countEvents(u.TaskStates["cleanup"], structs.TaskStarted) != 1 {
			t.Fatalf("after kill: %s %+v", u.ClientStatus, u.TaskStates["cleanup"])
		}
	})
}

// TestLifecycleNoMainTask: a group of a prestart sidecar and a failing
// prestart task alone still ends: with no main task to outlive, the
// sidecar stops with the failure.
func TestLifecycleNoMainTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewFake(epoch)
		rec := &recorder{}
		alloc := testAlloc(structs.JobTypeBatch,
			hookTask("proxy", structs.TaskLifecycleHookPrestart, true, nil),
			hookTask("init", structs.TaskLifecycleHookPrestart, false, map[string]any{"run_for": "1s", "exit_code": 1}))
		ar := newRunner(t, t.TempDir(), clk, mock.New(mock.Options{Clock: clk}), alloc, rec)
		ar.Run()
		synctest.Wait()
		clk.Advance(time.Second)
		synctest.Wait()
		select {
		case <-ar.Done():
		default:
			ar.Kill()
			ar.Kill()
			<-ar.Done()
			t.Fatalf("not done: %+v", rec.last().TaskStates)
		}
		if u := rec.last(); u.ClientStatus != structs.AllocClientStatusFailed || countEvents(u.TaskStates["proxy"], structs.TaskSiblingFailed) != 1 {
			t.Fatalf("%s %+v", u.ClientStatus, u.TaskStates["proxy"])
		}
	})
}
