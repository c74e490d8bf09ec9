package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// checksJob is a raw_exec service whose script check passes while a file
// exists: it gates the deployment (health_check = "checks") and, with
// check_restart, restarts the task when it keeps failing.
func checksJob(id, marker string) string {
	return fmt.Sprintf(`job %q {
  group "web" {
    count = 1
    update {
      health_check      = "checks"
      min_healthy_time  = "1s"
      healthy_deadline  = "2m"
      progress_deadline = "3m"
    }
    restart {
      attempts = 5
      interval = "1h"
      delay    = "1s"
      mode     = "fail"
    }
    task "main" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exec sleep 600"]
      }
      env {
        MARKER = %q
      }
      resources {
        cpu    = 20
        memory = 32
      }
      service {
        name = "web"
        check {
          name     = "ready"
          type     = "script"
          command  = "/bin/sh"
          args     = ["-c", "test -f \"$MARKER\""]
          interval = "200ms"
          timeout  = "5s"
          check_restart {
            limit = 3
            grace = "1s"
          }
        }
      }
    }
  }
}
`, id, marker)
}

// TestScriptCheckDeploymentAndRestart: on a dev agent, a job whose script
// check fails stays in a running deployment with no healthy alloc; once
// the check passes the deployment succeeds. When the check fails again,
// check_restart restarts the task: a "Restart Signaled" event with
// Nomad's reason and a restart counted.
func TestScriptCheckDeploymentAndRestart(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	const id = "scriptcheck"
	marker := filepath.Join(t.TempDir(), "ready")
	stopJobProcs(t, c, id)
	job, _, err := jobspec.Parse(id+".hcl", []byte(checksJob(id, marker)), jobspec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	registerJob(t, c, job)

	// The check fails: restarts go on, the deployment waits.
	eventually(t, 60*time.Second, "a check restart while the marker is missing", func() error {
		for _, a := range allocsOf(t, c, id) {
			if s := a.TaskStates["main"]; s != nil && s.Restarts > 0 {
				return nil
			}
		}
		return fmt.Errorf("no restart yet")
	})
	d, err := latestDeployment(t, c, id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != structs.DeploymentStatusRunning || d.TaskGroups["web"].HealthyAllocs != 0 {
		t.Fatalf("deployment %s with %d healthy while the check fails", d.Status, d.TaskGroups["web"].HealthyAllocs)
	}

	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, c, id, 0, structs.DeploymentStatusSuccessful, 90*time.Second)
	var before uint64
	for _, a := range allocsOf(t, c, id) {
		if running(a) {
			before = a.TaskStates["main"].Restarts
		}
	}

	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	want := `healthcheck: check "ready" unhealthy`
	eventually(t, 60*time.Second, "a check restart after the marker went", func() error {
		for _, a := range allocsOf(t, c, id) {
			s := a.TaskStates["main"]
			if a.DesiredStatus != structs.AllocDesiredStatusRun || s == nil || s.Restarts <= before {
				continue
			}
			for _, e := range s.Events {
				if e.Type == structs.TaskRestartSignal && e.RestartReason == want && e.DisplayMessage == want {
					return nil
				}
			}
			return fmt.Errorf("restarted without the event: %+v", s.Events)
		}
		return fmt.Errorf("no new restart")
	})
}
