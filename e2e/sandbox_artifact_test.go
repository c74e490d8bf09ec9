package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers/docker/dockertest"
	"github.com/droverhq/drover/structs"
)

// The threat: a job's author, holding a token with only write on its
// namespace, wants the client (root on the host) to read or write a host
// file. Each attack below aims at a marker file in a directory of the
// test's, outside the agent's data directory, and is refused: the marker
// is neither read nor written, the agent keeps answering, and the job
// learns why (a 400 naming the field at registration, or a task event).

// sandboxArtAgent is a sandbox agent, with the docker driver as a client
// has it by default (volumes off), and a token with write on namespace
// dev only.
type sandboxArtAgent struct {
	*sandboxAgent
	dev map[string]string
}

func sandboxArtStart(t *testing.T) *sandboxArtAgent {
	t.Helper()
	a := sandboxStart(t, "sbx-art", "")
	return &sandboxArtAgent{sandboxAgent: a, dev: a.token(t, "dev", `namespace "dev" { policy = "write" }`)}
}

// sandboxArtMarker is a host directory holding one file, "marker", that
// no job may read or write.
func sandboxArtMarker(t *testing.T) (dir, marker string) {
	t.Helper()
	dir = t.TempDir()
	marker = filepath.Join(dir, "marker")
	if err := os.WriteFile(marker, []byte("HOST-MARKER\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, marker
}

// sandboxArtUntouched fails the test if the marker's directory changed or
// the agent stopped answering.
func (a *sandboxArtAgent) sandboxArtUntouched(t *testing.T, dir, marker string) {
	t.Helper()
	if b, err := os.ReadFile(marker); err != nil || string(b) != "HOST-MARKER\n" {
		t.Fatalf("the host marker is now %q (%v)", b, err)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("the host directory now holds %d entries", len(es))
	}
	if code, out := rawRequest(t, "GET", a.base+"/v1/status/leader", "", a.mgmt); code != 200 {
		t.Fatalf("the agent no longer answers: %d %s", code, out)
	}
	// Nothing in the allocations holds the marker's content.
	filepath.WalkDir(filepath.Join(a.dataDir, "alloc"), func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("HOST-MARKER")) {
			t.Fatalf("%s holds the host marker's content", p)
		}
		return nil
	})
}

// sandboxArtRegister registers an HCL job with the dev token as JSON and
// returns the answer.
func (a *sandboxArtAgent) sandboxArtRegister(t *testing.T, src string) (int, string) {
	t.Helper()
	return rawRequest(t, "PUT", a.base+"/v1/jobs", sandboxJobBody(t, src), a.dev)
}

// sandboxArtFailedTask waits for task of the dev job id to be dead and
// failed, and returns the events' descriptions and messages.
func (a *sandboxArtAgent) sandboxArtFailedTask(t *testing.T, id, task string) string {
	t.Helper()
	var events string
	eventually(t, 90*time.Second, id+"'s task "+task+" fails", func() error {
		_, out := rawRequest(t, "GET", a.base+"/v1/job/"+id+"/allocations?namespace=dev", "", a.dev)
		var stubs []*structs.AllocationListStub
		if err := json.Unmarshal([]byte(out), &stubs); err != nil || len(stubs) == 0 {
			return fmt.Errorf("allocations: %s", out)
		}
		st := stubs[0].TaskStates[task]
		if st == nil || st.State != structs.TaskStateDead || !st.Failed {
			return fmt.Errorf("task %s: %s", task, jsonString(st))
		}
		events = jsonString(st.Events)
		return nil
	})
	return events
}

// An artifact whose source is on the client's host, in each of go-getter's
// spellings, is refused at registration with a 400 naming the field (and
// by the validate endpoint); so is one through a getter drover lacks.
func TestSandboxArtifactLocalSourceRefusedAtRegistration(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an agent process")
	}
	a := sandboxArtStart(t)
	dir, marker := sandboxArtMarker(t)
	for _, src := range []string{marker, "file://" + marker, "git::file://" + dir, "git::" + dir, "hg::file://" + dir, "s3::https://s3.amazonaws.com/b/k"} {
		// As the Nomad Go client sends it: the server alone judges it.
		body, _ := json.Marshal(map[string]any{"Job": map[string]any{
			"ID": "art", "Name": "art", "Namespace": "dev", "Type": "batch", "Datacenters": []string{"dc1"},
			"TaskGroups": []any{map[string]any{"Name": "g", "Tasks": []any{map[string]any{
				"Name": "t", "Driver": "raw_exec", "Config": map[string]any{"command": "/bin/cat", "args": []string{"local/marker"}},
				"Artifacts": []any{map[string]any{"GetterSource": src}},
			}}}},
		}})
		code, out := rawRequest(t, "PUT", a.base+"/v1/jobs", string(body), a.dev)
		if code != 400 || !strings.Contains(out, "Job.TaskGroups[0].Tasks[0].Artifacts[0].GetterSource") {
			t.Errorf("%s: %d %s, want a 400 naming GetterSource", src, code, out)
		}
		// The validate endpoint says the same, in Nomad's ValidationErrors.
		code, out = rawRequest(t, "PUT", a.base+"/v1/validate/job", string(body), a.dev)
		if code != 200 || !strings.Contains(out, `"ValidationErrors":["Job.TaskGroups[0].Tasks[0].Artifacts[0].GetterSource`) {
			t.Errorf("validate %s: %d %s, want ValidationErrors naming GetterSource", src, code, out)
		}
	}
	if code, out := rawRequest(t, "GET", a.base+"/v1/job/art?namespace=dev", "", a.mgmt); code != 404 {
		t.Fatalf("the job was stored: %d %s", code, out)
	}
	a.sandboxArtUntouched(t, dir, marker)
}

