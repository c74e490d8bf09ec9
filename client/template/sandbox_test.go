package template

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// hostMarker is a host file outside any allocation, which a task's
// symlinks point at; it must be neither read nor written.
func hostMarker(t *testing.T) (dir, marker string) {
	t.Helper()
	dir = t.TempDir()
	marker = filepath.Join(dir, "marker")
	if err := os.WriteFile(marker, []byte("HOST SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, marker
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func checkMarker(t *testing.T, dir, marker string) {
	t.Helper()
	if b, err := os.ReadFile(marker); err != nil || string(b) != "HOST SECRET\n" {
		t.Errorf("the host's marker changed: %q %v", b, err)
	}
	if fi, err := os.Lstat(marker); err != nil || fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
		t.Errorf("the host's marker changed: %v %v", fi, err)
	}
	es, _ := os.ReadDir(dir)
	if len(es) != 1 {
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Errorf("files appeared beside the host's marker: %q", names)
	}
}

// escapeLayout is what a task can make in its own directories: alloc/root
// -> /, a link to the marker in local/, a relative link that climbs out
// of the allocation, and a link to the marker's directory.
func escapeLayout(t *testing.T) (cfg Config, dir, marker string) {
	dir, marker = hostMarker(t)
	cfg.AllocRoot, cfg.TaskDir, cfg.AllocDir = allocDirs(t)
	symlink(t, "/", filepath.Join(cfg.AllocDir, "root"))
	symlink(t, marker, filepath.Join(cfg.TaskDir, "local/secret"))
	symlink(t, "../../..", filepath.Join(cfg.TaskDir, "local/up"))
	symlink(t, dir, filepath.Join(cfg.TaskDir, "local/hostdir"))
	cfg.Settings = settings(5 * time.Second)
	return cfg, dir, marker
}

// viaUp is marker's path through local/up, which leads to the
// allocation directory's parent.
func viaUp(cfg Config, marker string) string {
	rel, _ := filepath.Rel(filepath.Dir(cfg.AllocRoot), marker)
	return "local/up/" + rel
}

// TestSourceThroughSymlinkRefused: a source reached through a task's
// symlink that leads out of the allocation is not read; the manager is
// not built, and says why.
func TestSourceThroughSymlinkRefused(t *testing.T) {
	cfg, dir, marker := escapeLayout(t)
	for _, src := range []string{"alloc/root" + marker, "local/secret", viaUp(cfg, marker), "local/hostdir/marker"} {
		c := cfg
		c.Lifecycle = &lifecycle{}
		c.Templates = []*structs.Template{{SourcePath: src, DestPath: "local/out", ChangeMode: "noop"}}
		m, err := New(c)
		t.Log(err)
		if m != nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "escapes the allocation directory") ||
			!strings.Contains(err.Error(), "source "+src) {
			t.Errorf("source %s: %v", src, err)
		}
		if err != nil && strings.Contains(err.Error(), cfg.AllocRoot) {
			t.Errorf("the error shows the host's path: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.TaskDir, "local/out")); err == nil {
		t.Error("rendered")
	}
	checkMarker(t, dir, marker)
}

// TestDestinationThroughSymlink: a destination through a symlinked
// directory that leads out fails the render and writes nothing outside;
// a destination that is itself a symlink is replaced by the rendered
// file, never written through.
func TestDestinationThroughSymlink(t *testing.T) {
	cfg, dir, marker := escapeLayout(t)
	for _, dst := range []string{"alloc/root" + dir + "/new", "local/hostdir/new", viaUp(cfg, dir) + "/new", "alloc/root" + marker} {
		c := cfg
		c.Templates = []*structs.Template{{EmbeddedTmpl: "pwned", DestPath: dst, ChangeMode: "noop"}}
		m := newManager(t, c)
		_, err := prestart(t, m)
		t.Log(err)
		if !errors.Is(err, ErrTemplateFailed) || !strings.Contains(err.Error(), "escapes the allocation directory") {
			t.Errorf("destination %s: %v", dst, err)
		}
		if err != nil && strings.Contains(err.Error(), cfg.AllocRoot) {
			t.Errorf("the error shows the host's path: %v", err)
		}
	}
	checkMarker(t, dir, marker)

	c := cfg
	c.Templates = []*structs.Template{{EmbeddedTmpl: "rendered", DestPath: "local/secret", ChangeMode: "noop", Perms: "0600"}}
	if _, err := prestart(t, newManager(t, c)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(cfg.TaskDir, "local/secret"))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the symlink was not replaced by the file: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "local/secret")); string(b) != "rendered" {
		t.Fatalf("rendered %q", b)
	}
	checkMarker(t, dir, marker)
}

// TestFileFunctionThroughSymlink: the file function reads the task's
// files, by relative path, host path or task path, and nothing a symlink
// leads to outside.
func TestFileFunctionThroughSymlink(t *testing.T) {
	cfg, dir, marker := escapeLayout(t)
	if err := os.WriteFile(filepath.Join(cfg.TaskDir, "local/data"), []byte("task data"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.AllocDir, "data/shared"), []byte("shared data"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := cfg
	c.Templates = []*structs.Template{{DestPath: "local/out", ChangeMode: "noop",
		EmbeddedTmpl: `{{ file "local/data" }}|{{ file "` + filepath.Join(cfg.TaskDir, "local/data") + `" }}|{{ file "/local/data" }}|` +
			`{{ file "alloc/data/shared" }}|{{ file "` + filepath.Join(cfg.AllocDir, "data/shared") + `" }}`}}
	if _, err := prestart(t, newManager(t, c)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "local/out")); string(b) != "task data|task data|task data|shared data|shared data" {
		t.Fatalf("rendered %q", b)
	}
	for _, p := range []string{"alloc/root" + marker, "local/secret", viaUp(cfg, marker), "local/hostdir/marker", "../../x"} {
		c := cfg
		c.Templates = []*structs.Template{{DestPath: "local/out2", ChangeMode: "noop", EmbeddedTmpl: `{{ file "` + p + `" }}`}}
		_, err := prestart(t, newManager(t, c))
		t.Log(err)
		if !errors.Is(err, ErrTemplateFailed) || !strings.Contains(err.Error(), "escapes") || strings.Contains(err.Error(), "HOST SECRET") {
			t.Errorf("file %s: %v", p, err)
		}
	}
	// A host path outside the allocation is taken inside the task's
	// directory, where there is none.
	c.Templates = []*structs.Template{{DestPath: "local/out2", ChangeMode: "noop", EmbeddedTmpl: `{{ file "` + marker + `" }}`}}
	if _, err := prestart(t, newManager(t, c)); !errors.Is(err, ErrTemplateFailed) || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("file %s: %v", marker, err)
	}
	if _, err := os.Stat(filepath.Join(cfg.TaskDir, "local/out2")); err == nil {
		t.Error("rendered")
	}
	checkMarker(t, dir, marker)
}

// TestBrokenTemplates: each template that cannot be built or rendered
// is an error that says why, never a panic; a manager that was not built
// is nil, and stopping it is harmless.
func TestBrokenTemplates(t *testing.T) {
	allowExec := DefaultSettings()
	allowExec.FunctionDenylist = []string{"plugin", "writeToFile"}
	cases := []struct {
		name     string
		tmpl     structs.Template
		env      map[string]string
		settings *Settings
		atBuild  bool
		want     []string
	}{
		{name: "missing source", tmpl: structs.Template{SourcePath: "local/nope.tpl"}, atBuild: true,
			want: []string{"source local/nope.tpl", "no such file"}},
		{name: "destination escapes through meta", tmpl: structs.Template{DestPath: "local/${NOMAD_META_d}/x", EmbeddedTmpl: "x"},
			env: map[string]string{"NOMAD_META_d": "../../../../.."}, atBuild: true, want: []string{"escapes the task directory"}},
		{name: "bad perms", tmpl: structs.Template{EmbeddedTmpl: "x", Perms: "9z"}, atBuild: true, want: []string{`perms "9z" are not octal`}},
		{name: "unparsable", tmpl: structs.Template{EmbeddedTmpl: "{{ if }}"}, want: []string{"parse", "missing value for if"}},
		{name: "executeTemplate recursion, denied", tmpl: structs.Template{EmbeddedTmpl: `{{ define "a" }}{{ executeTemplate "a" }}{{ end }}{{ executeTemplate "a" }}`},
			want: []string{"executeTemplate", "disabled"}},
		{name: "executeTemplate recursion, allowed", settings: &allowExec, atBuild: true,
			tmpl: structs.Template{EmbeddedTmpl: `{{ define "a" }}{{ executeTemplate "a" }}{{ end }}{{ executeTemplate "a" }}`},
			want: []string{`template "a" calls itself (executeTemplate "a")`}},
		{name: "executeTemplate of a variable, allowed", settings: &allowExec, atBuild: true,
			tmpl: structs.Template{EmbeddedTmpl: `{{ define "a" }}x{{ end }}{{ $n := "a" }}{{ executeTemplate $n }}`},
			want: []string{"executeTemplate's name must be a constant string"}},
		{name: "mutual recursion through template", atBuild: true,
			tmpl: structs.Template{EmbeddedTmpl: `{{ define "a" }}{{ if 1 }}{{ template "b" }}{{ end }}{{ end }}{{ define "b" }}{{ template "a" }}{{ end }}{{ template "a" }}`},
			want: []string{`calls itself (template "b" → template "a")`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Env: tc.env, Lifecycle: &lifecycle{}, Settings: settings(5 * time.Second)}
			if tc.settings != nil {
				cfg.Settings = *tc.settings
				cfg.Settings.Wait = &structs.WaitConfig{}
				cfg.Settings.RenderTimeout = 5 * time.Second
			}
			cfg.AllocRoot, cfg.TaskDir, cfg.AllocDir = allocDirs(t)
			tm := tc.tmpl
			if tm.DestPath == "" {
				tm.DestPath = "local/out"
			}
			tm.ChangeMode = "restart"
			cfg.Templates = []*structs.Template{&tm}
			m, err := New(cfg)
			if !tc.atBuild {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				t.Cleanup(m.Stop)
				_, err = prestart(t, m)
				if !errors.Is(err, ErrTemplateFailed) {
					t.Fatalf("Prestart: %v", err)
				}
			} else {
				if m != nil || !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("New: %v %v", m, err)
				}
				m.Stop()
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: does not say %q", err, w)
				}
			}
		})
	}
}

