package allocrunner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/client/template/templatetest"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/rawexec"
	"github.com/droverhq/drover/structs"
)

// waitFailed waits for the alloc to end and returns the task's state and
// its last Template event's message.
func waitFailed(t *testing.T, ar *AllocRunner, task string) (*structs.TaskState, string) {
	t.Helper()
	select {
	case <-ar.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the alloc did not end")
	}
	st := ar.Status().TaskStates[task]
	msg := ""
	for _, e := range events(ar, task, structs.TemplateEventType) {
		msg = e.DisplayMessage
	}
	return st, msg
}

// TestTemplateBrokenJobsFailTask: a job whose template cannot be built or
// rendered fails its task with "Template failed: " and why; the task
// never starts; nothing panics (a renderer that was not built was once a
// nil pointer in an interface, stopped when the task ended).
func TestTemplateBrokenJobsFailTask(t *testing.T) {
	cases := []struct {
		name string
		tmpl structs.Template
		meta map[string]string
		want string
	}{
		{"missing source", structs.Template{SourcePath: "local/nope.tpl"}, nil, "source local/nope.tpl: openat local/nope.tpl: no such file or directory"},
		{"destination escapes through meta", structs.Template{DestPath: "${NOMAD_META_d}/x", EmbeddedTmpl: "x"}, map[string]string{"d": "../../../../.."}, "escapes the task directory"},
		{"bad perms", structs.Template{EmbeddedTmpl: "x", Perms: "9z"}, nil, `perms "9z" are not octal`},
		{"unparsable", structs.Template{EmbeddedTmpl: "{{ if }}"}, nil, "missing value for if"},
		{"executeTemplate recursion", structs.Template{EmbeddedTmpl: `{{ define "a" }}{{ executeTemplate "a" }}{{ end }}{{ executeTemplate "a" }}`}, nil, "error calling executeTemplate: function is disabled"},
		{"template recursion", structs.Template{EmbeddedTmpl: `{{ define "a" }}{{ if 1 }}{{ template "a" }}{{ end }}{{ end }}{{ template "a" }}`}, nil, `template "a" calls itself`},
		{"agent's environment", structs.Template{EmbeddedTmpl: `{{ mustEnv "DROVER_TEST_AGENT_ONLY" }}`}, nil, "required environment variable DROVER_TEST_AGENT_ONLY is empty"},
	}
	t.Setenv("DROVER_TEST_AGENT_ONLY", "agent-secret")
	nomad := templatetest.NewNomad(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tm := tc.tmpl
			if tm.DestPath == "" {
				tm.DestPath = "local/out"
			}
			tm.ChangeMode = structs.TemplateChangeModeRestart
			alloc := templateAlloc(`echo started > started; exec sleep 300`, &tm)
			alloc.Job.Meta = tc.meta
			ar, _ := startTemplateAlloc(t, t.TempDir(), alloc, nomad, nil, 10*time.Second)
			st, msg := waitFailed(t, ar, "app")
			if st.State != structs.TaskStateDead || !st.Failed || !strings.HasPrefix(msg, "Template failed: ") || !strings.Contains(msg, tc.want) {
				t.Fatalf("state %s failed=%v; the event %q does not say %q", st.State, st.Failed, msg, tc.want)
			}
			if strings.Contains(msg, "agent-secret") || strings.Contains(msg, ar.Dir().Root) {
				t.Fatalf("the event shows the agent's environment or paths: %q", msg)
			}
			if _, err := os.Stat(filepath.Join(ar.Dir().TaskDir("app"), "started")); err == nil {
				t.Fatal("the task started")
			}
		})
	}
}

