package rawexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers"
)

// TestExecInTaskEnvironment: a command run in a task sees the task's
// environment and working directory, finds a program the task's PATH
// names, and reports its output and exit code.
func TestExecInTaskEnvironment(t *testing.T) {
	d := New(Options{})
	cfg := newTask(t, "web", "/bin/sleep", "60")
	bin := filepath.Join(cfg.TaskDir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "probe"), []byte("#!/bin/sh\necho \"probe $GREETING $(pwd)\"\nexit \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.Env["GREETING"] = "hello"
	cfg.Env["PATH"] = bin + ":" + cfg.Env["PATH"]
	h := start(t, d, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for _, code := range []int{0, 1, 2} {
		out, got, err := d.Exec(ctx, h, []string{"probe", strconv.Itoa(code)})
		if err != nil {
			t.Fatal(err)
		}
		if want := "probe hello " + cfg.TaskDir + "\n"; string(out) != want || got != code {
			t.Fatalf("exit %d: output %q code %d, want %q %d", code, out, got, want, code)
		}
	}
	if _, _, err := d.Exec(ctx, h, []string{"no-such-command-here"}); err == nil {
		t.Fatal("a missing command ran")
	}
	out, _, err := d.Exec(ctx, h, []string{"/bin/sh", "-c", "head -c 10000 /dev/zero | tr '\\0' x; echo done >&2"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), strings.Repeat("x", drivers.ExecOutputLimit)) || !strings.HasSuffix(string(out), "[output truncated]") {
		t.Fatalf("output of %d bytes not capped: ...%q", len(out), out[max(0, len(out)-40):])
	}
}

// TestExecTimeoutKillsGroup: a command still running when its context
// ends is killed with every process it started, and the error says so.
func TestExecTimeoutKillsGroup(t *testing.T) {
	d := New(Options{})
	cfg := newTask(t, "web", "/bin/sleep", "60")
	h := start(t, d, cfg)
	pidFile := filepath.Join(cfg.TaskDir, "child.pid")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, _, err := d.Exec(ctx, h, []string{"/bin/sh", "-c", "sleep 60 & echo $! > " + pidFile + "; wait"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the deadline", err)
	}
	b, rerr := os.ReadFile(pidFile)
	if rerr != nil {
		t.Fatal(rerr)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(testTimeout)
	for syscall.Kill(pid, 0) == nil {
		if _, zombie, err := procStat(pid); err != nil || zombie {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command's child %d still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestExecNeedsRunningTask: no command runs in a task that is gone or a
// handle the driver does not know.
func TestExecNeedsRunningTask(t *testing.T) {
	d := New(Options{})
	cfg := newTask(t, "web", "/bin/true")
	h := start(t, d, cfg)
	waitExit(t, d, h)
	ctx := context.Background()
	if _, _, err := d.Exec(ctx, h, []string{"/bin/true"}); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("exec in an exited task: %v", err)
	}
	other := &drivers.TaskHandle{Driver: Name, Config: &drivers.TaskConfig{AllocID: "x", TaskName: "y"}}
	if _, _, err := d.Exec(ctx, other, []string{"/bin/true"}); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("exec in an unknown task: %v", err)
	}
}
