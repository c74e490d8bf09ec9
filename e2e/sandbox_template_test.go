package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/drivers/docker/dockertest"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// A job's author cannot make the client read or write a host file
// through its templates, nor take the agent down with a template: on a
// real dev agent, each such template fails its task with the reason, the
// host's files are as they were, and the agent answers.

// sandboxTmplMarker is a host file outside any allocation, in a
// directory of its own.
func sandboxTmplMarker(t *testing.T) (dir, marker string) {
	t.Helper()
	dir = t.TempDir()
	marker = filepath.Join(dir, "marker")
	writeFile(t, marker, "HOST SECRET\n")
	if err := os.Chmod(marker, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, marker
}

// sandboxTmplCheckMarker fails the test if the marker changed or a file
// appeared beside it.
func sandboxTmplCheckMarker(t *testing.T, dir, marker string) {
	t.Helper()
	if b, err := os.ReadFile(marker); err != nil || string(b) != "HOST SECRET\n" {
		t.Errorf("the host's file changed: %q %v", b, err)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Errorf("files appeared beside the host's file: %q", names)
	}
}

// sandboxTmplGroup is a group that runs once: no restart, no reschedule.
func sandboxTmplGroup(name, body string) string {
	return fmt.Sprintf(`
  group %q {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
%s
  }`, name, body)
}

// sandboxTmplRegister parses a batch job's HCL and registers it.
func sandboxTmplRegister(t *testing.T, c *apiclient.Client, id, groups string) {
	t.Helper()
	src := fmt.Sprintf("job %q {\n  type = \"batch\"\n%s\n}\n", id, groups)
	job, _, err := jobspec.Parse(id+".hcl", []byte(src), jobspec.Options{})
	if err != nil {
		t.Fatalf("parsing %s: %v\n%s", id, err, src)
	}
	registerJob(t, c, job)
}

// sandboxTmplTask waits for a task of a job's group to be dead, and
// returns its state and the message of its last Template event. An agent
// that exits meanwhile fails the test at once.
func sandboxTmplTask(t *testing.T, p *agentProc, jobID, group, task string) (*structs.TaskState, string) {
	t.Helper()
	c := p.client()
	var st *structs.TaskState
	var msg string
	eventually(t, 90*time.Second, fmt.Sprintf("%s/%s/%s dead", jobID, group, task), func() error {
		select {
		case <-p.done:
			t.Fatalf("the agent exited: %v", p.exitErr)
		default:
		}
		allocs, err := jobAllocs(t, c, jobID)
		if err != nil {
			return err
		}
		for _, stub := range allocs {
			if stub.TaskGroup != group {
				continue
			}
			a, _, err := c.Allocations().Info(ctx(t), stub.ID, nil)
			if err != nil {
				return err
			}
			st = a.TaskStates[task]
			if st == nil || st.State != structs.TaskStateDead {
				return fmt.Errorf("task state %s", jsonString(st))
			}
			for _, e := range st.Events {
				if e.Type == structs.TemplateEventType {
					msg = e.DisplayMessage
				}
			}
			return nil
		}
		return fmt.Errorf("no alloc of group %s", group)
	})
	return st, msg
}

// sandboxTmplFailed checks that a task failed without starting, its last
// Template event saying "Template failed: " and want.
func sandboxTmplFailed(t *testing.T, p *agentProc, jobID, group, task, want string) {
	t.Helper()
	st, msg := sandboxTmplTask(t, p, jobID, group, task)
	if !st.Failed || !st.StartedAt.IsZero() || !strings.HasPrefix(msg, "Template failed: ") || !strings.Contains(msg, want) {
		t.Errorf("%s/%s: failed=%v started=%v; its template event %q does not say %q; events %s",
			group, task, st.Failed, !st.StartedAt.IsZero(), msg, want, jsonString(st.Events))
	}
	if strings.Contains(msg, "HOST SECRET") || strings.Contains(msg, "agent-secret") {
		t.Errorf("%s/%s: the event shows what the client may read: %q", group, task, msg)
	}
}

// sandboxTmplAlive checks that the agent still runs and answers.
func sandboxTmplAlive(t *testing.T, p *agentProc) {
	t.Helper()
	select {
	case <-p.done:
		t.Fatalf("the agent exited: %v", p.exitErr)
	default:
	}
	if code, body := rawRequest(t, "GET", "http://"+p.httpAddr+"/v1/status/leader", "", nil); code != 200 {
		t.Fatalf("the agent does not answer: %d %s", code, body)
	}
	if strings.Contains(p.logs.String(), "panic:") {
		t.Fatal("the agent panicked")
	}
}

// TestSandboxTemplateDockerSymlinks: a docker prestart task links
// alloc/root to / and alloc/marker to a host file (as any container can
// in its bind-mounted alloc/); the main task's template source,
// destination and file function through alloc/root fail it with the
// reason, and a destination that is the symlink replaces it. The host's
// file is neither read nor written; the agent answers.
func TestSandboxTemplateDockerSymlinks(t *testing.T) {
	cli := dockertest.Client(t)
	image := dockertest.BusyboxImage(t, cli)
	dir, marker := sandboxTmplMarker(t)
	p := startDevAgent(t)
	c := p.client()
	node := devNodeID(t, c)
	t.Cleanup(func() { removeNodeContainers(cli, node) })

	evil := fmt.Sprintf(`
    task "evil" {
      driver = "docker"
      lifecycle {
        hook = "prestart"
      }
      config {
        image   = %q
        command = "/bin/sh"
        args    = ["-c", "ln -s / /alloc/root && ln -s %s /alloc/marker"]
      }
    }`, image, marker)
	app := func(script, tmpl string) string {
		return evil + fmt.Sprintf(`
    task "app" {
      driver = "docker"
      config {
        image   = %q
        command = "/bin/sh"
        args    = ["-c", %q]
      }
      template {
%s
      }
    }`, image, script, tmpl)
	}
	const runs = "exit 0"
	groups := sandboxTmplGroup("source", app(runs, fmt.Sprintf(`        source      = "alloc/root%s"
        destination = "local/out"`, marker))) +
		sandboxTmplGroup("destination", app(runs, fmt.Sprintf(`        data        = "pwned"
        destination = "alloc/root%s/pwned"`, dir))) +
		sandboxTmplGroup("file", app(runs, fmt.Sprintf(`        data        = "{{ file \"alloc/root%s\" }}"
        destination = "local/out"`, marker))) +
		// The task checks, from inside, that its file is the rendered
		// one and no longer a link: it exits 3 otherwise.
		sandboxTmplGroup("replaced", app(`test ! -L /alloc/marker && test "$(cat /alloc/marker)" = rendered || exit 3`,
			`        data        = "rendered"
        destination = "alloc/marker"`))
	sandboxTmplRegister(t, c, "tmpl-escape", groups)

	for _, g := range []string{"source", "destination", "file"} {
		sandboxTmplFailed(t, p, "tmpl-escape", g, "app", "escapes the allocation directory")
		if st, _ := sandboxTmplTask(t, p, "tmpl-escape", g, "evil"); st.Failed {
			t.Errorf("%s: the prestart task failed: %s", g, jsonString(st.Events))
		}
	}
	if st, msg := sandboxTmplTask(t, p, "tmpl-escape", "replaced", "app"); st.Failed || st.StartedAt.IsZero() {
		t.Errorf("replaced: the task failed (its file was not the rendered one): %q %s", msg, jsonString(st.Events))
	}
	sandboxTmplCheckMarker(t, dir, marker)
	sandboxTmplAlive(t, p)
}

// TestSandboxTemplateBrokenJobs: templates that cannot be built or would
// take the agent down — a missing source, a destination that climbs out
// through a meta value, executeTemplate calling itself (refused when
// the job is submitted, whatever the client's denylist),
// mustEnv of a variable only the agent has — fail their tasks with the
// reason; the agent lives, and answers, through all of them and a
// restart of a task whose template is broken.
func TestSandboxTemplateBrokenJobs(t *testing.T) {
	t.Setenv("DROVER_SANDBOX_TMPL_SECRET", "agent-secret")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "allow-execute-template.hcl")
	// The operator removed executeTemplate from the denylist.
	writeFile(t, cfg, `client {
  template {
    function_denylist = ["plugin", "writeToFile"]
  }
}
`)
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"default denylist", nil},
		{"executeTemplate allowed", []string{"-config", cfg}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startDevAgent(t, tc.extra...)
			c := p.client()
			task := func(tmpl string) string {
				return fmt.Sprintf(`
    task "app" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exit 0"]
      }
      template {
%s
        destination = "local/out"
      }
    }`, tmpl)
			}
			metaTask := strings.Replace(task(`        data = "x"`), `destination = "local/out"`, `destination = "${NOMAD_META_d}/x"`, 1)
			groups := sandboxTmplGroup("missing", task(`        source = "local/nope.tpl"`)) +
				sandboxTmplGroup("meta", "    meta {\n      d = \"../../../../..\"\n    }\n"+metaTask) +
				sandboxTmplGroup("agentenv", task(`        data = "{{ mustEnv \"DROVER_SANDBOX_TMPL_SECRET\" }}"`))
			sandboxTmplRegister(t, c, "tmpl-broken", groups)
			sandboxTmplFailed(t, p, "tmpl-broken", "missing", "app", "source local/nope.tpl")
			sandboxTmplFailed(t, p, "tmpl-broken", "meta", "app", "escapes the task directory")
			// A template that calls itself is refused when it is submitted,
			// whatever the clients allow (the client refuses it again before
			// it renders, for jobs stored before that check).
			rec, _, err := jobspec.Parse("tmpl-rec.hcl", []byte("job \"tmpl-rec\" {\n  type = \"batch\"\n"+sandboxTmplGroup("recursion", task(`        data = "x"`))+"\n}\n"), jobspec.Options{})
			if err != nil {
				t.Fatal(err)
			}
			rec.TaskGroups[0].Tasks[0].Templates[0].EmbeddedTmpl = `{{ define "a" }}{{ executeTemplate "a" }}{{ end }}{{ executeTemplate "a" }}`
			if _, err := c.Jobs().Register(ctx(t), rec); err == nil || !strings.Contains(err.Error(), `template "a" calls itself (executeTemplate "a")`) {
				t.Fatalf("registering a recursive template: %v, want it refused naming the cycle", err)
			}
			sandboxTmplFailed(t, p, "tmpl-broken", "agentenv", "app", "required environment variable DROVER_SANDBOX_TMPL_SECRET is empty")
			sandboxTmplAlive(t, p)
			if code := p.interrupt(); code != 0 {
				t.Fatalf("the agent exited %d after SIGINT", code)
			}
		})
	}
}