// TestTemplateSymlinkEscape: a prestart task (as a container could) links
// alloc/root to / and alloc/marker to a host file; the main task's
// templates that read or write through them fail it, and the host's file
// is neither read nor written. A destination that is a symlink is
// replaced by the rendered file.
func TestTemplateSymlinkEscape(t *testing.T) {
	hostDir := t.TempDir()
	marker := filepath.Join(hostDir, "marker")
	if err := os.WriteFile(marker, []byte("HOST SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nomad := templatetest.NewNomad(t)
	cases := []struct {
		name string
		tmpl structs.Template
		want string // "" : the task runs
	}{
		{"source through alloc/root", structs.Template{SourcePath: "alloc/root" + marker, DestPath: "local/out"}, "escapes the allocation directory"},
		{"destination through alloc/root", structs.Template{EmbeddedTmpl: "pwned", DestPath: "alloc/root" + hostDir + "/pwned"}, "escapes the allocation directory"},
		{"file through alloc/root", structs.Template{EmbeddedTmpl: `{{ file "alloc/root` + marker + `" }}`, DestPath: "local/out"}, "escapes the allocation directory"},
		{"destination is a symlink", structs.Template{EmbeddedTmpl: "rendered", DestPath: "alloc/marker"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tm := tc.tmpl
			tm.ChangeMode = structs.TemplateChangeModeRestart
			evil := &structs.Task{Name: "evil", Driver: "raw_exec", KillTimeout: time.Second,
				Lifecycle: &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart},
				Config: map[string]any{"command": "/bin/sh", "args": []any{"-c",
					`ln -s / "$NOMAD_ALLOC_DIR/root" && ln -s ` + marker + ` "$NOMAD_ALLOC_DIR/marker"`}}}
			app := &structs.Task{Name: "app", Driver: "raw_exec", KillTimeout: time.Second, Templates: []*structs.Template{&tm},
				Config: map[string]any{"command": "/bin/sh", "args": []any{"-c", "echo started > started; exec sleep 300"}}}
			alloc := testAlloc(structs.JobTypeService, evil, app)
			alloc.Job.Namespace = "default"
			ar, _ := startTemplateAlloc(t, t.TempDir(), alloc, nomad, nil, 10*time.Second)
			if tc.want != "" {
				st, msg := waitFailed(t, ar, "app")
				if !st.Failed || !strings.HasPrefix(msg, "Template failed: ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "HOST SECRET") {
					t.Fatalf("failed=%v; the event %q does not say %q", st.Failed, msg, tc.want)
				}
			} else {
				waitUntil(t, "the task", func() bool {
					_, err := os.Stat(filepath.Join(ar.Dir().TaskDir("app"), "started"))
					return err == nil
				})
				fi, err := os.Lstat(filepath.Join(ar.Dir().SharedDir(), "marker"))
				if err != nil || !fi.Mode().IsRegular() {
					t.Fatalf("the symlink was not replaced: %v %v", fi, err)
				}
			}
			if b, err := os.ReadFile(marker); err != nil || string(b) != "HOST SECRET\n" {
				t.Fatalf("the host's file: %q %v", b, err)
			}
			if es, _ := os.ReadDir(hostDir); len(es) != 1 {
				t.Fatalf("%d files in the host's directory", len(es))
			}
		})
	}
}

// TestTemplateBrokenOnReattach: a client that restarts beside a running
// task whose template can no longer be built (its source gone) fails the
// task with the reason, and lives: the agent once panicked here at every
// start until the job was purged.
func TestTemplateBrokenOnReattach(t *testing.T) {
	nomad := templatetest.NewNomad(t)
	tmpl := &structs.Template{SourcePath: "local/in.tpl", DestPath: "local/out", ChangeMode: structs.TemplateChangeModeRestart}
	alloc := templateAlloc(`exec sleep 300`, tmpl)
	data := t.TempDir()
	start := func() *AllocRunner {
		ar, err := New(Config{
			Alloc: alloc, DataDir: data, OnUpdate: (&recorder{}).on,
			Drivers:   map[string]drivers.Driver{"raw_exec": rawexec.New(rawexec.Options{})},
			Templates: TemplateConfig{Settings: templateSettings(10 * time.Second), ServerAddr: func() string { return nomad.URL }},
		})
		if err != nil {
			t.Fatal(err)
		}
		return ar
	}
	dir := NewAllocDir(data, alloc.ID)
	if err := dir.Build([]string{"app"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir.TaskLocalDir("app"), "in.tpl"), []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	ar1 := start()
	ar1.Run()
	waitUntil(t, "the task", func() bool { return ar1.Status().ClientStatus == structs.AllocClientStatusRunning })
	ar1.Detach()
	<-ar1.Done()

	if err := os.Remove(filepath.Join(dir.TaskLocalDir("app"), "in.tpl")); err != nil {
		t.Fatal(err)
	}
	ar2 := start()
	ar2.Run()
	t.Cleanup(func() { ar2.Kill(); <-ar2.Done() })
	waitUntil(t, "the task's failure", func() bool {
		st := ar2.Status().TaskStates["app"]
		return st != nil && st.State == structs.TaskStateDead && st.Failed
	})
	var said bool
	for _, e := range ar2.Status().TaskStates["app"].Events {
		said = said || strings.Contains(e.DisplayMessage, "Template failed: ") && strings.Contains(e.DisplayMessage, "source local/in.tpl")
	}
	if !said {
		t.Fatalf("no event says why: %+v", ar2.Status().TaskStates["app"].Events)
	}
}