// TestExecuteTemplateAllowed: with executeTemplate allowed, a template
// that calls defined templates without recursing renders.
func TestExecuteTemplateAllowed(t *testing.T) {
	s := settings(5 * time.Second)
	s.FunctionDenylist = []string{}
	m := newManager(t, Config{Settings: s, Templates: []*structs.Template{{DestPath: "local/out", ChangeMode: "noop",
		EmbeddedTmpl: `{{ define "a" }}A{{ executeTemplate "b" }}{{ end }}{{ define "b" }}B{{ end }}{{ executeTemplate "a" }}{{ template "b" }}`}}})
	if _, err := prestart(t, m); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(m.cfg.TaskDir, "local/out")); string(b) != "ABB" {
		t.Fatalf("rendered %q", b)
	}
}

// TestEnvFunctionsReadTaskOnly: env, envOrDefault and mustEnv read the
// task's environment, never the client's own.
func TestEnvFunctionsReadTaskOnly(t *testing.T) {
	t.Setenv("DROVER_TEST_AGENT_ONLY", "agent-secret")
	env := map[string]string{"TASK_VAR": "task", "EMPTY": ""}
	m := newManager(t, Config{Settings: settings(5 * time.Second), Env: env, Templates: []*structs.Template{{DestPath: "local/out", ChangeMode: "noop",
		EmbeddedTmpl: `{{ env "DROVER_TEST_AGENT_ONLY" }}|{{ envOrDefault "DROVER_TEST_AGENT_ONLY" "default" }}|{{ env "TASK_VAR" }}|{{ mustEnv "TASK_VAR" }}|{{ envOrDefault "EMPTY" "default" }}`}}})
	if _, err := prestart(t, m); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(m.cfg.TaskDir, "local/out")); string(b) != "|default|task|task|" {
		t.Fatalf("rendered %q", b)
	}
	m = newManager(t, Config{Settings: settings(5 * time.Second), Env: env, Templates: []*structs.Template{{DestPath: "local/out", ChangeMode: "noop",
		EmbeddedTmpl: `{{ mustEnv "DROVER_TEST_AGENT_ONLY" }}`}}})
	_, err := prestart(t, m)
	if !errors.Is(err, ErrTemplateFailed) || !strings.Contains(err.Error(), "required environment variable DROVER_TEST_AGENT_ONLY is empty") ||
		strings.Contains(err.Error(), "agent-secret") {
		t.Fatalf("Prestart: %v", err)
	}
}

