package rawexec

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// testTimeout bounds every wait in these tests.
const testTimeout = 20 * time.Second

func newTask(t *testing.T, name string, cmd string, args ...string) *drivers.TaskConfig {
	t.Helper()
	root := t.TempDir()
	taskDir := filepath.Join(root, name)
	logs := filepath.Join(root, "alloc", "logs")
	for _, d := range []string{taskDir, logs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = s
	}
	return &drivers.TaskConfig{
		AllocID: "alloc-" + name, TaskName: name, TaskDir: taskDir,
		Env:         map[string]string{"PATH": os.Getenv("PATH")},
		Config:      map[string]any{"command": cmd, "args": a},
		StdoutPath:  filepath.Join(logs, name+".stdout"),
		StderrPath:  filepath.Join(logs, name+".stderr"),
		LogConfig:   *structs.DefaultLogConfig(),
		KillTimeout: time.Second, KillSignal: "SIGTERM",
	}
}

func waitExit(t *testing.T, d drivers.Driver, h *drivers.TaskHandle) drivers.ExitResult {
	t.Helper()
	ch, err := d.Wait(h)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ch:
		return r
	case <-time.After(testTimeout):
		t.Fatal("task did not exit")
	}
	return drivers.ExitResult{}
}

func start(t *testing.T, d *Driver, cfg *drivers.TaskConfig) *drivers.TaskHandle {
	t.Helper()
	h, err := d.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Destroy(h) })
	return h
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExitCodes(t *testing.T) {
	d := New(Options{})
	for _, tc := range []struct {
		script string
		want   drivers.ExitResult
	}{
		{"exit 0", drivers.ExitResult{}},
		{"exit 3", drivers.ExitResult{ExitCode: 3}},
		{"kill -USR1 $$", drivers.ExitResult{ExitCode: 128 + int(syscall.SIGUSR1), Signal: int(syscall.SIGUSR1)}},
	} {
		h := start(t, d, newTask(t, "t", "/bin/sh", "-c", tc.script))
		got := waitExit(t, d, h)
		if got.ExitCode != tc.want.ExitCode || got.Signal != tc.want.Signal || got.Unknown || got.Err != nil {
			t.Errorf("%q: got %+v, want %+v", tc.script, got, tc.want)
		}
		if got.Successful() != (tc.want.ExitCode == 0) {
			t.Errorf("%q: Successful() = %v", tc.script, got.Successful())
		}
	}
}

func TestEnvArgsWorkdirAndLogs(t *testing.T) {
	d := New(Options{})
	cfg := newTask(t, "web", "/bin/sh", "-c", `echo "$GREETING" "$1"; pwd; echo oops >&2`, "sh", "first arg")
	cfg.Env["GREETING"] = "hello"
	h := start(t, d, cfg)
	if r := waitExit(t, d, h); !r.Successful() {
		t.Fatalf("exit %+v", r)
	}
	out := readFile(t, cfg.StdoutPath+".0")
	if want := "hello first arg\n" + cfg.TaskDir + "\n"; out != want {
		t.Fatalf("stdout = %q, want %q", out, want)
	}
	if got := readFile(t, cfg.StderrPath+".0"); got != "oops\n" {
		t.Fatalf("stderr = %q", got)
	}
}

