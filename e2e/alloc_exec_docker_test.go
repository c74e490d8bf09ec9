package e2e

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/droverhq/drover/drivers/docker/dockertest"
	"github.com/droverhq/drover/structs"
)

// dockerOpsJob runs the test image's shell, trapping SIGUSR1 and waiting.
const dockerOpsJob = `job "dops" {
  group "g" {
    task "box" {
      driver = "docker"
      config {
        image   = "%s"
        command = "/bin/sh"
        args    = ["-c", "trap 'echo got-usr1' USR1; echo ready; while :; do sleep 0.1; done"]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`

// TestAllocExecInADockerTask runs alloc exec in a docker task on a dev
// agent (docker exec): on a pty driven by the test, with its size and exit
// code, and with stdin piped; alloc signal reaches the container's trap.
// It needs a Docker daemon (skipped without one unless
// DROVER_REQUIRE_DOCKER=1).
func TestAllocExecInADockerTask(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a container")
	}
	cli := dockertest.Client(t)
	image := dockertest.BusyboxImage(t, cli)
	p := startDevAgent(t)
	c := p.client()
	node := devNodeID(t, c)
	t.Cleanup(func() { removeNodeContainers(cli, node) })
	alloc := runJobFile(t, p, fmt.Sprintf(dockerOpsJob, image), structs.AllocClientStatusRunning)
	short := alloc.ID[:8]
	eventually(t, 30*time.Second, "the container ready", func() error {
		if got := taskLog(t, c, alloc.ID, "box"); !strings.Contains(got, "ready") {
			return fmt.Errorf("log %q", got)
		}
		return nil
	})

	// On a terminal.
	cmd := exec.CommandContext(bounded(t, 60*time.Second), droverBin, "alloc", "exec", short, "/bin/sh")
	cmd.Env = append(os.Environ(), "DROVER_ADDR=http://"+p.httpAddr, "NOMAD_ADDR=", "TERM=dumb")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 25, Cols: 90})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	out := &ptyOutput{}
	go func() { _, _ = io.Copy(out, ptmx) }()
	if _, err := io.WriteString(ptmx, "test -t 0 && echo in-a-t''ty; echo dir=$NOMAD_TASK_DIR\r"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the container's terminal", func() error {
		if s := out.String(); !strings.Contains(s, "in-a-tty") || !strings.Contains(s, "dir=/local") {
			return fmt.Errorf("terminal shows %q", s)
		}
		return nil
	})
	if _, err := io.WriteString(ptmx, "exit 6\r"); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 6 {
		t.Fatalf("exit: %v\n%s", err, out.String())
	}

	// With stdin piped.
	stdout, stderr, code := droverRun(t, p, "from the pipe\n", "alloc", "exec", short, "/bin/sh", "-c", "cat; echo err >&2; exit 2")
	if code != 2 || stdout != "from the pipe\n" || stderr != "err\n" {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
	}

	// A signal to the container.
	if _, _, code := droverRun(t, p, "", "alloc", "signal", "-s", "USR1", short); code != 0 {
		t.Fatalf("signal: exit %d", code)
	}
	eventually(t, 30*time.Second, "the container's trap", func() error {
		if got := taskLog(t, c, alloc.ID, "box"); !strings.Contains(got, "got-usr1") {
			return fmt.Errorf("log %q", got)
		}
		return nil
	})
	if code := p.interrupt(); code != 0 {
		t.Errorf("the dev agent exited %d", code)
	}
}
