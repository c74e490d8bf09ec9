package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// opsJob is a raw_exec service job whose task traps SIGUSR1 (writing
// "got-usr1" to its stdout) and says "ready" on start.
const opsJob = `job "ops" {
  type = "service"
  group "g" {
    count = 1
    task "app" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "trap 'echo got-usr1' USR1; echo ready; while :; do sleep 0.1; done"]
      }
      kill_timeout = "2s"
      restart {
        attempts = 0
        mode     = "fail"
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`

// doneJob is a batch job whose task ends at once.
const doneJob = `job "done" {
  type = "batch"
  group "g" {
    task "app" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`

// runJobFile registers an HCL job and returns its running (or, for
// wantStatus complete, completed) allocation.
func runJobFile(t *testing.T, p *agentProc, src, wantStatus string) *structs.AllocationListStub {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	job := parseJob(t, path)
	c := p.client()
	registerJob(t, c, job)
	var alloc *structs.AllocationListStub
	eventually(t, 60*time.Second, job.ID+" "+wantStatus, func() error {
		allocs, err := jobAllocs(t, c, job.ID)
		if err != nil {
			return err
		}
		for _, a := range allocs {
			if a.DesiredStatus == structs.AllocDesiredStatusRun && a.ClientStatus == wantStatus {
				alloc = a
				return nil
			}
		}
		return fmt.Errorf("allocs %s", jsonString(allocs))
	})
	t.Cleanup(func() { killAllocProcs(alloc.ID) })
	return alloc
}

// taskLog reads a task's whole stdout.
func taskLog(t *testing.T, c *apiclient.Client, allocID, task string) string {
	t.Helper()
	rc, err := c.AllocLogs(ctx(t), allocID, apiclient.LogsOptions{Task: task})
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return string(b)
}

// waitLog waits until the task's stdout holds want n times.
func waitLog(t *testing.T, c *apiclient.Client, allocID, want string, n int) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("%q %d times in the log", want, n), func() error {
		if got := taskLog(t, c, allocID, "app"); strings.Count(got, want) < n {
			return fmt.Errorf("log %q", got)
		}
		return nil
	})
}

