package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers/docker/dockertest"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// TestDockerPrivateRegistry runs a docker job on a dev agent whose image
// is only in a registry on 127.0.0.1 that asks for basic auth: with the
// job's auth block the task runs; a job with a wrong password fails with
// the registry's reason in its Driver Failure event. Neither password is
// in the agent's log (at debug level). It needs a Docker daemon and
// Debian's docker-registry (skipped without them unless
// DROVER_REQUIRE_DOCKER=1).
func TestDockerPrivateRegistry(t *testing.T) {
	cli := dockertest.Client(t)
	image := dockertest.BusyboxImage(t, cli)
	const user, pass, wrong = "deploy", "e2e-Registry-pw-41d", "e2e-Wrong-pw-88a"
	reg := dockertest.Registry(t, user, pass)
	ref := reg + "/drover-e2e/private:1"
	dockertest.Push(t, cli, image, ref, user, pass)

	p := startDevAgent(t)
	c := p.client()
	node := devNodeID(t, c)
	t.Cleanup(func() { removeNodeContainers(cli, node) })
	job := func(id, password string) *structs.Job {
		t.Helper()
		src := fmt.Sprintf(`job %q {
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "app" {
      driver = "docker"
      config {
        image   = %q
        command = "/bin/sh"
        args    = ["-c", "echo pulled; exec sleep 300"]
        auth {
          username       = %q
          password       = %q
          server_address = %q
        }
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, id, ref, user, password, reg)
		j, _, err := jobspec.Parse(id+".hcl", []byte(src), jobspec.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	registerJob(t, c, job("private", pass))
	eventually(t, 60*time.Second, "the private image pulled and running", func() error {
		allocs, err := jobAllocs(t, c, "private")
		if err != nil {
			return err
		}
		if run := runningAllocs(allocs, 0); len(run) != 1 {
			return fmt.Errorf("allocs %s", jsonString(allocs))
		}
		return nil
	})

	dockertest.RemoveTag(t, cli, ref)
	registerJob(t, c, job("wrongpw", wrong))
	eventually(t, 60*time.Second, "the wrong password's Driver Failure", func() error {
		allocs, err := jobAllocs(t, c, "wrongpw")
		if err != nil || len(allocs) == 0 {
			return fmt.Errorf("allocs %d %v", len(allocs), err)
		}
		a, _, err := c.Allocations().Info(ctx(t), allocs[0].ID, nil)
		if err != nil {
			return err
		}
		st := a.TaskStates["app"]
		if st == nil {
			return fmt.Errorf("no task state")
		}
		for _, e := range st.Events {
			if e.Type == structs.TaskDriverFailure {
				if !strings.Contains(strings.ToLower(e.DisplayMessage), "unauthorized") {
					t.Fatalf("Driver Failure without the registry's reason: %s", jsonString(e))
				}
				if strings.Contains(e.DisplayMessage, wrong) {
					t.Fatalf("the event shows the password: %s", e.DisplayMessage)
				}
				return nil
			}
		}
		return fmt.Errorf("events %s", jsonString(st.Events))
	})
	logs := p.logs.String()
	for _, pw := range []string{pass, wrong} {
		if strings.Contains(logs, pw) {
			t.Fatalf("the agent's log holds a password %q", pw)
		}
	}
	if !strings.Contains(logs, "private") {
		t.Fatalf("the agent's log does not mention the job at all; the check above proves nothing:\n%s", logs)
	}
}
