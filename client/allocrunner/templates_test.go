package allocrunner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/client/template"
	"github.com/droverhq/drover/client/template/templatetest"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/rawexec"
	"github.com/droverhq/drover/structs"
)

// templateSettings: no quiescence (a change renders at once), short
// timeouts, events at once.
func templateSettings(renderTimeout time.Duration) template.Settings {
	s := template.DefaultSettings()
	s.Wait = &structs.WaitConfig{}
	s.RenderTimeout = renderTimeout
	s.EventRate = time.Millisecond
	s.NomadRetry = template.Retry{Backoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}
	return s
}

// fixedIdentity hands every task the same token, and records the asks.
type fixedIdentity struct {
	mu   sync.Mutex
	asks []string
}

func (f *fixedIdentity) TaskIdentity(_ context.Context, allocID, task string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asks = append(f.asks, allocID+"/"+task)
	return "wi-token-" + task, nil
}

// templateAlloc is a service alloc of one raw_exec task running script,
// with its port http on 25123.
func templateAlloc(script string, tmpls ...*structs.Template) *structs.Allocation {
	task := &structs.Task{Name: "app", Driver: "raw_exec", KillTimeout: 2 * time.Second, Templates: tmpls,
		Env:    map[string]string{"FROM_ENV_BLOCK": "block"},
		Config: map[string]any{"command": "/bin/sh", "args": []any{"-c", script}}}
	a := testAlloc(structs.JobTypeService, task)
	a.Job.Namespace = "default"
	a.AllocatedResources = &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{
		Ports: []structs.PortMapping{{Label: "http", Value: 25123, HostIP: "127.0.0.1"}},
	}}
	return a
}