// droverRun runs the CLI with stdin, bounded; it returns stdout, stderr
// and the exit code.
func droverRun(t *testing.T, p *agentProc, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.CommandContext(bounded(t, 60*time.Second), droverBin, args...)
	cmd.Env = append(os.Environ(), "DROVER_ADDR=http://"+p.httpAddr, "NOMAD_ADDR=")
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("drover %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("drover %s → %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	return stdout.String(), stderr.String(), code
}

// ptyOutput collects what the CLI writes to its terminal.
type ptyOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *ptyOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *ptyOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// TestAllocExecRestartSignalStop drives alloc exec, restart, signal and
// stop on a dev agent with a real raw_exec task: exec on a terminal (a
// pty in the test: typed commands, the terminal's size and its changes,
// the exit code), with stdin piped, through the official Go client, and
// refused (a dead allocation, an unknown task, no command) with nothing
// run; signal reaching the task's trap; restart in place; stop replacing
// the allocation, the job keeping its count.
func TestAllocExecRestartSignalStop(t *testing.T) {
	p := startDevAgent(t)
	c := p.client()
	alloc := runJobFile(t, p, opsJob, structs.AllocClientStatusRunning)
	waitLog(t, c, alloc.ID, "ready", 1)
	short := alloc.ID[:8]

	t.Run("exec on a terminal", func(t *testing.T) {
		cmd := exec.CommandContext(bounded(t, 60*time.Second), droverBin, "alloc", "exec", short, "/bin/sh")
		cmd.Env = append(os.Environ(), "DROVER_ADDR=http://"+p.httpAddr, "NOMAD_ADDR=", "TERM=dumb")
		ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 30, Cols: 100})
		if err != nil {
			t.Fatal(err)
		}
		defer ptmx.Close()
		out := &ptyOutput{}
		copied := make(chan struct{})
		go func() {
			defer close(copied)
			_, _ = io.Copy(out, ptmx)
		}()
		waitFor := func(what, want string) {
			t.Helper()
			eventually(t, 30*time.Second, what, func() error {
				if !strings.Contains(out.String(), want) {
					return fmt.Errorf("terminal shows %q", out.String())
				}
				return nil
			})
		}
		if _, err := io.WriteString(ptmx, "stty size; echo task=$NOMAD_TASK_NAME; test -t 0 && echo on-a-t''ty\r"); err != nil {
			t.Fatal(err)
		}
		waitFor("the terminal's size", "30 100")
		waitFor("the task's environment", "task=app")
		waitFor("a terminal in the task", "on-a-tty")
		// A resize of the local terminal reaches the remote one.
		if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 41, Cols: 123}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the resized terminal", func() error {
			if _, err := io.WriteString(ptmx, "stty size\r"); err != nil {
				return err
			}
			time.Sleep(200 * time.Millisecond)
			if !strings.Contains(out.String(), "41 123") {
				return fmt.Errorf("terminal shows %q", out.String())
			}
			return nil
		})
		if _, err := io.WriteString(ptmx, "exit 7\r"); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 7 {
			t.Fatalf("exit: %v\n%s", err, out.String())
		}
		ptmx.Close()
		<-copied
	})

	t.Run("exec with stdin piped", func(t *testing.T) {
		stdout, stderr, code := droverRun(t, p, "piped line\n", "alloc", "exec", short,
			"/bin/sh", "-c", `read l; echo "got:$l dir:$(basename $(pwd))"; echo to-stderr >&2; exit 3`)
		if code != 3 || stdout != "got:piped line dir:app\n" || stderr != "to-stderr\n" {
			t.Fatalf("exit %d stdout %q stderr %q", code, stdout, stderr)
		}
		// The task named after the allocation, and -i=false.
		stdout, _, code = droverRun(t, p, "ignored\n", "alloc", "exec", "-i=false", short, "app", "/bin/sh", "-c", "cat; echo end")
		if code != 0 || stdout != "end\n" {
			t.Fatalf("-i=false: exit %d stdout %q", code, stdout)
		}
	})

	t.Run("exec through the official Go client", func(t *testing.T) {
		nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + p.httpAddr})
		if err != nil {
			t.Fatal(err)
		}
		na, _, err := nc.Allocations().Info(alloc.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		sizes := make(chan nomad.TerminalSize, 1)
		sizes <- nomad.TerminalSize{Height: 20, Width: 60}
		var stdout, stderr bytes.Buffer
		code, err := nc.Allocations().Exec(cctx, na, "app", true, []string{"/bin/sh"},
			strings.NewReader("stty size; exit 5\n"), &stdout, &stderr, sizes, nil)
		if err != nil || code != 5 || !strings.Contains(stdout.String(), "20 60") {
			t.Fatalf("tty: exit %d, %v, stdout %q", code, err, stdout.String())
		}
		stdout.Reset()
		code, err = nc.Allocations().Exec(cctx, na, "app", false, []string{"/bin/sh", "-c", "cat; echo oops >&2"},
			strings.NewReader("through nomad\n"), &stdout, &stderr, nil, nil)
		if err != nil || code != 0 || stdout.String() != "through nomad\n" || stderr.String() != "oops\n" {
			t.Fatalf("pipes: exit %d, %v, stdout %q stderr %q", code, err, stdout.String(), stderr.String())
		}
		// A task the group does not have.
		_, err = nc.Allocations().Exec(cctx, na, "nope", false, []string{"true"}, strings.NewReader(""), io.Discard, io.Discard, nil, nil)
		if err == nil || !strings.Contains(err.Error(), `unknown task "nope"`) {
			t.Fatalf("unknown task: %v", err)
		}
	})

	t.Run("exec refused", func(t *testing.T) {
		marker := filepath.Join(t.TempDir(), "ran")
		done := runJobFile(t, p, doneJob, structs.AllocClientStatusComplete)
		_, stderr, code := droverRun(t, p, "", "alloc", "exec", done.ID[:8], "/usr/bin/touch", marker)
		if code != 1 || !strings.Contains(stderr, "is not running") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Fatalf("a complete alloc: exit %d stderr %q", code, stderr)
		}
		// The node refuses it too, when asked directly.
		nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + p.httpAddr})
		if err != nil {
			t.Fatal(err)
		}
		_, err = nc.Allocations().Exec(context.Background(), &nomad.Allocation{ID: done.ID}, "app", false,
			[]string{"/usr/bin/touch", marker}, strings.NewReader(""), io.Discard, io.Discard, nil, nil)
		// Refused inside the WebSocket, as Nomad's: the close frame's text
		// is the error. (The Go client reads stdin as soon as the socket is
		// open: a nil one would crash it, against Nomad as here.)
		if err == nil || !strings.Contains(err.Error(), "not running") {
			t.Fatalf("a complete alloc through the Go client: %v", err)
		}
		_, stderr, code = droverRun(t, p, "", "alloc", "exec", "-task", "nope", short, "/usr/bin/touch", marker)
		if code != 1 || !strings.Contains(stderr, `Could not find task named "nope"`) {
			t.Fatalf("an unknown task: exit %d stderr %q", code, stderr)
		}
		_, stderr, code = droverRun(t, p, "", "alloc", "exec", short)
		if code != 1 || !strings.Contains(stderr, "at least two arguments") {
			t.Fatalf("no command: exit %d stderr %q", code, stderr)
		}
		_, stderr, code = droverRun(t, p, "", "alloc", "exec", short, "/no/such/command")
		if code != 1 || !strings.Contains(stderr, "failed to exec into task: cannot start the command") {
			t.Fatalf("a missing command: exit %d stderr %q", code, stderr)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("a refused exec ran its command")
		}
	})

	t.Run("signal", func(t *testing.T) {
		if _, stderr, code := droverRun(t, p, "", "alloc", "signal", "-s", "SIGNOPE", short); code != 1 ||
			!strings.Contains(stderr, `Unknown signal "SIGNOPE"`) {
			t.Fatalf("an unknown signal: exit %d %q", code, stderr)
		}
		if _, _, code := droverRun(t, p, "", "alloc", "signal", "-s", "SIGUSR1", short, "app"); code != 0 {
			t.Fatalf("signal: exit %d", code)
		}
		waitLog(t, c, alloc.ID, "got-usr1", 1)
		// The event reaches the servers with the client's next update
		// (batched), perhaps after the task's output.
		eventually(t, 30*time.Second, "the Signaling event in alloc status", func() error {
			out, _, _ := droverRun(t, p, "", "alloc", "status", short)
			if !strings.Contains(out, "Signaling") || !strings.Contains(out, "Task being sent signal SIGUSR1") {
				return fmt.Errorf("alloc status:\n%s", out)
			}
			return nil
		})
	})

	t.Run("restart", func(t *testing.T) {
		if _, _, code := droverRun(t, p, "", "alloc", "restart", short); code != 0 {
			t.Fatalf("restart: exit %d", code)
		}
		waitLog(t, c, alloc.ID, "ready", 2)
		eventually(t, 30*time.Second, "the restart reported", func() error {
			a, _, err := c.Allocations().Info(ctx(t), alloc.ID, nil)
			if err != nil {
				return err
			}
			st := a.TaskStates["app"]
			if a.ClientStatus != structs.AllocClientStatusRunning || st == nil || st.Restarts != 1 || st.State != structs.TaskStateRunning {
				return fmt.Errorf("alloc %s task %s", a.ClientStatus, jsonString(st))
			}
			return nil
		})
		out, _, _ := droverRun(t, p, "", "alloc", "status", short)
		for _, want := range []string{"Restart Signaled", "User requested restart", "Task restarting in 0s"} {
			if !strings.Contains(out, want) {
				t.Fatalf("alloc status lacks %q:\n%s", want, out)
			}
		}
		// attempts = 0 and mode = "fail": a restart counted against the
		// policy would have failed the task; it runs.
	})

	t.Run("stop", func(t *testing.T) {
		out, stderr, code := droverRun(t, p, "", "alloc", "stop", short)
		if code != 0 || !strings.Contains(out, "Monitoring evaluation") || !strings.Contains(out, `finished with status "complete"`) ||
			!strings.Contains(out, "created: node") {
			t.Fatalf("stop: exit %d\n%s%s", code, out, stderr)
		}
		var replacement string
		eventually(t, 60*time.Second, "the replacement running", func() error {
			allocs, err := jobAllocs(t, c, "ops")
			if err != nil {
				return err
			}
			running := runningAllocs(allocs, 0)
			if len(running) != 1 || running[0] == alloc.ID {
				return fmt.Errorf("running %v", running)
			}
			replacement = running[0]
			old, _, err := c.Allocations().Info(ctx(t), alloc.ID, nil)
			if err != nil {
				return err
			}
			if old.DesiredStatus != structs.AllocDesiredStatusStop || !old.ClientTerminalStatus() || !old.DesiredTransition.ShouldMigrate() {
				return fmt.Errorf("old alloc %s/%s", old.DesiredStatus, old.ClientStatus)
			}
			return nil
		})
		t.Cleanup(func() { killAllocProcs(replacement) })
		a, _, err := c.Allocations().Info(ctx(t), replacement, nil)
		if err != nil || a.PreviousAllocation != alloc.ID || a.NodeID != alloc.NodeID {
			t.Fatalf("replacement %+v: %v", a, err)
		}
		if _, stderr, code := droverRun(t, p, "", "alloc", "stop", short); code != 1 || !strings.Contains(stderr, "already stopped") {
			t.Fatalf("stopping it again: exit %d %q", code, stderr)
		}
		out, _, code = droverRun(t, p, "", "alloc", "stop", "-detach", "-no-shutdown-delay", replacement[:8])
		if code != 0 || len(strings.TrimSpace(out)) != 36 {
			t.Fatalf("stop -detach -no-shutdown-delay: exit %d %q", code, out)
		}
		if r, _, err := c.Allocations().Info(ctx(t), replacement, nil); err != nil || !r.DesiredTransition.ShouldIgnoreShutdownDelay() {
			t.Fatalf("stopped with -no-shutdown-delay: %+v %v", r.DesiredTransition, err)
		}
	})

	// The dev agent kills what it runs as it stops.
	if code := p.interrupt(); code != 0 {
		t.Errorf("the dev agent exited %d", code)
	}
}
