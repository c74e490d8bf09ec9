package taskrunner

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

// envDriver is the mock driver, recording each start's environment.
type envDriver struct {
	*mock.Driver
	mu   sync.Mutex
	envs []map[string]string
}

func (d *envDriver) Start(ctx context.Context, tc *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	d.mu.Lock()
	d.envs = append(d.envs, maps.Clone(tc.Env))
	d.mu.Unlock()
	return d.Driver.Start(ctx, tc)
}

// fakeHook is a template hook: its Prestart returns env or err.
type fakeHook struct {
	env     map[string]string
	err     error
	calls   int
	stopped bool
}

func (f *fakeHook) Prestart(context.Context) (map[string]string, error) {
	f.calls++
	return f.env, f.err
}
func (f *fakeHook) Stop() { f.stopped = true }

func templateRunner(t *testing.T, c *clock.Fake, d drivers.Driver, hook *fakeHook) (*TaskRunner, *[]Update) {
	var updates []Update
	task := &structs.Task{Name: "web", Driver: "mock", KillTimeout: time.Second}
	tr, err := New(Config{
		Task: task, JobType: structs.JobTypeService, Driver: d, Clock: c,
		RestartPolicy: &structs.RestartPolicy{Attempts: 0, Mode: structs.RestartPolicyModeFail, Interval: time.Hour},
		TaskConfig:    &drivers.TaskConfig{AllocID: "a1", TaskName: "web", Env: map[string]string{"A": "block", "NOMAD_ALLOC_ID": "a1"}},
		OnUpdate:      func(u Update) { updates = append(updates, u) },
		Templates:     func(*TaskRunner) (TemplateHook, error) { return hook, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr, &updates
}

func types(st *structs.TaskState) string {
	var out []string
	for _, e := range st.Events {
		out = append(out, e.Type)
	}
	return strings.Join(out, ",")
}

// TestTemplateEnvAndRestart: the templates' variables join the task's
// environment (not over the built-in ones); a template restart does not
// count against the policy (0 attempts here) and starts the task again.
func TestTemplateEnvAndRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		d := &envDriver{Driver: mock.New(mock.Options{Clock: c})}
		hook := &fakeHook{env: map[string]string{"A": "template", "B": "b", "NOMAD_ALLOC_ID": "forged"}}
		tr, _ := templateRunner(t, c, d, hook)
		tr.Run()
		synctest.Wait()
		if len(d.envs) != 1 || d.envs[0]["A"] != "template" || d.envs[0]["B"] != "b" || d.envs[0]["NOMAD_ALLOC_ID"] != "a1" {
			t.Fatalf("start environments %v", d.envs)
		}
		hook.env = map[string]string{"A": "changed"}
		tr.RestartForTemplate(structs.TemplateRestartMessage)
		synctest.Wait()
		c.Advance(2 * time.Second)
		synctest.Wait()
		st := tr.State()
		if st.State != structs.TaskStateRunning || st.Failed || st.Restarts != 1 || len(d.envs) != 2 || d.envs[1]["A"] != "changed" {
			t.Fatalf("after the restart: %s restarts=%d envs %v (%s)", st.State, st.Restarts, d.envs, types(st))
		}
		if hook.calls != 2 {
			t.Errorf("Prestart called %d times", hook.calls)
		}
		tr.Kill()
		c.Advance(2 * time.Second)
		<-tr.Done()
		if !hook.stopped {
			t.Error("the hook was not stopped")
		}
	})
}

// TestTemplateFailureFailsTask: templates that do not render fail the
// task before it starts, whatever its restart policy.
func TestTemplateFailureFailsTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		d := &envDriver{Driver: mock.New(mock.Options{Clock: c})}
		hook := &fakeHook{err: errors.New("templates not rendered in time: waited 1s for local/x (Missing: nomad.var.block(x@default.global))")}
		tr, _ := templateRunner(t, c, d, hook)
		tr.Run()
		<-tr.Done()
		st := tr.State()
		last := st.Events[len(st.Events)-1]
		if st.State != structs.TaskStateDead || !st.Failed || len(d.envs) != 0 || last.Type != structs.TemplateEventType ||
			!strings.HasPrefix(last.DisplayMessage, "Template failed: templates not rendered in time") {
			t.Fatalf("state %s failed=%v starts=%d events %s last %q", st.State, st.Failed, len(d.envs), types(st), last.DisplayMessage)
		}
	})
}

