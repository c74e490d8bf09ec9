package template

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/client/template/templatetest"
	"github.com/droverhq/drover/structs"
)

// lifecycle records what the manager asks of its task.
type lifecycle struct {
	mu      sync.Mutex
	running bool
	events  []string
	fails   []string
}

func (l *lifecycle) Running() bool                       { return l.running }
func (l *lifecycle) RestartForTemplate(string)           {}
func (l *lifecycle) SignalForTemplate(_, _ string) error { return nil }
func (l *lifecycle) Exec(context.Context, []string) ([]byte, int, error) {
	return nil, 0, errors.New("no exec")
}
func (l *lifecycle) Fail(r string) { l.mu.Lock(); l.fails = append(l.fails, r); l.mu.Unlock() }
func (l *lifecycle) Event(typ, msg string) {
	l.mu.Lock()
	l.events = append(l.events, typ+": "+msg)
	l.mu.Unlock()
}

func settings(timeout time.Duration) Settings {
	s := DefaultSettings()
	s.Wait = &structs.WaitConfig{}
	s.RenderTimeout = timeout
	s.EventRate = time.Millisecond
	return s
}

// allocDirs lays out an allocation's directory as the client does: the
// task web's directory (with local/ and secrets/) and the shared alloc/.
func allocDirs(t *testing.T) (root, taskDir, sharedDir string) {
	t.Helper()
	root = t.TempDir()
	taskDir, sharedDir = filepath.Join(root, "web"), filepath.Join(root, "alloc")
	for _, d := range []string{"web/local", "web/secrets", "alloc/data"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root, taskDir, sharedDir
}

func newManager(t *testing.T, cfg Config) *Manager {
	t.Helper()
	if cfg.TaskDir == "" {
		cfg.AllocRoot, cfg.TaskDir, cfg.AllocDir = allocDirs(t)
	}
	if cfg.Lifecycle == nil {
		cfg.Lifecycle = &lifecycle{}
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m
}

func prestart(t *testing.T, m *Manager) (map[string]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return m.Prestart(ctx)
}

// TestPaths: destinations land in the task's directory or, for alloc/,
// the allocation's; runtime variables are filled in.
func TestPaths(t *testing.T) {
	root, taskDir, allocDir := allocDirs(t)
	m := newManager(t, Config{
		AllocRoot: root, TaskDir: taskDir, AllocDir: allocDir, Settings: settings(5 * time.Second),
		Env: map[string]string{"NOMAD_ALLOC_INDEX": "3", "NOMAD_TASK_DIR": "/local"},
		Templates: []*structs.Template{
			{DestPath: "${NOMAD_TASK_DIR}/a-${NOMAD_ALLOC_INDEX}", EmbeddedTmpl: "a", ChangeMode: "noop"},
			{DestPath: "${NOMAD_ALLOC_DIR}/shared/b", EmbeddedTmpl: "b", ChangeMode: "noop"},
			{DestPath: "/etc/c", EmbeddedTmpl: "c", ChangeMode: "noop"},
		},
	})
	if _, err := prestart(t, m); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(taskDir, "local/a-3"): "a", filepath.Join(allocDir, "shared/b"): "b", filepath.Join(taskDir, "etc/c"): "c",
	} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", path, b, err)
		}
	}
	if _, err := New(Config{TaskDir: taskDir, Lifecycle: &lifecycle{}, Env: map[string]string{"X": "../.."},
		Templates: []*structs.Template{{DestPath: "local/${X}/x", EmbeddedTmpl: "x"}}}); err == nil || !strings.Contains(err.Error(), "escapes the task directory") {
		t.Fatalf("a destination escaping through a variable: %v", err)
	}
}

