package exec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/exec/exectest"
)

// The test binary is re-executed as each task's init.
func init() { Init() }

// testTimeout bounds every wait in these tests.
const testTimeout = 30 * time.Second

const busybox = exectest.Busybox

// requireIsolation skips the test where exec cannot run (not root, no
// cgroups, no busybox), unless DROVER_REQUIRE_ISOLATION=1 makes that a
// failure.
func requireIsolation(t *testing.T) {
	t.Helper()
	exectest.Require(t, Unsupported, exectest.NoBusybox)
}

func newDriver(t *testing.T, stateDir string) *Driver {
	t.Helper()
	d, err := New(Options{StateDir: stateDir, LogCheckInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// newTask lays out an allocation directory as the client does and
// returns the config of a task running busybox sh -c script.
func newTask(t testing.TB, script string) *drivers.TaskConfig {
	t.Helper()
	return exectest.NewTask(t, map[string]any{"command": busybox, "args": []any{"sh", "-c", script}})
}

func start(t *testing.T, d *Driver, cfg *drivers.TaskConfig) *drivers.TaskHandle {
	t.Helper()
	return exectest.Start(t, d, cfg, testTimeout)
}

func waitExit(t *testing.T, d *Driver, h *drivers.TaskHandle) drivers.ExitResult {
	t.Helper()
	return exectest.WaitExit(t, d, h, testTimeout)
}

func stdout(t *testing.T, cfg *drivers.TaskConfig) string {
	t.Helper()
	b, err := os.ReadFile(cfg.StdoutPath + ".0")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitOutput waits until the task's stdout holds want, reading it as the
// driver's log watcher writes it (bounded by testTimeout).
func waitOutput(t *testing.T, cfg *drivers.TaskConfig, want string) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(cfg.StdoutPath + ".0"); strings.Contains(string(b), want) {
			return
		}
		<-tick.C
	}
	b, _ := os.ReadFile(cfg.StdoutPath + ".0")
	t.Fatalf("stdout never held %q: %q", want, b)
}

func TestFingerprint(t *testing.T) {
	d := newDriver(t, t.TempDir())
	fp := d.Fingerprint()
	if reason := Unsupported(); reason != "" {
		if !fp.Undetected || fp.HealthDescription != reason {
			t.Fatalf("unsupported host fingerprinted %+v", fp)
		}
		return
	}
	if fp.Attributes["driver.exec"] != "1" || !fp.Healthy {
		t.Fatalf("fingerprint %+v", fp)
	}
}

// TestIsolation: the task sees its own root (the task directory with
// the host's bin, etc, usr…), not a host file outside it; only its own
// processes, itself PID 1; and runs as nobody.
func TestIsolation(t *testing.T) {
	requireIsolation(t)
	d := newDriver(t, t.TempDir())
	secretDir := t.TempDir()
	if err := os.Chmod(secretDir, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(secretDir, "marker")
	if err := os.WriteFile(marker, []byte("host secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := newTask(t, `id -u; id -g; echo pid=$$; `+
		`cat `+marker+` 2>/dev/null || echo marker-unreadable; `+
		`echo procs=$(ls /proc | grep -E '^[0-9]+$' | tr '\n' ' '); `+
		`echo root=$(ls / | tr '\n' ' '); echo host=$(hostname); `+
		`echo hi > /local/out && echo local-writable; echo x > /bin/x 2>/dev/null || echo bin-readonly; `+
		`echo d > /alloc/data/f && echo data-writable; echo s > /secrets/s && echo secrets-writable`)
	h := start(t, d, cfg)
	if r := waitExit(t, d, h); !r.Successful() {
		t.Fatalf("exit %+v, stdout %q", r, stdout(t, cfg))
	}
	out := stdout(t, cfg)
	lines := strings.Split(out, "\n")
	if len(lines) < 2 || lines[0] != "65534" {
		t.Fatalf("task is not nobody: %q", out)
	}
	for _, want := range []string{"pid=1\n", "marker-unreadable\n", "local-writable\n", "bin-readonly\n", "host=task\n", "data-writable\n", "secrets-writable\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q: %q", want, out)
		}
	}
	if strings.Contains(out, "host secret") {
		t.Fatalf("the task read a host file outside its root: %q", out)
	}
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "procs="); ok {
			// Its shell (1) and the commands of the pipeline that lists
			// them: a handful of low PIDs, none of the host's.
			pids := strings.Fields(rest)
			if len(pids) == 0 || len(pids) > 8 || pids[0] != "1" {
				t.Errorf("the task sees other processes than its own: %q", l)
			}
			for _, p := range pids {
				if n, _ := strconv.Atoi(p); n > 64 || n == os.Getpid() {
					t.Errorf("the task sees process %s, not only its own: %q", p, l)
				}
			}
		}
		if rest, ok := strings.CutPrefix(l, "root="); ok {
			for _, want := range []string{"alloc", "local", "secrets", "tmp", "bin", "etc", "usr", "proc", "dev"} {
				if !strings.Contains(" "+rest+" ", " "+want+" ") {
					t.Errorf("the task's root lacks %s: %q", want, rest)
				}
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(cfg.TaskDir, "local", "out")); err != nil || string(b) != "hi\n" {
		t.Errorf("local/out on the host: %q %v", b, err)
	}
}

func TestExitCodeAndSignals(t *testing.T) {
	requireIsolation(t)
	d := newDriver(t, t.TempDir())

	cfg := newTask(t, "exit 7")
	if r := waitExit(t, d, start(t, d, cfg)); r.ExitCode != 7 || r.Signal != 0 || r.Unknown || r.OOMKilled {
		t.Fatalf("exit 7: %+v", r)
	}

	// A trap on SIGTERM: Stop's signal reaches PID 1, which handles it.
	cfg = newTask(t, `trap 'echo got-term; exit 3' TERM; echo ready; while :; do sleep 1 & wait; done`)
	h := start(t, d, cfg)
	waitOutput(t, cfg, "ready")
	if err := d.Stop(h, testTimeout, ""); err != nil {
		t.Fatal(err)
	}
	if r := waitExit(t, d, h); r.ExitCode != 3 || r.Signal != 0 {
		t.Fatalf("trapped TERM: %+v", r)
	}
	waitOutput(t, cfg, "got-term")

	// alloc signal: a USR1 the task traps.
	cfg = newTask(t, `trap 'echo got-usr1; exit 4' USR1; echo ready; while :; do sleep 1 & wait; done`)
	h = start(t, d, cfg)
	waitOutput(t, cfg, "ready")
	if err := d.Signal(h, "SIGUSR1"); err != nil {
		t.Fatal(err)
	}
	if r := waitExit(t, d, h); r.ExitCode != 4 {
		t.Fatalf("USR1: %+v", r)
	}

	// PID 1 without a handler ignores SIGTERM: killed at the timeout.
	cfg = newTask(t, `exec sleep 1000`)
	h = start(t, d, cfg)
	if err := d.Stop(h, 100*time.Millisecond, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
	if r := waitExit(t, d, h); r.Signal != int(syscall.SIGKILL) || r.ExitCode != 137 {
		t.Fatalf("killed: %+v", r)
	}
	if err := d.Signal(h, "SIGHUP"); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("signal to an exited task: %v", err)
	}
}

// TestOOMKill: a task past its memory limit is killed by the kernel's
// OOM killer and reported so.
func TestOOMKill(t *testing.T) {
	requireIsolation(t)
	d := newDriver(t, t.TempDir())
	cfg := newTask(t, `echo start; exec dd if=/dev/zero of=/dev/null bs=256M count=1`)
	cfg.Resources.Memory.MemoryMB = 48
	r := waitExit(t, d, start(t, d, cfg))
	if !r.OOMKilled || r.ExitCode != 137 || r.Signal != int(syscall.SIGKILL) {
		t.Fatalf("not reported as an OOM kill: %+v, stdout %q", r, stdout(t, cfg))
	}
	// A child killed, the init going on: its own exit, marked OOM.
	cfg = newTask(t, `dd if=/dev/zero of=/dev/null bs=256M count=1; echo survived`)
	cfg.Resources.Memory.MemoryMB = 48
	r = waitExit(t, d, start(t, d, cfg))
	if !r.OOMKilled || r.ExitCode != 0 || !strings.Contains(stdout(t, cfg), "survived") {
		t.Fatalf("a child's OOM kill: %+v, stdout %q", r, stdout(t, cfg))
	}
}

func TestStartErrors(t *testing.T) {
	requireIsolation(t)
	d := newDriver(t, t.TempDir())
	cfg := newTask(t, "true")
	cfg.Config = map[string]any{"command": "/no/such/command"}
	if _, err := d.Start(context.Background(), cfg); !errors.Is(err, drivers.ErrStartFailed) || !strings.Contains(err.Error(), "/no/such/command") {
		t.Fatalf("missing command: %v", err)
	}
	cfg = newTask(t, "true")
	cfg.User = "no-such-user-here"
	if _, err := d.Start(context.Background(), cfg); !errors.Is(err, drivers.ErrStartFailed) || !strings.Contains(err.Error(), "no-such-user-here") {
		t.Fatalf("missing user: %v", err)
	}
	cfg = newTask(t, "true")
	cfg.User = "root"
	if _, err := d.Start(context.Background(), cfg); !errors.Is(err, drivers.ErrStartFailed) || !strings.Contains(err.Error(), "denies") {
		t.Fatalf("root: %v", err)
	}
	cfg = newTask(t, "true")
	cfg.Config["cap_add"] = []any{"sys_admin"}
	if _, err := d.Start(context.Background(), cfg); !errors.Is(err, drivers.ErrInvalidConfig) {
		t.Fatalf("cap not allowed: %v", err)
	}
	entries, _ := os.ReadDir(d.stateDir)
	if len(entries) != 0 {
		t.Fatalf("failed starts left state behind: %v", entries)
	}
}

// TestRecover: a driver created anew (a restarted client) re-attaches to
// a running task, measures it, and stops it.
func TestRecover(t *testing.T) {
	requireIsolation(t)
	state := t.TempDir()
	d1 := newDriver(t, state)
	cfg := newTask(t, `trap 'exit 5' TERM; echo ready; while :; do sleep 1 & wait; done`)
	h := start(t, d1, cfg)
	waitOutput(t, cfg, "ready")

	d2 := newDriver(t, state)
	if err := d2.Recover(h); err != nil {
		t.Fatal(err)
	}
	u, err := d2.Stats(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if u.Memory.Usage == 0 || len(u.CPU.Measured) == 0 {
		t.Fatalf("stats %+v", u)
	}
	out, code, err := d2.Exec(context.Background(), h, []string{busybox, "sh", "-c", "id -u; ls /"})
	if err != nil || code != 0 || !strings.HasPrefix(string(out), "65534\n") || !strings.Contains(string(out), "secrets") {
		t.Fatalf("exec in the re-attached task: %q %d %v", out, code, err)
	}
	if err := d2.Stop(h, testTimeout, ""); err != nil {
		t.Fatal(err)
	}
	r := waitExit(t, d2, h)
	if !r.Unknown && r.ExitCode != 5 {
		t.Fatalf("re-attached exit %+v", r)
	}
	// The first driver, whose child it was, saw it exit 5.
	if r := waitExit(t, d1, h); r.ExitCode != 5 {
		t.Fatalf("exit seen by the parent: %+v", r)
	}
	// Gone: recovering again finds nothing.
	d3 := newDriver(t, state)
	if err := d3.Recover(h); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("recover of an exited task: %v", err)
	}
}

func TestExecStreamTTY(t *testing.T) {
	requireIsolation(t)
	d := newDriver(t, t.TempDir())
	cfg := newTask(t, `echo ready; while :; do sleep 1 & wait; done`)
	h := start(t, d, cfg)
	var out syncBuffer
	s, err := d.ExecStream(context.Background(), h, drivers.ExecStreamRequest{
		Command: []string{busybox, "sh", "-c", "tty; echo done"}, TTY: true, Size: drivers.TerminalSize{Height: 30, Width: 100},
		Stdout: &out, Stderr: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() { c, _ := s.Wait(); done <- c }()
	select {
	case c := <-done:
		if c != 0 || !strings.Contains(out.String(), "/dev/pts/") || !strings.Contains(out.String(), "done") {
			t.Fatalf("tty exec: %d %q", c, out.String())
		}
	case <-time.After(testTimeout):
		s.Kill()
		t.Fatal("exec did not end")
	}
	if _, err := d.ExecStream(context.Background(), h, drivers.ExecStreamRequest{Command: []string{"/no/such"}, Stdout: &out, Stderr: &out}); !errors.Is(err, drivers.ErrExecStart) {
		t.Fatalf("missing command: %v", err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

// TestExec: a script check's command runs inside the task, its output
// and exit code returned; one that cannot start is an error; a context
// that ends kills it.
func TestExec(t *testing.T) {
	requireIsolation(t)
	d := newDriver(t, t.TempDir())
	cfg := newTask(t, `echo ready; while :; do sleep 1 & wait; done`)
	h := start(t, d, cfg)
	out, code, err := d.Exec(context.Background(), h, []string{busybox, "sh", "-c", "echo $NOMAD_TASK_DIR; hostname; exit 3"})
	if err != nil || code != 3 || string(out) != "/local\ntask\n" {
		t.Fatalf("exec: %q %d %v", out, code, err)
	}
	if _, _, err := d.Exec(context.Background(), h, []string{"/no/such"}); !errors.Is(err, drivers.ErrExecStart) {
		t.Fatalf("missing command: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, _, err := d.Exec(ctx, h, []string{busybox, "sleep", "100"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("exec past its context: %v", err)
	}
}

// TestReapOrphans: a restarted client's driver removes the containers of
// allocations it no longer owns, running or not, and keeps the others.
func TestReapOrphans(t *testing.T) {
	requireIsolation(t)
	state := t.TempDir()
	d1 := newDriver(t, state)
	keep := newTask(t, `echo ready; while :; do sleep 1 & wait; done`)
	drop := newTask(t, `echo ready; while :; do sleep 1 & wait; done`)
	hk, hd := start(t, d1, keep), start(t, d1, drop)
	waitOutput(t, drop, "ready")

	d2 := newDriver(t, state)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	removed, err := d2.ReapOrphans(ctx, "node", func(allocID string) bool { return allocID == keep.AllocID })
	if err != nil || len(removed) != 1 || removed[0] != containerID(drop.AllocID, drop.TaskName) {
		t.Fatalf("reaped %v, %v", removed, err)
	}
	if r := waitExit(t, d1, hd); r.Signal != int(syscall.SIGKILL) {
		t.Fatalf("the orphan's exit: %+v", r)
	}
	if err := d2.Recover(hk); err != nil {
		t.Fatalf("the owned task: %v", err)
	}
	if err := d2.Recover(hd); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("the reaped task: %v", err)
	}
}

// TestCgroupLimits: the task's cgroup holds its memory limit and CPU
// weight.
func TestCgroupLimits(t *testing.T) {
	requireIsolation(t)
	d := newDriver(t, t.TempDir())
	cfg := newTask(t, `echo ready; while :; do sleep 1 & wait; done`)
	cfg.Resources.Memory.MemoryMB = 96
	cfg.Resources.Cpu.CpuShares = 300
	h := start(t, d, cfg)
	task, err := d.running(h)
	if err != nil {
		t.Fatal(err)
	}
	st, err := task.c.State()
	if err != nil {
		t.Fatal(err)
	}
	read := func(dir, file string) string {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	if CgroupMode() == "v2" {
		dir := st.CgroupPaths[""]
		if got := read(dir, "memory.max"); got != strconv.Itoa(96<<20) {
			t.Errorf("memory.max %s", got)
		}
		if got := read(dir, "cpu.weight"); got == "100" || got == "" {
			t.Errorf("cpu.weight %s, not the task's", got)
		}
		return
	}
	if got := read(st.CgroupPaths["memory"], "memory.limit_in_bytes"); got != strconv.Itoa(96<<20) {
		t.Errorf("memory.limit_in_bytes %s", got)
	}
	if got := read(st.CgroupPaths["cpu"], "cpu.shares"); got != "300" {
		t.Errorf("cpu.shares %s", got)
	}
}

// TestModesAndCaps: pid_mode "host" shares the host's PID namespace; the
// capabilities are allow_caps with cap_add and less cap_drop (read as
// root, whose capabilities the kernel keeps across exec).
func TestModesAndCaps(t *testing.T) {
	requireIsolation(t)
	d, err := New(Options{StateDir: t.TempDir(), AllowRoot: true, AllowCaps: []string{"kill", "chown", "net_raw"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := newTask(t, `echo pid=$$; grep -E '^Cap(Bnd|Eff)' /proc/self/status`)
	cfg.Config["pid_mode"] = "host"
	cfg.Config["cap_drop"] = []any{"chown"}
	cfg.User = "root"
	if r := waitExit(t, d, start(t, d, cfg)); !r.Successful() {
		t.Fatalf("exit %+v: %q", r, stdout(t, cfg))
	}
	out := stdout(t, cfg)
	if strings.Contains(out, "pid=1\n") {
		t.Errorf("pid_mode host: the task is PID 1 of a namespace of its own: %q", out)
	}
	// kill is bit 5, net_raw bit 13: 0x2020; chown (bit 0) dropped.
	for _, want := range []string{"CapBnd:\t0000000000002020", "CapEff:\t0000000000002020"} {
		if !strings.Contains(out, want) {
			t.Errorf("capabilities: want %q in %q", want, out)
		}
	}
	cfg = newTask(t, "true")
	cfg.Config["cap_add"] = []any{"sys_admin"}
	if _, err := d.Start(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "sys_admin") {
		t.Fatalf("cap_add beyond allow_caps: %v", err)
	}
}
