package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/client"
	"github.com/droverhq/drover/structs"
)

// sandboxACLStart starts an agent with a client host volume "x" and
// templates that give up on a refused read after two retries.
func sandboxACLStart(t *testing.T) *sandboxAgent {
	return sandboxStart(t, "sbx", fmt.Sprintf(`  host_volume "x" {
    path = %q
  }
  template {
    nomad_retry {
      attempts = 2
      backoff  = "100ms"
    }
  }`, t.TempDir()))
}

// sandboxACLVolJob is job "vol" of namespace dev, mounting host volume x.
func sandboxACLVolJob(t *testing.T, readOnly bool) string {
	return sandboxJobBody(t, fmt.Sprintf(`job "vol" {
  namespace = "dev"
  group "g" {
    volume "d" {
      type      = "host"
      source    = "x"
      read_only = %t
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["300"]
      }
      volume_mount {
        volume      = "d"
        destination = "/d"
      }
    }
  }
}
`, readOnly))
}

// jobStatus answers the management token's GET of a job: its status code.
func (a *sandboxAgent) jobStatus(t *testing.T, ns, id string) int {
	t.Helper()
	code, _ := rawRequest(t, "GET", a.base+"/v1/job/"+url.PathEscape(id)+"?namespace="+ns, "", a.mgmt)
	return code
}

// The host_volume rules, on a live agent: a token with write and the
// variables capabilities on namespace dev cannot register a job mounting
// the client's host volume, read-write or read-only, nor plan it; with
// host_volume "x" { policy = "read" } it registers the read-only mount
// (which runs) and is still refused the read-write one.
func TestSandboxACLHostVolumeMounts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an agent process")
	}
	a := sandboxACLStart(t)
	const devWrite = `namespace "dev" {
  policy = "write"
  variables {
    path "*" { capabilities = ["write", "read", "list", "destroy"] }
  }
}`
	dev := a.token(t, "dev", devWrite)
	ro := a.token(t, "dev-ro", devWrite, `host_volume "x" { policy = "read" }`)

	for _, readOnly := range []bool{false, true} {
		code, out := rawRequest(t, "PUT", a.base+"/v1/jobs", sandboxACLVolJob(t, readOnly), dev)
		if code != 403 || !strings.HasPrefix(out, "Permission denied") {
			t.Errorf("dev token, read_only=%t: %d %s, want 403 Permission denied", readOnly, code, out)
		}
		code, out = rawRequest(t, "PUT", a.base+"/v1/job/vol/plan", sandboxACLVolJob(t, readOnly), dev)
		if code != 403 {
			t.Errorf("dev token's plan, read_only=%t: %d %s, want 403", readOnly, code, out)
		}
	}
	if code := a.jobStatus(t, "dev", "vol"); code != 404 {
		t.Fatalf("after the refused registrations GET /v1/job/vol: %d, want 404", code)
	}

	if code, out := rawRequest(t, "PUT", a.base+"/v1/jobs", sandboxACLVolJob(t, false), ro); code != 403 || !strings.Contains(out, "mount-readwrite") {
		t.Errorf("read token, read-write mount: %d %s, want 403 naming mount-readwrite", code, out)
	}
	if code := a.jobStatus(t, "dev", "vol"); code != 404 {
		t.Fatalf("after the refused read-write registration GET /v1/job/vol: %d, want 404", code)
	}
	if code, out := rawRequest(t, "PUT", a.base+"/v1/jobs", sandboxACLVolJob(t, true), ro); code != 200 {
		t.Fatalf("read token, read-only mount: %d %s", code, out)
	}
	eventually(t, 60*time.Second, "job vol's allocation running", func() error {
		_, out := rawRequest(t, "GET", a.base+"/v1/job/vol/allocations?namespace=dev", "", a.mgmt)
		var allocs []*structs.AllocationListStub
		if err := json.Unmarshal([]byte(out), &allocs); err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		if len(runningAllocs(allocs, 0)) != 1 {
			return fmt.Errorf("allocations %s", out)
		}
		return nil
	})
	// A new version that mounts it read-write is refused; the job stays
	// at its read-only version.
	if code, out := rawRequest(t, "PUT", a.base+"/v1/job/vol", sandboxACLVolJob(t, false), ro); code != 403 {
		t.Errorf("read token, read-write version: %d %s, want 403", code, out)
	}
	_, out := rawRequest(t, "GET", a.base+"/v1/job/vol?namespace=dev", "", a.mgmt)
	var j structs.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.Version != 0 || !j.TaskGroups[0].Volumes["d"].ReadOnly {
		t.Fatalf("job vol after the refused version: %v %s", err, out)
	}
}

// sandboxACLTemplateJob is a job of namespace dev whose task renders
// tmpl (and then sleeps).
func sandboxACLTemplateJob(t *testing.T, id, group, tmpl string) string {
	return sandboxJobBody(t, fmt.Sprintf(`job %q {
  namespace = "dev"
  type      = "batch"
  group %q {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["300"]
      }
      template {
        data        = %q
        destination = "local/out.txt"
      }
    }
  }
}
`, id, group, tmpl))
}

