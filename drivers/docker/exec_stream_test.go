package docker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers"
)

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func waitExec(t *testing.T, s drivers.ExecSession) int {
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
		t.Fatal("the exec did not end")
		return -1
	}
}

// docker exec without a terminal: stdin piped to end of file, stdout and
// stderr apart, the container's environment, the exit code.
func TestExecStreamInContainer(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	h := start(t, d, e.task("web", "sleep 300"))
	var stdout, stderr lockedBuffer
	s, err := d.ExecStream(context.Background(), h, drivers.ExecStreamRequest{
		Command: []string{"/bin/sh", "-c", `echo "dir=$NOMAD_TASK_DIR"; cat; echo oops >&2; exit 4`},
		Stdout:  &stdout, Stderr: &stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(s.Stdin(), "from stdin\n"); err != nil {
		t.Fatal(err)
	}
	if err := s.Stdin().Close(); err != nil {
		t.Fatal(err)
	}
	if code := waitExec(t, s); code != 4 {
		t.Fatalf("exit code %d, want 4", code)
	}
	if want := "dir=" + ContainerTaskDir + "\nfrom stdin\n"; stdout.String() != want {
		t.Fatalf("stdout %q, want %q", stdout.String(), want)
	}
	if stderr.String() != "oops\n" {
		t.Fatalf("stderr %q", stderr.String())
	}
}

// docker exec on a terminal: a tty of the requested size, resized, and
// the exit code; a missing command exits 126 or 127 with the daemon's
// message; an exited task refuses.
func TestExecStreamTTYInContainer(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	h := start(t, d, e.task("web", "sleep 300"))
	var out lockedBuffer
	s, err := d.ExecStream(context.Background(), h, drivers.ExecStreamRequest{
		Command: []string{"/bin/sh"}, TTY: true, Size: drivers.TerminalSize{Height: 30, Width: 90},
		Stdout: &out, Stderr: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(s.Stdin(), "test -t 0 && echo is-a-tty\n"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the tty answer", func() error {
		if !strings.Contains(out.String(), "is-a-tty\r\n") {
			return errors.New(out.String())
		}
		return nil
	})
	if err := s.Resize(drivers.TerminalSize{Height: 20, Width: 70}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(s.Stdin(), "exit 5\n"); err != nil {
		t.Fatal(err)
	}
	if code := waitExec(t, s); code != 5 {
		t.Fatalf("exit code %d, want 5: %q", code, out.String())
	}

	var missing lockedBuffer
	s, err = d.ExecStream(context.Background(), h, drivers.ExecStreamRequest{
		Command: []string{"no-such-command"}, Stdout: &missing, Stderr: &missing,
	})
	if err != nil {
		t.Fatal(err)
	}
	if code := waitExec(t, s); code != 126 && code != 127 {
		t.Fatalf("missing command: exit code %d: %q", code, missing.String())
	}

	if err := d.Signal(h, "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	waitExit(t, d, h)
	if _, err := d.ExecStream(context.Background(), h, drivers.ExecStreamRequest{
		Command: []string{"true"}, Stdout: io.Discard, Stderr: io.Discard,
	}); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("exec into an exited task: %v", err)
	}
}