// TestRefusedFunctionAtRender: a source file (not checked when the job
// was submitted) calling a Consul function fails the render, naming it.
func TestRefusedFunctionAtRender(t *testing.T) {
	_, taskDir, _ := allocDirs(t)
	if err := os.WriteFile(filepath.Join(taskDir, "in.tpl"), []byte(`{{ key "app/x" }}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, Config{TaskDir: taskDir, Settings: settings(5 * time.Second),
		Templates: []*structs.Template{{SourcePath: "in.tpl", DestPath: "local/out", ChangeMode: "restart"}}})
	_, err := prestart(t, m)
	if !errors.Is(err, ErrTemplateFailed) || !strings.Contains(err.Error(), "not supported by drover: key") {
		t.Fatalf("Prestart: %v", err)
	}
}

// TestDeniedFunction: the client's denylist (plugin by default) fails
// the render.
func TestDeniedFunction(t *testing.T) {
	m := newManager(t, Config{Settings: settings(5 * time.Second),
		Templates: []*structs.Template{{EmbeddedTmpl: `{{ plugin "/bin/echo" "x" }}`, DestPath: "local/out", ChangeMode: "restart"}}})
	if _, err := prestart(t, m); !errors.Is(err, ErrTemplateFailed) || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("Prestart: %v", err)
	}
}

// TestNoServer: without a server address, a template reading Nomad's
// API waits until the render timeout; nothing panics.
func TestNoServer(t *testing.T) {
	l := &lifecycle{}
	m := newManager(t, Config{Settings: settings(500 * time.Millisecond), Lifecycle: l,
		Templates: []*structs.Template{{EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/x" }}{{ .a }}{{ end }}`, DestPath: "local/out", ChangeMode: "restart"}}})
	if _, err := prestart(t, m); !errors.Is(err, ErrRenderTimeout) || !strings.Contains(err.Error(), "local/out (") {
		t.Fatalf("Prestart: %v", err)
	}
}

// TestEnvTemplate: env = true parses the file's variables; a file that
// is not KEY=value lines fails.
func TestEnvTemplate(t *testing.T) {
	nomad := templatetest.NewNomad(t)
	nomad.SetVar("nomad/jobs/x", map[string]string{"a": "1"})
	m := newManager(t, Config{Settings: settings(5 * time.Second), Server: Server{Address: nomad.URL, Namespace: "default"},
		Templates: []*structs.Template{{
			EmbeddedTmpl: "{{ with nomadVar \"nomad/jobs/x\" }}A={{ .a }}{{ end }}\nexport B='two words'\n", DestPath: "local/env", Envvars: true, ChangeMode: "noop",
		}}})
	env, err := prestart(t, m)
	if err != nil || env["A"] != "1" || env["B"] != "two words" || len(env) != 2 {
		t.Fatalf("env %v %v", env, err)
	}
	bad := newManager(t, Config{Settings: settings(5 * time.Second),
		Templates: []*structs.Template{{EmbeddedTmpl: "not a variable line\n", DestPath: "local/env", Envvars: true, ChangeMode: "noop"}}})
	if _, err := prestart(t, bad); !errors.Is(err, ErrTemplateFailed) || !strings.Contains(err.Error(), "local/env is not KEY=value lines") {
		t.Fatalf("bad env file: %v", err)
	}
}

// signals records the signals a manager sends.
type signals struct {
	lifecycle
	sent chan string
}

func (s *signals) SignalForTemplate(sig, _ string) error { s.sent <- sig; return nil }

// TestChangeBeforeWatchStarts: a variable changed after Prestart returned
// but before the manager's goroutine has come round to watching (the task
// started at once, the goroutine descheduled) is still a change: the task
// gets its signal. The manager once took the time its watch began as the
// line between the first render and the changes, and dropped this one.
func TestChangeBeforeWatchStarts(t *testing.T) {
	nomad := templatetest.NewNomad(t)
	nomad.SetVar("nomad/jobs/x", map[string]string{"level": "info"})
	l := &signals{sent: make(chan string, 4)} // not running yet: the task starts after Prestart
	m := newManager(t, Config{Settings: settings(5 * time.Second), Server: Server{Address: nomad.URL, Namespace: "default"}, Lifecycle: l,
		Templates: []*structs.Template{{
			EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/x" }}{{ .level }}{{ end }}`, DestPath: "local/level",
			ChangeMode: structs.TemplateChangeModeSignal, ChangeSignal: "SIGHUP",
		}}})
	dest := filepath.Join(m.cfg.TaskDir, "local/level")
	m.afterFirst = func() {
		nomad.SetVar("nomad/jobs/x", map[string]string{"level": "debug"})
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if b, _ := os.ReadFile(dest); string(b) == "debug" {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Error("the change was never rendered")
	}
	if _, err := prestart(t, m); err != nil {
		t.Fatal(err)
	}
	select {
	case sig := <-l.sent:
		if sig != "SIGHUP" {
			t.Fatalf("sent %s, want SIGHUP", sig)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no signal for a change rendered before the watch began")
	}
	select {
	case sig := <-l.sent:
		t.Fatalf("a second signal (%s) for one change", sig)
	case <-time.After(200 * time.Millisecond):
	}
}