// slowStart is the mock driver whose Start waits for release once
// entered is closed: the window in which the task's process may run
// before the runner knows it does.
type slowStart struct {
	*mock.Driver
	entered, release chan struct{}
}

func (d *slowStart) Start(ctx context.Context, tc *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	close(d.entered)
	<-d.release
	return d.Driver.Start(ctx, tc)
}

// TestTemplateSignalWhileStarting: a template's change while the driver
// starts the task reaches the task once it runs, instead of failing it
// (the signal was refused as "not running", and the template manager
// killed the task); before the start, a change sends nothing (the task
// starts with the new files).
func TestTemplateSignalWhileStarting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		d := &slowStart{Driver: mock.New(mock.Options{Clock: c}), entered: make(chan struct{}), release: make(chan struct{})}
		tr, _ := templateRunner(t, c, d, &fakeHook{})
		if err := tr.SignalForTemplate("SIGHUP", structs.TemplateRerenderedMessage); err != nil {
			t.Fatalf("a change before the task starts: %v", err)
		}
		tr.Run()
		<-d.entered
		sent := make(chan error, 1)
		go func() { sent <- tr.SignalForTemplate("SIGHUP", structs.TemplateRerenderedMessage) }()
		synctest.Wait()
		close(d.release)
		if err := <-sent; err != nil {
			t.Fatalf("a change while the task starts: %v", err)
		}
		h := tr.Handle()
		if h == nil {
			t.Fatal("no handle once started")
		}
		if got := d.Signals(h); len(got) != 1 || got[0] != "SIGHUP" {
			t.Fatalf("signals the task got: %v, want [SIGHUP]", got)
		}
		if st := tr.State(); st.State != structs.TaskStateRunning || st.Failed {
			t.Fatalf("state %s failed=%v (%s)", st.State, st.Failed, types(st))
		}
		tr.Kill()
		c.Advance(2 * time.Second)
		<-tr.Done()
	})
}

// TestTemplateBuilderFailureFailsTask: a template renderer that cannot be
// built fails the task with the reason, whatever its builder returned
// beside the error: a nil pointer in the interface was once stopped when
// the runner ended, and the panic took the agent down (and again at each
// restart of it, the job still there).
func TestTemplateBuilderFailureFailsTask(t *testing.T) {
	for name, builder := range map[string]func(*TaskRunner) (TemplateHook, error){
		"nil pointer and error": func(*TaskRunner) (TemplateHook, error) {
			var h *fakeHook
			return h, errors.New("invalid template config: source local/nope.tpl: no such file or directory")
		},
		"nil pointer alone": func(*TaskRunner) (TemplateHook, error) {
			var h *fakeHook
			return h, nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := clock.NewFake(epoch)
				d := &envDriver{Driver: mock.New(mock.Options{Clock: c})}
				tr, _ := templateRunner(t, c, d, nil)
				tr.cfg.Templates = builder
				tr.Run()
				<-tr.Done()
				st := tr.State()
				last := st.Events[len(st.Events)-1]
				if st.State != structs.TaskStateDead || !st.Failed || len(d.envs) != 0 || last.Type != structs.TemplateEventType ||
					!strings.HasPrefix(last.DisplayMessage, "Template failed: ") {
					t.Fatalf("state %s failed=%v starts=%d events %s last %q", st.State, st.Failed, len(d.envs), types(st), last.DisplayMessage)
				}
				if name == "nil pointer and error" && !strings.Contains(last.DisplayMessage, "source local/nope.tpl: no such file") {
					t.Fatalf("the event does not say why: %q", last.DisplayMessage)
				}
			})
		})
	}
}