// The workload identities, on a live agent: job "web"'s task renders its
// own variables (nomadVar, nomadVarList) and its namespace's services
// (nomadServices, nomadService); job "web/g", whose ID is job web's group
// g's path as a string, is refused nomad/jobs/web/g (its task fails with
// the template's 403). An identity, asked for by the node as templates
// get theirs, reads neither another job's spec, allocations nor events.
func TestSandboxACLWorkloadIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an agent process")
	}
	a := sandboxACLStart(t)
	for _, p := range []string{"nomad/jobs/web", "nomad/jobs/web/g"} {
		body := fmt.Sprintf(`{"Items":{"secret":"%s-secret"}}`, strings.ReplaceAll(p, "/", "-"))
		if code, out := rawRequest(t, "PUT", a.base+"/v1/var/"+p+"?namespace=dev", body, a.mgmt); code != 200 {
			t.Fatalf("put %s: %d %s", p, code, out)
		}
	}
	own := `{{ with nomadVar "nomad/jobs/web/g" }}{{ .secret }}{{ end }}|{{ range nomadVarList "nomad/jobs/web" }}{{ .Path }},{{ end }}|{{ range nomadServices }}{{ .Name }}{{ end }}|{{ range nomadService "none" }}{{ .Address }}{{ end }}`
	for _, j := range []string{
		sandboxACLTemplateJob(t, "web", "g", own),
		sandboxACLTemplateJob(t, "web/g", "x", `{{ with nomadVar "nomad/jobs/web/g" }}{{ .secret }}{{ end }}`),
		sandboxACLTemplateJob(t, "other", "g", "other"),
	} {
		if code, out := rawRequest(t, "PUT", a.base+"/v1/jobs", j, a.mgmt); code != 200 {
			t.Fatalf("register: %d %s", code, out)
		}
	}
	allocOf := func(jobID string) *structs.Allocation {
		t.Helper()
		_, out := rawRequest(t, "GET", a.base+"/v1/allocations?namespace=dev", "", a.mgmt)
		var stubs []*structs.AllocationListStub
		if err := json.Unmarshal([]byte(out), &stubs); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		for _, s := range stubs {
			if s.JobID == jobID {
				_, out := rawRequest(t, "GET", a.base+"/v1/allocation/"+s.ID, "", a.mgmt)
				var alloc structs.Allocation
				if err := json.Unmarshal([]byte(out), &alloc); err != nil {
					t.Fatalf("%v: %s", err, out)
				}
				return &alloc
			}
		}
		return nil
	}
	var web *structs.Allocation
	eventually(t, 60*time.Second, "job web's template rendered", func() error {
		web = allocOf("web")
		if web == nil || web.ClientStatus != structs.AllocClientStatusRunning {
			return fmt.Errorf("job web's allocation: %+v", web)
		}
		b, err := os.ReadFile(filepath.Join(a.dataDir, "alloc", web.ID, "t", "local", "out.txt"))
		if err != nil {
			return err
		}
		if want := "nomad-jobs-web-g-secret|nomad/jobs/web,nomad/jobs/web/g,||"; string(b) != want {
			return fmt.Errorf("rendered %q, want %q", b, want)
		}
		return nil
	})
	eventually(t, 60*time.Second, "job web/g's task failed on its template", func() error {
		alloc := allocOf("web/g")
		if alloc == nil || alloc.ClientStatus != structs.AllocClientStatusFailed {
			return fmt.Errorf("job web/g's allocation: %+v", alloc)
		}
		var events []string
		for _, ts := range alloc.TaskStates {
			for _, e := range ts.Events {
				events = append(events, e.DisplayMessage+e.Message)
			}
		}
		if all := strings.Join(events, "\n"); !strings.Contains(all, "Permission denied") {
			return fmt.Errorf("no refusal among the events:\n%s", all)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(a.dataDir, "alloc", allocOf("web/g").ID, "t", "local", "out.txt")); err == nil {
		t.Error("job web/g's template rendered")
	}

	// Job web's identity, asked for by its node.
	secret, err := os.ReadFile(client.NodeSecretPath(a.dataDir))
	if err != nil {
		t.Fatal(err)
	}
	code, out := rawRequest(t, "PUT", a.base+"/v1/internal/alloc/"+web.ID+"/identity", `{"Tasks":["t"]}`,
		map[string]string{"X-Nomad-Token": strings.TrimSpace(string(secret))})
	var ids structs.AllocIdentityResponse
	if err := json.Unmarshal([]byte(out), &ids); code != 200 || err != nil || len(ids.Identities) != 1 {
		t.Fatalf("identity: %d %s", code, out)
	}
	wid := map[string]string{"X-Nomad-Token": ids.Identities[0].JWT}
	for _, c := range []struct {
		path string
		want int
	}{
		{"/v1/var/nomad/jobs/web?namespace=dev", 200},
		{"/v1/services?namespace=dev", 200},
		{"/v1/job/other?namespace=dev", 403},
		{"/v1/job/web?namespace=dev", 403},
		{"/v1/jobs?namespace=dev", 403},
		{"/v1/job/other/allocations?namespace=dev", 403},
		{"/v1/allocation/" + web.ID + "?namespace=dev", 403},
		{"/v1/event/stream?namespace=dev&topic=Job:*", 403},
	} {
		if code, out := rawRequest(t, "GET", a.base+c.path, "", wid); code != c.want {
			t.Errorf("identity GET %s: %d %s, want %d", c.path, code, out, c.want)
		}
	}
}
