package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// sandboxShutdownJob's task renders a variable of another job's, which
// its workload identity may not read: its template never renders, and
// the task waits in its prestart (up to the render timeout, 5 minutes).
const sandboxShutdownJob = `
job "waits" {
  type = "batch"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      template {
        data        = "X={{ with nomadVar \"nomad/jobs/other\" }}{{ .x }}{{ end }}\n"
        destination = "local/x.env"
      }
    }
  }
}
`

// sandboxShutdownAgent starts a server and client agent (not -dev) with
// ACLs on and raw_exec enabled, bootstraps its ACLs and returns it with a
// management client.
func sandboxShutdownAgent(t *testing.T) (*agentProc, *apiclient.Client) {
	t.Helper()
	t.Setenv("NOMAD_TOKEN", "")
	t.Setenv("DROVER_TOKEN", "")
	dir := t.TempDir()
	httpAddr, raftAddr := loopback.Addr(t), loopback.Addr(t)
	cfg := filepath.Join(dir, "agent.hcl")
	writeFile(t, cfg, fmt.Sprintf(`
name      = "sd"
data_dir  = %q
bind_addr = "127.0.0.1"
log_level = "debug"
ports {
  http = %s
  raft = %s
}
server {
  enabled          = true
  bootstrap_expect = 1
}
client {
  enabled = true
}
acl {
  enabled = true
}
`, filepath.Join(dir, "data"), port(httpAddr), port(raftAddr))+rawExecConfig)
	p := startAgentProc(t, "sd", httpAddr, "-config", cfg)
	c := p.client()
	eventually(t, 30*time.Second, "the ACL bootstrap", func() error {
		boot, err := c.ACLBootstrap(ctx(t), "")
		if err == nil {
			c.SetToken(boot.SecretID)
		}
		return err
	})
	eventually(t, 30*time.Second, "the client node ready", func() error {
		nodes, _, err := c.Nodes().List(ctx(t), nil)
		if err != nil {
			return err
		}
		if len(nodes) != 1 || nodes[0].Status != structs.NodeStatusReady {
			return fmt.Errorf("nodes %s", jsonString(nodes))
		}
		return nil
	})
	return p, c
}

// sandboxShutdownWaiting waits until the job's task waits for its
// template, the variable reported missing.
func sandboxShutdownWaiting(t *testing.T, c *apiclient.Client, jobID, task string) {
	t.Helper()
	eventually(t, 60*time.Second, "the task waiting for its template", func() error {
		allocs, err := jobAllocs(t, c, jobID)
		if err != nil {
			return err
		}
		for _, a := range allocs {
			st := a.TaskStates[task]
			if st == nil {
				continue
			}
			for _, e := range st.Events {
				if e.Type == structs.TemplateEventType && strings.Contains(e.DisplayMessage, "nomad/jobs/other") {
					if st.State != structs.TaskStatePending {
						return fmt.Errorf("task %s, want pending", st.State)
					}
					return nil
				}
			}
		}
		return fmt.Errorf("no Template event yet in %s", jsonString(allocs))
	})
}

// An agent (not -dev) sent SIGTERM while a task waits in its prestart for
// a template that can never render exits, cleanly: before, the client's
// shutdown waited on the task's runner, which waited out the render
// timeout, and the process was still running 90 s later.
func TestSandboxShutdownDuringBlockedTemplate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an agent process")
	}
	p, c := sandboxShutdownAgent(t)
	job, _, err := jobspec.Parse("waits.hcl", []byte(sandboxShutdownJob), jobspec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	registerJob(t, c, job)
	sandboxShutdownWaiting(t, c, "waits", "t")

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Well under the 90 s it used to run on, and beyond the shutdown
	// timeout (30 s), which bounds the shutdown whatever the cause.
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the agent was still running 60s after SIGTERM")
	}
	out := p.logs.String()
	if p.exitErr != nil {
		t.Fatalf("the agent exited with %v", p.exitErr)
	}
	// It stopped because the task's wait ended, not because the shutdown
	// timeout cut it short.
	if strings.Contains(out, "not stopped within the shutdown timeout") {
		t.Fatalf("the shutdown timed out instead of the task's wait ending:\n%s", out)
	}
	if !strings.Contains(out, "caught terminated, shutting down") {
		t.Fatalf("no shutdown in the output:\n%s", out)
	}
}
