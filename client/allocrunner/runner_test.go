package allocrunner

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/drivers/rawexec"
	"github.com/droverhq/drover/structs"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func testAlloc(jobType string, tasks ...*structs.Task) *structs.Allocation {
	tg := &structs.TaskGroup{
		Name: "front", Count: 1, Tasks: tasks,
		RestartPolicy: &structs.RestartPolicy{Attempts: 0, Mode: structs.RestartPolicyModeFail},
	}
	if jobType != structs.JobTypeBatch {
		tg.Update = structs.DefaultUpdateStrategy()
		tg.Update.HealthCheck = structs.UpdateHealthCheckTaskStates
	}
	job := &structs.Job{ID: "shop", Name: "shop", Type: jobType, Region: "global", TaskGroups: []*structs.TaskGroup{tg}}
	return &structs.Allocation{
		ID: "0f3c1e0a-alloc", Name: "shop.front[0]", JobID: "shop", Job: job, TaskGroup: "front",
		DeploymentID: "dep-1",
	}
}

func mockTask(name string, conf map[string]any) *structs.Task {
	return &structs.Task{Name: name, Driver: "mock", Config: conf, KillTimeout: time.Second}
}

type recorder struct {
	mu      sync.Mutex
	updates []Update
}

func (r *recorder) on(u Update) {
	r.mu.Lock()
	r.updates = append(r.updates, u)
	r.mu.Unlock()
}

func (r *recorder) last() Update {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.updates[len(r.updates)-1]
}

func newRunner(t *testing.T, dataDir string, c clock.Clock, d drivers.Driver, alloc *structs.Allocation, rec *recorder) *AllocRunner {
	t.Helper()
	ar, err := New(Config{
		Alloc: alloc, Node: &structs.Node{ID: "n1", Datacenter: "dc1"}, DataDir: dataDir,
		Drivers: map[string]drivers.Driver{d.Name(): d}, Clock: c, OnUpdate: rec.on,
	})
	if err != nil {
		t.Fatal(err)
	}
	return ar
}

func TestRunHealthyThenKill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		rec := &recorder{}
		data := t.TempDir()
		alloc := testAlloc(structs.JobTypeService, mockTask("web", nil), mockTask("side", nil))
		ar := newRunner(t, data, c, mock.New(mock.Options{Clock: c}), alloc, rec)
		for _, p := range []string{"alloc/logs", "alloc/data", "web/local", "web/secrets", "side/local"} {
			if fi, err := os.Stat(filepath.Join(data, "alloc", alloc.ID, p)); err != nil || !fi.IsDir() {
				t.Fatalf("missing dir %s: %v", p, err)
			}
		}
		ar.Run()
		synctest.Wait()
		if u := rec.last(); u.ClientStatus != structs.AllocClientStatusRunning || u.Health != nil {
			t.Fatalf("after start: %s health=%v", u.ClientStatus, u.Health)
		}
		c.Advance(structs.DefaultMinHealthyTime)
		synctest.Wait()
		u := rec.last()
		if u.Health == nil || !u.Health.Healthy || !u.Health.Timestamp.Equal(epoch.Add(structs.DefaultMinHealthyTime)) {
			t.Fatalf("health %+v", u.Health)
		}
		ar.Kill()
		<-ar.Done()
		if u := rec.last(); u.ClientStatus != structs.AllocClientStatusComplete {
			t.Fatalf("after kill: %s", u.ClientStatus)
		}
	})
}

func TestFailedTaskFailsAllocAndKillsSiblings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		rec := &recorder{}
		alloc := testAlloc(structs.JobTypeService,
			mockTask("web", map[string]any{"run_for": "3s", "exit_code": 2}), mockTask("side", nil))
		ar := newRunner(t, t.TempDir(), c, mock.New(mock.Options{Clock: c}), alloc, rec)
		ar.Run()
		synctest.Wait()
		c.Advance(3 * time.Second)
		<-ar.Done()
		u := rec.last()
		if u.ClientStatus != structs.AllocClientStatusFailed {
			t.Fatalf("status %s", u.ClientStatus)
		}
		s := u.TaskStates["side"]
		if s.State != structs.TaskStateDead || s.Failed {
			t.Fatalf("sibling %+v", s)
		}
		if n := len(s.Events); n < 3 || s.Events[n-3].Type != structs.TaskSiblingFailed ||
			s.Events[n-2].Type != structs.TaskKilling || s.Events[n-1].Type != structs.TaskKilled {
			t.Fatalf("sibling events %+v", s.Events)
		}
		if u.Health == nil || u.Health.Healthy || !u.Health.Timestamp.Equal(epoch.Add(3*time.Second)) {
			t.Fatalf("health %+v", u.Health)
		}
	})
}

func TestReattachFromStateFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		data := t.TempDir()
		alloc := testAlloc(structs.JobTypeBatch, mockTask("web", map[string]any{"run_for": "1m"}))
		ar := newRunner(t, data, c, mock.New(mock.Options{Clock: c}), alloc, &recorder{})
		ar.Run()
		synctest.Wait()
		ar.Detach()
		<-ar.Done()
		// A new client process: new driver instance, same data dir.
		c.Advance(30 * time.Second)
		d2 := mock.New(mock.Options{Clock: c})
		rec := &recorder{}
		ar2 := newRunner(t, data, c, d2, alloc, rec)
		ar2.Run()
		synctest.Wait()
		if d2.Running() != 1 || rec.last().ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("not re-attached: running=%d status=%s", d2.Running(), rec.last().ClientStatus)
		}
		c.Advance(30 * time.Second)
		<-ar2.Done()
		u := rec.last()
		if u.ClientStatus != structs.AllocClientStatusComplete {
			t.Fatalf("status %s", u.ClientStatus)
		}
		started := 0
		for _, e := range u.TaskStates["web"].Events {
			if e.Type == structs.TaskStarted {
				started++
			}
		}
		if started != 1 {
			t.Fatalf("task started %d times", started)
		}
		// A third client finds the task dead and runs nothing.
		ar3 := newRunner(t, data, c, mock.New(mock.Options{Clock: c}), alloc, &recorder{})
		ar3.Run()
		<-ar3.Done()
		if s := ar3.Status(); s.ClientStatus != structs.AllocClientStatusComplete {
			t.Fatalf("third client: %s", s.ClientStatus)
		}
	})
}

func TestClientStatus(t *testing.T) {
	st := func(s string, failed bool) *structs.TaskState { return &structs.TaskState{State: s, Failed: failed} }
	for _, tc := range []struct {
		states map[string]*structs.TaskState
		want   string
	}{
		{map[string]*structs.TaskState{}, structs.AllocClientStatusPending},
		{map[string]*structs.TaskState{"a": st("pending", false), "b": st("running", false)}, structs.AllocClientStatusRunning},
		{map[string]*structs.TaskState{"a": st("pending", false), "b": st("dead", false)}, structs.AllocClientStatusPending},
		{map[string]*structs.TaskState{"a": st("dead", false), "b": st("dead", false)}, structs.AllocClientStatusComplete},
		{map[string]*structs.TaskState{"a": st("running", false), "b": st("dead", true)}, structs.AllocClientStatusFailed},
	} {
		if got := ClientStatus(tc.states); got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.states, got, tc.want)
		}
	}
}

// TestRawExecAlloc runs a real process through the whole stack: env,
// working dir and logs in the alloc dir.
func TestRawExecAlloc(t *testing.T) {
	data := t.TempDir()
	task := &structs.Task{Name: "job", Driver: "raw_exec", Config: map[string]any{
		"command": "/bin/sh", "args": []any{"-c", `echo "$NOMAD_ALLOC_ID ${NOMAD_TASK_NAME}"; pwd`},
	}}
	alloc := testAlloc(structs.JobTypeBatch, task)
	rec := &recorder{}
	ar, err := New(Config{
		Alloc: alloc, DataDir: data, OnUpdate: rec.on,
		Drivers: map[string]drivers.Driver{"raw_exec": rawexec.New(rawexec.Options{})},
	})
	if err != nil {
		t.Fatal(err)
	}
	ar.Run()
	select {
	case <-ar.Done():
	case <-time.After(20 * time.Second):
		ar.Kill()
		t.Fatal("alloc did not finish")
	}
	if s := rec.last().ClientStatus; s != structs.AllocClientStatusComplete {
		t.Fatalf("status %s", s)
	}
	b, err := os.ReadFile(filepath.Join(ar.Dir().LogDir(), "job.stdout.0"))
	if err != nil {
		t.Fatal(err)
	}
	want := alloc.ID + " job\n" + ar.Dir().TaskDir("job") + "\n"
	if string(b) != want {
		t.Fatalf("stdout %q, want %q", b, want)
	}
	if st, err := loadState(ar.Dir().StatePath()); err != nil || st.Tasks["job"].State.State != structs.TaskStateDead {
		t.Fatalf("state file: %+v %v", st, err)
	}
}

func TestLeaderDeathStopsFollowers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		rec := &recorder{}
		leader := mockTask("main", map[string]any{"run_for": "2s"})
		leader.Leader = true
		alloc := testAlloc(structs.JobTypeBatch, leader, mockTask("sidecar", nil))
		ar := newRunner(t, t.TempDir(), c, mock.New(mock.Options{Clock: c}), alloc, rec)
		ar.Run()
		synctest.Wait()
		c.Advance(2 * time.Second)
		<-ar.Done()
		u := rec.last()
		if u.ClientStatus != structs.AllocClientStatusComplete {
			t.Fatalf("status %s", u.ClientStatus)
		}
		s := u.TaskStates["sidecar"]
		if n := len(s.Events); n < 3 || s.Events[n-3].Type != structs.TaskLeaderDead {
			t.Fatalf("sidecar events %+v", s.Events)
		}
	})
}