// restarts counts the restarts a manager asks for.
type restarts struct {
	lifecycle
	n chan string
}

func (r *restarts) RestartForTemplate(reason string) { r.n <- reason }

// TestRestartSeesChangedFiles: a manager started beside a running task
// (a client's restart) leaves it alone when its files are as they render,
// and restarts it when one is not, or is owned otherwise.
func TestRestartSeesChangedFiles(t *testing.T) {
	root, taskDir, sharedDir := allocDirs(t)
	tmpl := func() []*structs.Template {
		return []*structs.Template{{DestPath: "local/a", EmbeddedTmpl: "a", ChangeMode: "restart"}, {DestPath: "alloc/b", EmbeddedTmpl: "b", ChangeMode: "restart"}}
	}
	run := func() *restarts {
		l := &restarts{lifecycle: lifecycle{running: true}, n: make(chan string, 4)}
		m := newManager(t, Config{AllocRoot: root, TaskDir: taskDir, AllocDir: sharedDir, Settings: settings(5 * time.Second), Lifecycle: l, Templates: tmpl()})
		if _, err := prestart(t, m); err != nil {
			t.Fatal(err)
		}
		return l
	}
	run() // the first render, the files written
	if l := run(); len(l.n) != 0 {
		t.Fatalf("unchanged files restarted the task: %s", <-l.n)
	}
	if err := os.WriteFile(filepath.Join(sharedDir, "b"), []byte("changed by the task"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := run()
	select {
	case r := <-l.n:
		if r != structs.TemplateRestartMessage {
			t.Fatalf("restart %q", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a file out of date did not restart the task")
	}
	if b, _ := os.ReadFile(filepath.Join(sharedDir, "b")); string(b) != "b" {
		t.Fatalf("not rendered again: %q", b)
	}
}

// TestOwner: uid and gid own the destination (not what a symlink there
// pointed at).
func TestOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a file away")
	}
	cfg, dir, marker := escapeLayout(t)
	uid, gid := 4321, 4322
	cfg.Templates = []*structs.Template{{DestPath: "local/secret", EmbeddedTmpl: "x", ChangeMode: "noop", Uid: &uid, Gid: &gid}}
	if _, err := prestart(t, newManager(t, cfg)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(cfg.TaskDir, "local/secret"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 4321 || st.Gid != 4322 || !fi.Mode().IsRegular() {
		t.Fatalf("owner %d:%d mode %v", st.Uid, st.Gid, fi.Mode())
	}
	st, _ := os.Lstat(marker)
	if s := st.Sys().(*syscall.Stat_t); s.Uid == 4321 {
		t.Fatal("the marker was given away")
	}
	checkMarker(t, dir, marker)
}