func startTemplateAlloc(t *testing.T, data string, alloc *structs.Allocation, nomad *templatetest.Nomad, ids template.IdentitySource, renderTimeout time.Duration) (*AllocRunner, *recorder) {
	t.Helper()
	rec := &recorder{}
	ar, err := New(Config{
		Alloc: alloc, Node: &structs.Node{ID: "n1", Datacenter: "dc1"}, DataDir: data, OnUpdate: rec.on,
		Drivers: map[string]drivers.Driver{"raw_exec": rawexec.New(rawexec.Options{})},
		Templates: TemplateConfig{
			Settings:   templateSettings(renderTimeout),
			ServerAddr: func() string { return nomad.URL },
			Identity:   ids,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ar.Run()
	t.Cleanup(func() {
		ar.Kill()
		select {
		case <-ar.Done():
		case <-time.After(20 * time.Second):
			t.Error("the alloc did not stop")
		}
	})
	return ar, rec
}

func readLines(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func events(ar *AllocRunner, task, typ string) []*structs.TaskEvent {
	st := ar.Status().TaskStates[task]
	if st == nil {
		return nil
	}
	var out []*structs.TaskEvent
	for _, e := range st.Events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// TestTemplateRendersThenRestartsOnChange: a real process starts only
// after its templates rendered its environment, its own port and a
// variable read from the servers with its identity; env = true puts the
// variable in its environment; a changed variable renders the files
// again and restarts the task, which starts with the new value.
func TestTemplateRendersThenRestartsOnChange(t *testing.T) {
	nomad := templatetest.NewNomad(t)
	nomad.SetVar("nomad/jobs/shop", map[string]string{"pass": "s3cret"})
	conf := &structs.Template{
		DestPath: "local/app.conf", ChangeMode: structs.TemplateChangeModeRestart, Perms: "0640",
		EmbeddedTmpl: `port={{ env "NOMAD_PORT_http" }}
alloc={{ env "NOMAD_ALLOC_ID" }}
block={{ env "FROM_ENV_BLOCK" }}
host={{ env "HOME" }}
{{ with nomadVar "nomad/jobs/shop" }}pass={{ .pass }}{{ end }}
`}
	envT := &structs.Template{
		DestPath: "secrets/app.env", ChangeMode: structs.TemplateChangeModeRestart, Envvars: true,
		EmbeddedTmpl: `DB_PASS={{ with nomadVar "nomad/jobs/shop" }}{{ .pass }}{{ end }}` + "\n" + `# a comment
QUOTED="two words"`,
	}
	// Each start appends what the process sees to starts.
	script := `cp local/app.conf "conf.$$"; echo "$DB_PASS|$QUOTED" >> starts; exec sleep 300`
	alloc := templateAlloc(script, conf, envT)
	ids := &fixedIdentity{}
	data := t.TempDir()
	ar, _ := startTemplateAlloc(t, data, alloc, nomad, ids, 10*time.Second)
	taskDir := ar.Dir().TaskDir("app")
	starts := filepath.Join(taskDir, "starts")

	// The shell creates starts before its echo writes the line: an empty
	// file is not the first start yet.
	waitUntil(t, "the first start", func() bool { l := readLines(starts); return len(l) == 1 && l[0] != "" })
	if got := readLines(starts); got[0] != "s3cret|two words" {
		t.Fatalf("the task's environment: %q", got)
	}
	b, err := os.ReadFile(filepath.Join(taskDir, "local/app.conf"))
	if err != nil {
		t.Fatal(err)
	}
	want := "port=25123\nalloc=" + alloc.ID + "\nblock=block\nhost=\npass=s3cret\n"
	if string(b) != want {
		t.Fatalf("rendered:\n%s\nwant:\n%s", b, want)
	}
	if fi, _ := os.Stat(filepath.Join(taskDir, "local/app.conf")); fi.Mode().Perm() != 0o640 {
		t.Errorf("perms %v", fi.Mode().Perm())
	}
	if got := nomad.Tokens(); len(got) == 0 || got[0] != "wi-token-app" {
		t.Errorf("tokens the servers saw: %q", got)
	}
	if len(ids.asks) != 1 || ids.asks[0] != alloc.ID+"/app" {
		t.Errorf("identities asked: %q", ids.asks)
	}

	nomad.SetVar("nomad/jobs/shop", map[string]string{"pass": "rotated"})
	waitUntil(t, "the second start", func() bool { return len(readLines(starts)) == 2 })
	if got := readLines(starts); got[1] != "rotated|two words" {
		t.Fatalf("after the change the task saw %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(taskDir, "local/app.conf")); !strings.Contains(string(b), "pass=rotated") {
		t.Fatalf("not rendered again:\n%s", b)
	}
	waitUntil(t, "the restart event", func() bool {
		for _, e := range events(ar, "app", structs.TaskRestartSignal) {
			if e.DisplayMessage == structs.TemplateRestartMessage {
				return true
			}
		}
		return false
	})
	if st := ar.Status().TaskStates["app"]; st.Failed || st.State != structs.TaskStateRunning {
		t.Fatalf("state %+v", st)
	}
}

// TestTemplateSignalOnChange: change_mode = "signal" delivers the signal
// to the process, which is not restarted.
func TestTemplateSignalOnChange(t *testing.T) {
	nomad := templatetest.NewNomad(t)
	nomad.SetVar("nomad/jobs/shop/front/app", map[string]string{"level": "info"})
	tmpl := &structs.Template{
		DestPath: "local/level", ChangeMode: structs.TemplateChangeModeSignal, ChangeSignal: "SIGHUP",
		EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/shop/front/app" }}{{ .level }}{{ end }}`,
	}
	script := `trap 'cat local/level >> hups' HUP; echo go > ready; while :; do sleep 0.05; done`
	ar, _ := startTemplateAlloc(t, t.TempDir(), templateAlloc(script, tmpl), nomad, nil, 10*time.Second)
	taskDir := ar.Dir().TaskDir("app")
	waitUntil(t, "the task", func() bool { return len(readLines(filepath.Join(taskDir, "ready"))) == 1 })

	nomad.SetVar("nomad/jobs/shop/front/app", map[string]string{"level": "debug"})
	deadline := time.Now().Add(20 * time.Second)
	for !slices.Equal(readLines(filepath.Join(taskDir, "hups")), []string{"debug"}) {
		if time.Now().After(deadline) {
			var evs []string
			for _, e := range ar.Status().TaskStates["app"].Events {
				evs = append(evs, e.Type+": "+e.DisplayMessage)
			}
			t.Fatalf("timed out waiting for the signal's trap: hups %q; the task's events:\n%s",
				readLines(filepath.Join(taskDir, "hups")), strings.Join(evs, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	sig := events(ar, "app", structs.TaskSignaling)
	if len(sig) != 1 || sig[0].DisplayMessage != structs.TemplateRerenderedMessage || sig[0].TaskSignal != "SIGHUP" {
		t.Fatalf("signaling events %+v", sig)
	}
	if st := ar.Status().TaskStates["app"]; st.Restarts != 0 || len(events(ar, "app", structs.TaskStarted)) != 1 {
		t.Fatalf("the task restarted: %+v", st)
	}
	if toks := nomad.Tokens(); toks[0] != "" {
		t.Errorf("a token was sent without an identity source: %q", toks[0])
	}
}

// TestTemplateScriptOnChange: change_mode = "script" runs the script in
// the task (the driver's exec) and records it.
func TestTemplateScriptOnChange(t *testing.T) {
	nomad := templatetest.NewNomad(t)
	nomad.SetService("db", templatetest.Service{Name: "db", Address: "10.0.0.1", Port: 5432})
	tmpl := &structs.Template{
		DestPath: "local/db", ChangeMode: structs.TemplateChangeModeScript,
		ChangeScript: &structs.ChangeScript{Command: "/bin/sh", Args: []string{"-c", "cat local/db >> reloads"}, Timeout: 5 * time.Second},
		EmbeddedTmpl: `{{ range nomadService "db" }}{{ .Address }}:{{ .Port }} {{ end }}`,
	}
	ar, _ := startTemplateAlloc(t, t.TempDir(), templateAlloc(`exec sleep 300`, tmpl), nomad, nil, 10*time.Second)
	taskDir := ar.Dir().TaskDir("app")
	waitUntil(t, "the task", func() bool { return ar.Status().ClientStatus == structs.AllocClientStatusRunning })
	if b, _ := os.ReadFile(filepath.Join(taskDir, "local/db")); string(b) != "10.0.0.1:5432 " {
		t.Fatalf("rendered %q", b)
	}
	nomad.SetService("db", templatetest.Service{Name: "db", Address: "10.0.0.1", Port: 5432}, templatetest.Service{Name: "db", Address: "10.0.0.2", Port: 5433})
	waitUntil(t, "the script", func() bool {
		return slices.Equal(readLines(filepath.Join(taskDir, "reloads")), []string{"10.0.0.1:5432 10.0.0.2:5433"})
	})
	waitUntil(t, "the script's event", func() bool {
		for _, e := range events(ar, "app", structs.TemplateEventType) {
			if strings.HasPrefix(e.DisplayMessage, "Template successfully ran script /bin/sh") {
				return true
			}
		}
		return false
	})
}

// TestTemplateMissingDataTimesOut: a variable that does not exist keeps
// the task from starting; past the render timeout the task fails, its
// events saying what the template waits for.
func TestTemplateMissingDataTimesOut(t *testing.T) {
	nomad := templatetest.NewNomad(t)
	tmpl := &structs.Template{
		DestPath: "local/x", ChangeMode: structs.TemplateChangeModeRestart,
		EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/nope" }}{{ .x }}{{ end }}`,
	}
	ar, _ := startTemplateAlloc(t, t.TempDir(), templateAlloc(`echo started > started; exec sleep 300`, tmpl), nomad, nil, time.Second)
	select {
	case <-ar.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the task did not fail")
	}
	st := ar.Status().TaskStates["app"]
	if st.State != structs.TaskStateDead || !st.Failed {
		t.Fatalf("state %+v", st)
	}
	if _, err := os.Stat(filepath.Join(ar.Dir().TaskDir("app"), "started")); err == nil {
		t.Fatal("the task started")
	}
	const dep = "nomad.var.block(nomad/jobs/nope@default.global)"
	var missing, failed bool
	for _, e := range st.Events {
		if e.Type != structs.TemplateEventType {
			continue
		}
		missing = missing || e.DisplayMessage == "Missing: "+dep
		failed = failed || strings.Contains(e.DisplayMessage, "Template failed: templates not rendered in time: waited 1s for local/x (Missing: "+dep+")")
	}
	if !missing || !failed {
		for _, e := range st.Events {
			t.Logf("%s: %s", e.Type, e.DisplayMessage)
		}
		t.Fatalf("missing event %v, failure event %v", missing, failed)
	}
	if s := ar.Status().ClientStatus; s != structs.AllocClientStatusFailed {
		t.Fatalf("alloc status %s", s)
	}
}

// TestTemplateClientRestart: a new client re-attached to a running task
// renders its templates again without restarting it while they are
// unchanged, and restarts it when its data changed meanwhile.
func TestTemplateClientRestart(t *testing.T) {
	nomad := templatetest.NewNomad(t)
	nomad.SetVar("nomad/jobs/shop", map[string]string{"v": "1"})
	tmpl := &structs.Template{
		DestPath: "local/v", ChangeMode: structs.TemplateChangeModeRestart,
		EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/shop" }}{{ .v }}{{ end }}`,
	}
	alloc := templateAlloc(`cat local/v >> starts; echo >> starts; exec sleep 300`, tmpl)
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
		ar.Run()
		return ar
	}
	ar1 := start()
	starts := filepath.Join(ar1.Dir().TaskDir("app"), "starts")
	waitUntil(t, "the first start", func() bool { return slices.Equal(readLines(starts), []string{"1"}) })
	ar1.Detach()
	<-ar1.Done()

	// The renderer reads the variable again (the server answers more
	// reads) before the check that nothing restarted.
	reads := nomad.Reads()
	ar2 := start()
	t.Cleanup(func() { ar2.Kill(); <-ar2.Done() })
	waitUntil(t, "re-attached", func() bool { return ar2.Status().ClientStatus == structs.AllocClientStatusRunning })
	waitUntil(t, "the second client's read", func() bool { return nomad.Reads() > reads })
	time.Sleep(300 * time.Millisecond)
	if got := readLines(starts); !slices.Equal(got, []string{"1"}) || ar2.Status().TaskStates["app"].Restarts != 0 {
		t.Fatalf("unchanged templates restarted the task: starts %q", got)
	}
	ar2.Detach()
	<-ar2.Done()

	nomad.SetVar("nomad/jobs/shop", map[string]string{"v": "2"})
	ar3 := start()
	t.Cleanup(func() { ar3.Kill(); <-ar3.Done() })
	waitUntil(t, "the restart with the new value", func() bool { return slices.Equal(readLines(starts), []string{"1", "2"}) })
}

// TestTemplateOnce: a template with once = true renders before the task
// starts and never again; a watched one beside it still acts.
func TestTemplateOnce(t *testing.T) {
	nomad := templatetest.NewNomad(t)
	nomad.SetVar("nomad/jobs/shop", map[string]string{"v": "1"})
	onceT := &structs.Template{
		DestPath: "local/once", ChangeMode: structs.TemplateChangeModeRestart, Once: true,
		EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/shop" }}{{ .v }}{{ end }}`,
	}
	noopT := &structs.Template{
		DestPath: "local/noop", ChangeMode: structs.TemplateChangeModeNoop,
		EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/shop" }}{{ .v }}{{ end }}`,
	}
	ar, _ := startTemplateAlloc(t, t.TempDir(), templateAlloc(`echo x >> starts; exec sleep 300`, onceT, noopT), nomad, nil, 10*time.Second)
	dir := ar.Dir().TaskDir("app")
	waitUntil(t, "the start", func() bool { return len(readLines(filepath.Join(dir, "starts"))) == 1 })
	nomad.SetVar("nomad/jobs/shop", map[string]string{"v": "2"})
	waitUntil(t, "the noop template", func() bool { return slices.Equal(readLines(filepath.Join(dir, "local/noop")), []string{"2"}) })
	waitUntil(t, "the re-render event", func() bool {
		for _, e := range events(ar, "app", structs.TemplateEventType) {
			if e.DisplayMessage == structs.TemplateRerenderedMessage+": local/noop" {
				return true
			}
		}
		return false
	})
	if got := readLines(filepath.Join(dir, "local/once")); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("the once template rendered again: %q", got)
	}
	if got := readLines(filepath.Join(dir, "starts")); len(got) != 1 {
		t.Fatalf("the task restarted: %q", got)
	}
}
