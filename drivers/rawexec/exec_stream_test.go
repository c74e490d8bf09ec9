package rawexec

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond until it holds or the test's bound passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitSession(t *testing.T, s drivers.ExecSession) int {
	t.Helper()
	done := make(chan int, 1)
	go func() {
		code, err := s.Wait()
		if err != nil {
			t.Errorf("wait: %v", err)
		}
		done <- code
	}()
	select {
	case code := <-done:
		return code
	case <-time.After(testTimeout):
		s.Kill()
		t.Fatal("the command did not end")
		return -1
	}
}

// Without a terminal, the command reads what is written to its stdin
// until end of file, writes stdout and stderr apart, runs in the task's
// directory and environment, and its exit code is returned.
func TestExecStreamPipes(t *testing.T) {
	d := New(Options{})
	cfg := newTask(t, "web", "/bin/sleep", "60")
	cfg.Env["GREETING"] = "hello"
	h := start(t, d, cfg)
	var stdout, stderr syncBuffer
	s, err := d.ExecStream(context.Background(), h, drivers.ExecStreamRequest{
		Command: []string{"/bin/sh", "-c", `echo "$GREETING $(pwd)"; tr a-z A-Z; echo oops >&2; exit 3`},
		Stdout:  &stdout, Stderr: &stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(s.Stdin(), "piped input\n"); err != nil {
		t.Fatal(err)
	}
	if err := s.Stdin().Close(); err != nil {
		t.Fatal(err)
	}
	if code := waitSession(t, s); code != 3 {
		t.Fatalf("exit code %d, want 3", code)
	}
	if want := "hello " + cfg.TaskDir + "\nPIPED INPUT\n"; stdout.String() != want {
		t.Fatalf("stdout %q, want %q", stdout.String(), want)
	}
	if stderr.String() != "oops\n" {
		t.Fatalf("stderr %q", stderr.String())
	}
}

// On a terminal, the command sees a tty of the requested size, a resize
// reaches it, what is typed is echoed and read, and its exit code is
// returned.
func TestExecStreamTTY(t *testing.T) {
	d := New(Options{})
	h := start(t, d, newTask(t, "web", "/bin/sleep", "60"))
	var out syncBuffer
	s, err := d.ExecStream(context.Background(), h, drivers.ExecStreamRequest{
		Command: []string{"/bin/sh"}, TTY: true, Size: drivers.TerminalSize{Height: 40, Width: 100},
		Stdout: &out, Stderr: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	in := s.Stdin()
	if _, err := io.WriteString(in, "test -t 0 && echo is-a-tty; stty size\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the terminal's size", func() bool { return strings.Contains(out.String(), "40 100") })
	if !strings.Contains(out.String(), "is-a-tty") {
		t.Fatalf("output %q", out.String())
	}
	if err := s.Resize(drivers.TerminalSize{Height: 25, Width: 80}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(in, "stty size; exit 7\n"); err != nil {
		t.Fatal(err)
	}
	if code := waitSession(t, s); code != 7 {
		t.Fatalf("exit code %d, want 7\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "25 80") {
		t.Fatalf("resize not seen: %q", out.String())
	}
}

// Closing a terminal's input is end of file for the command reading it.
func TestExecStreamTTYEndOfFile(t *testing.T) {
	d := New(Options{})
	h := start(t, d, newTask(t, "web", "/bin/sleep", "60"))
	var out syncBuffer
	s, err := d.ExecStream(context.Background(), h, drivers.ExecStreamRequest{
		Command: []string{"/bin/cat"}, TTY: true, Stdout: &out, Stderr: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(s.Stdin(), "line\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the echo", func() bool { return strings.Count(out.String(), "line") >= 2 })
	if err := s.Stdin().Close(); err != nil {
		t.Fatal(err)
	}
	if code := waitSession(t, s); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// A background process the command leaves holding its output is killed
// with it, so that the session ends when the command does; Kill ends a
// command that would run on.
func TestExecStreamEndsWithTheCommand(t *testing.T) {
	d := New(Options{})
	h := start(t, d, newTask(t, "web", "/bin/sleep", "60"))
	var out syncBuffer
	s, err := d.ExecStream(context.Background(), h, drivers.ExecStreamRequest{
		Command: []string{"/bin/sh", "-c", "sleep 300 & echo started"}, Stdout: &out, Stderr: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if code := waitSession(t, s); code != 0 || out.String() != "started\n" {
		t.Fatalf("exit %d output %q", code, out.String())
	}

	s, err = d.ExecStream(context.Background(), h, drivers.ExecStreamRequest{
		Command: []string{"/bin/sleep", "300"}, Stdout: io.Discard, Stderr: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if code := waitSession(t, s); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("killed command exit code %d", code)
	}

	// Ending the context kills it too.
	ctx, cancel := context.WithCancel(context.Background())
	s, err = d.ExecStream(ctx, h, drivers.ExecStreamRequest{
		Command: []string{"/bin/sleep", "300"}, TTY: true, Stdout: io.Discard, Stderr: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if code := waitSession(t, s); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("cancelled command exit code %d", code)
	}
}

// A missing command, an empty one, or a task that is not running: an
// error, and nothing runs.
func TestExecStreamRefuses(t *testing.T) {
	d := New(Options{})
	cfg := newTask(t, "web", "/bin/sh", "-c", "exit 0")
	h := start(t, d, cfg)
	live := start(t, d, newTask(t, "live", "/bin/sleep", "60"))
	req := func(cmd ...string) drivers.ExecStreamRequest {
		return drivers.ExecStreamRequest{Command: cmd, Stdout: io.Discard, Stderr: io.Discard}
	}
	if _, err := d.ExecStream(context.Background(), live, req("no-such-command-here")); !errors.Is(err, drivers.ErrExecStart) {
		t.Fatalf("missing command: %v", err)
	}
	if _, err := d.ExecStream(context.Background(), live, req()); !errors.Is(err, drivers.ErrInvalidConfig) {
		t.Fatalf("empty command: %v", err)
	}
	waitExit(t, d, h)
	marker := filepath.Join(t.TempDir(), "ran")
	if _, err := d.ExecStream(context.Background(), h, req("/bin/touch", marker)); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("exec into an exited task: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran in an exited task")
	}
}

// signalTrap starts a task that traps signal sig (as the shell names it,
// "USR1"), sends it once the trap is set, and waits for the trap to run.
func signalTrap(t *testing.T, d *Driver, sig string) *drivers.TaskHandle {
	t.Helper()
	cfg := newTask(t, "web", "/bin/sh", "-c", `trap 'echo got >> signalled' `+sig+`; touch ready; while :; do sleep 0.05; done`)
	h := start(t, d, cfg)
	waitFor(t, "the trap to be set", func() bool {
		_, err := os.Stat(filepath.Join(cfg.TaskDir, "ready"))
		return err == nil
	})
	if err := d.Signal(h, "SIG"+sig); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the trap to run", func() bool {
		b, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "signalled"))
		return strings.Contains(string(b), "got")
	})
	return h
}

// Signal reaches the task's process, which may trap it; an unknown
// signal or an exited task is an error.
func TestSignalTask(t *testing.T) {
	d := New(Options{})
	h := signalTrap(t, d, "USR1")
	if err := d.Signal(h, "SIGNOPE"); !errors.Is(err, drivers.ErrInvalidConfig) {
		t.Fatalf("unknown signal: %v", err)
	}
	if err := d.Signal(h, "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	waitExit(t, d, h)
	if err := d.Signal(h, "SIGUSR1"); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("signal to an exited task: %v", err)
	}
}

// An agent started with SIGHUP ignored (under nohup) starts its tasks
// with SIGHUP's default action: the task's trap on it runs. Before, the
// ignored disposition passed to every task across exec, and a shell's
// trap on a signal ignored at its start does nothing.
func TestTaskCanTrapSignalTheAgentIgnores(t *testing.T) {
	signal.Ignore(syscall.SIGHUP)
	t.Cleanup(func() { signal.Reset(syscall.SIGHUP) })
	d := New(Options{})
	h := signalTrap(t, d, "HUP")
	if err := d.Signal(h, "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	waitExit(t, d, h)
}