func TestCommandLookup(t *testing.T) {
	d := New(Options{})
	// A relative command runs from the task dir.
	cfg := newTask(t, "rel", "local/run.sh")
	if err := os.MkdirAll(filepath.Join(cfg.TaskDir, "local"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.TaskDir, "local", "run.sh"), []byte("#!/bin/sh\nexit 4\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := waitExit(t, d, start(t, d, cfg)); r.ExitCode != 4 {
		t.Fatalf("relative command: %+v", r)
	}
	// A bare name is found in the task's own PATH first.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "true"), []byte("#!/bin/sh\nexit 5\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg = newTask(t, "path", "true")
	cfg.Env["PATH"] = bin + ":" + cfg.Env["PATH"]
	if r := waitExit(t, d, start(t, d, cfg)); r.ExitCode != 5 {
		t.Fatalf("task PATH: %+v", r)
	}
}

func TestStartErrors(t *testing.T) {
	d := New(Options{})
	cfg := newTask(t, "bad", "/nonexistent/binary")
	if _, err := d.Start(context.Background(), cfg); !errors.Is(err, drivers.ErrStartFailed) {
		t.Fatalf("missing binary: err = %v", err)
	}
	cfg.Config = map[string]any{"args": []any{"x"}}
	if _, err := d.Start(context.Background(), cfg); !errors.Is(err, drivers.ErrInvalidConfig) {
		t.Fatalf("missing command: err = %v", err)
	}
	cfg.Config = map[string]any{"command": "/bin/true", "args": []any{1}}
	if _, err := d.Start(context.Background(), cfg); !errors.Is(err, drivers.ErrInvalidConfig) {
		t.Fatalf("bad args: err = %v", err)
	}
}

// procDead reports whether pid is gone or a zombie waiting for a reaper.
func procDead(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	r := strings.LastIndexByte(s, ')')
	return r < 0 || strings.HasPrefix(strings.TrimSpace(s[r+1:]), "Z")
}

// waitDead waits (bounded) for pid to die: a signal is delivered
// asynchronously.
func waitDead(t *testing.T, pid int) bool {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !procDead(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// waitFile waits for a file to have content and returns it.
func waitFile(t *testing.T, p string) string {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(p); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never written", p)
	return ""
}

func TestStopKillsProcessTree(t *testing.T) {
	d := New(Options{})
	cfg := newTask(t, "tree", "/bin/sh", "-c", `sleep 300 & echo $! > child.pid; sleep 300`)
	h := start(t, d, cfg)
	child, _ := strconv.Atoi(waitFile(t, filepath.Join(cfg.TaskDir, "child.pid")))
	if child <= 0 || procDead(child) {
		t.Fatalf("grandchild %d not running", child)
	}
	if err := d.Stop(h, 5*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	r := waitExit(t, d, h)
	if r.Signal != int(syscall.SIGTERM) {
		t.Fatalf("exit %+v, want SIGTERM", r)
	}
	if !waitDead(t, child) {
		t.Fatalf("grandchild %d survived Stop", child)
	}
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	d := New(Options{})
	// The shell and its children ignore SIGTERM; only SIGKILL ends them.
	cfg := newTask(t, "stubborn", "/bin/sh", "-c",
		`trap "" TERM; sleep 300 & echo $! > child.pid; while :; do sleep 1; done`)
	h := start(t, d, cfg)
	child, _ := strconv.Atoi(waitFile(t, filepath.Join(cfg.TaskDir, "child.pid")))
	if err := d.Stop(h, 200*time.Millisecond, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
	r := waitExit(t, d, h)
	if r.Signal != int(syscall.SIGKILL) {
		t.Fatalf("exit %+v, want SIGKILL", r)
	}
	if !waitDead(t, child) {
		t.Fatalf("grandchild %d survived SIGKILL", child)
	}
}

func TestLeftoversKilledWhenLeaderExits(t *testing.T) {
	d := New(Options{})
	cfg := newTask(t, "leak", "/bin/sh", "-c", `sleep 300 & echo $! > child.pid; exit 0`)
	h := start(t, d, cfg)
	waitExit(t, d, h)
	child, _ := strconv.Atoi(waitFile(t, filepath.Join(cfg.TaskDir, "child.pid")))
	if !waitDead(t, child) {
		t.Fatalf("background child %d outlived its task", child)
	}
}

func TestLogsRotateWhileRunning(t *testing.T) {
	d := New(Options{LogCheckInterval: 10 * time.Millisecond})
	cfg := newTask(t, "chatty", "/bin/sh", "-c", `head -c 1200000 /dev/zero; echo done > written; sleep 300`)
	cfg.LogConfig = structs.LogConfig{MaxFiles: 2, MaxFileSizeMB: 1}
	h := start(t, d, cfg)
	waitFile(t, filepath.Join(cfg.TaskDir, "written"))
	deadline := time.Now().Add(testTimeout)
	for {
		// Rotation is done once the live file has moved to .1 and the
		// copy has taken the name .0.
		_, err1 := os.Stat(cfg.StdoutPath + ".1")
		_, err0 := os.Stat(cfg.StdoutPath + ".0")
		if err1 == nil && err0 == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("stdout never rotated")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A check may run mid-write, so the split between the files varies;
	// the archive holds at least the limit, and nothing is duplicated.
	a, err := os.Stat(cfg.StdoutPath + ".0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := os.Stat(cfg.StdoutPath + ".1")
	if err != nil {
		t.Fatal(err)
	}
	if a.Size() < 1<<20 || a.Size()+l.Size() > 1200000 {
		t.Fatalf("archived %d bytes, live %d bytes", a.Size(), l.Size())
	}
	if err := d.Stop(h, time.Second, ""); err != nil {
		t.Fatal(err)
	}
}

func TestRecoverInFreshDriver(t *testing.T) {
	d1 := New(Options{})
	cfg := newTask(t, "survivor", "/bin/sh", "-c", `echo up; sleep 300`)
	h := start(t, d1, cfg)
	// The client persists the handle and restarts: a new driver instance
	// gets the handle back from JSON.
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var h2 drivers.TaskHandle
	if err := json.Unmarshal(b, &h2); err != nil {
		t.Fatal(err)
	}
	d2 := New(Options{})
	if err := d2.Recover(&h2); err != nil {
		t.Fatal(err)
	}
	var st handleState
	if err := h2.GetDriverState(&st); err != nil {
		t.Fatal(err)
	}
	if procDead(st.PID) {
		t.Fatal("Recover lost the process")
	}
	ch, err := d2.Wait(&h2)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ch:
		t.Fatalf("re-attached task reported exit %+v while running", r)
	default:
	}
	if err := d2.Stop(&h2, 5*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	// The exit status is known only if the re-attached driver saw the
	// zombie before the parent reaped it; either way it must not lie.
	r := waitExit(t, d2, &h2)
	if !r.Unknown && r.Signal != int(syscall.SIGTERM) {
		t.Fatalf("re-attached exit %+v: neither Unknown nor SIGTERM", r)
	}
	t.Logf("re-attached exit: %+v", r)
	if orig := waitExit(t, d1, h); orig.Signal != int(syscall.SIGTERM) {
		t.Fatalf("parent saw %+v", orig)
	}
	// Once the process is gone the handle no longer recovers.
	d3 := New(Options{})
	if err := d3.Recover(&h2); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("Recover of a dead task: %v", err)
	}
}

func TestRecoverRejectsReusedPID(t *testing.T) {
	d1 := New(Options{})
	h := start(t, d1, newTask(t, "p", "/bin/sleep", "300"))
	var st handleState
	if err := h.GetDriverState(&st); err != nil {
		t.Fatal(err)
	}
	st.StartTicks++ // same PID, another start time: another process
	if err := h.SetDriverState(st); err != nil {
		t.Fatal(err)
	}
	if err := New(Options{}).Recover(h); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("Recover with a wrong start time: %v", err)
	}
}