// A source that becomes a host path only once the client fills in a
// variable (${NOMAD_META_src}) passes registration and is refused by the
// client: the task fails on a "Failed Artifact Download" event saying
// why, without having started.
func TestSandboxArtifactLocalSourceRefusedAtRunTime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an agent process")
	}
	a := sandboxArtStart(t)
	dir, marker := sandboxArtMarker(t)
	job := func(id, src, meta string) string {
		return fmt.Sprintf(`job %q {
  namespace = "dev"
  type      = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "cat local/* > %s/leaked"]
      }
      artifact {
        source = %q
      }
      meta {
        src = %q
      }
    }
  }
}`, id, dir, src, meta)
	}
	for _, c := range []struct{ id, src, meta, want string }{
		{"meta-path", "${NOMAD_META_src}", marker, "a path on the client's own host is refused"},
		{"meta-git", "git::${NOMAD_META_src}", "file://" + dir, "a path on the client's own host is refused"},
	} {
		if code, out := a.sandboxArtRegister(t, job(c.id, c.src, c.meta)); code != 200 {
			t.Fatalf("%s: %d %s", c.id, code, out)
		}
		events := a.sandboxArtFailedTask(t, c.id, "t")
		if !strings.Contains(events, structs.TaskArtifactDownloadFailed) || !strings.Contains(events, c.want) {
			t.Fatalf("%s: events %s, want a %q event saying %q", c.id, events, structs.TaskArtifactDownloadFailed, c.want)
		}
		if strings.Contains(events, `"Type":"Started"`) {
			t.Fatalf("%s: the task started: %s", c.id, events)
		}
	}
	a.sandboxArtUntouched(t, dir, marker)
}

// A docker prestart task makes alloc/x -> / (no artifact: the task itself,
// as root in its container); the main task binds that path, relative
// (../alloc/x), absolute (the allocation's host path) and as a mount
// block, to read the marker and write beside it. Each main task is
// refused when its container is made, with a driver failure saying the
// source leads out of the allocation; nothing on the host is read or
// written.
func TestSandboxArtifactDockerBindThroughSymlinkRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs containers")
	}
	cli := dockertest.Client(t)
	image := dockertest.BusyboxImage(t, cli)
	a := sandboxArtStart(t)
	dir, marker := sandboxArtMarker(t)
	mc := a.proc.client()
	mc.SetToken(a.mgmt["X-Nomad-Token"])
	node := devNodeID(t, mc)
	t.Cleanup(func() { removeNodeContainers(cli, node) })
	job := func(id, bind string) string {
		return fmt.Sprintf(`job %q {
  namespace = "dev"
  type      = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "link" {
      driver = "docker"
      lifecycle {
        hook = "prestart"
      }
      config {
        image   = %q
        command = "/bin/sh"
        args    = ["-c", "ln -s / /alloc/x"]
      }
    }
    task "main" {
      driver = "docker"
      config {
        image   = %q
        command = "/bin/sh"
        args    = ["-c", "cat /host%s > /alloc/leaked; echo written > /host%s/written"]
%s
      }
    }
  }
}`, id, image, image, marker, dir, bind)
	}
	for _, c := range []struct{ id, bind string }{
		{"rel", `        volumes = ["../alloc/x:/host"]`},
		{"abs", fmt.Sprintf(`        volumes = ["%s/alloc/${NOMAD_ALLOC_ID}/alloc/x:/host"]`, a.dataDir)},
		{"mount", `        mount {
          type   = "bind"
          source = "../alloc/x"
          target = "/host"
        }`},
	} {
		if code, out := a.sandboxArtRegister(t, job(c.id, c.bind)); code != 200 {
			t.Fatalf("%s: %d %s", c.id, code, out)
		}
		events := a.sandboxArtFailedTask(t, c.id, "main")
		if !strings.Contains(events, "resolves outside the allocation") {
			t.Fatalf("%s: main's events %s, want a failure saying the source resolves outside the allocation", c.id, events)
		}
		if strings.Contains(events, `"Type":"Started"`) {
			t.Fatalf("%s: main started: %s", c.id, events)
		}
	}
	a.sandboxArtUntouched(t, dir, marker)
}
