// Package rawexec is the raw_exec driver: it runs a task's command as a
// plain process of the client's user, with no isolation and no helper
// process. Each task leads its own process group, so that stopping it
// reaches every process it forked; its output goes straight to rotated
// log files (see logs.go for why).
package rawexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// Name is the driver's name.
const Name = structs.DriverRawExec

// DefaultLogCheckInterval is how often log files are checked for rotation.
const DefaultLogCheckInterval = time.Second

// Options tune the driver.
type Options struct {
	// LogCheckInterval is how often log sizes are checked (default 1s).
	LogCheckInterval time.Duration
	// Disabled reports the driver as not detected and refuses to start
	// tasks, as Nomad's raw_exec without enabled = true; tasks already
	// running are still recovered, stopped and destroyed.
	Disabled bool
}

// ErrDisabled: the driver is disabled on this client.
var ErrDisabled = errors.New(`raw_exec is disabled on this client: enable it in the client's agent configuration with plugin "raw_exec" { config { enabled = true } }`)

// Driver is the raw_exec driver. Create it with New.
type Driver struct {
	logEvery time.Duration
	disabled bool

	mu    sync.Mutex
	tasks map[string]*task
}

// New returns a raw_exec driver.
func New(o Options) *Driver {
	if o.LogCheckInterval <= 0 {
		o.LogCheckInterval = DefaultLogCheckInterval
	}
	defaultSignals()
	return &Driver{logEvery: o.LogCheckInterval, disabled: o.Disabled, tasks: make(map[string]*task)}
}

var (
	_ drivers.Driver         = (*Driver)(nil)
	_ drivers.ExecTaskDriver = (*Driver)(nil)
)

// handleState is raw_exec's part of a TaskHandle.
type handleState struct {
	PID        int
	StartTicks uint64
}

// task is one running (or finished) process group.
type task struct {
	pid   int
	cmd   *exec.Cmd // nil for a re-attached process
	watch *exitWatch
	exit  drivers.ExitNotifier
	logs  []*rotator

	mu     sync.Mutex
	exited bool // leader exited: its PID may be free for reuse
}

// Name returns "raw_exec".
func (d *Driver) Name() string { return Name }

// Fingerprint reports the driver as detected and healthy, or, disabled,
// as not detected ("disabled", as Nomad's).
func (d *Driver) Fingerprint() drivers.Fingerprint {
	if d.disabled {
		return drivers.Fingerprint{Undetected: true, HealthDescription: "disabled"}
	}
	return drivers.Fingerprint{
		Attributes:        map[string]string{"driver.raw_exec": "1"},
		Healthy:           true,
		HealthDescription: "Healthy",
	}
}

// Start runs the task's command in its own process group, with the task
// dir as working directory, the task env as its whole environment, and
// stdout/stderr appended to its log files.
func (d *Driver) Start(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: no task config", drivers.ErrInvalidConfig)
	}
	if d.disabled {
		return nil, fmt.Errorf("%w: %w", drivers.ErrStartFailed, ErrDisabled)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tc, err := parseConfig(cfg.Config)
	if err != nil {
		return nil, err
	}
	id := drivers.TaskID(cfg.AllocID, cfg.TaskName)
	d.mu.Lock()
	if old, ok := d.tasks[id]; ok {
		if _, done := old.exit.Result(); !done {
			d.mu.Unlock()
			return nil, fmt.Errorf("%w: task %s is already running", drivers.ErrStartFailed, id)
		}
	}
	d.mu.Unlock()

	stdout, stderr, logs, err := openLogs(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: opening logs: %w", drivers.ErrStartFailed, err)
	}
	cmd := &exec.Cmd{Path: lookPath(tc.Command, cfg.TaskDir, cfg.Env["PATH"]), Args: append([]string{tc.Command}, tc.Args...)}
	cmd.Dir = cfg.TaskDir
	cmd.Env = envList(cfg.Env)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = drivers.StartInNetNS(cfg.NetNSPath, cmd.Start)
	// The child holds its own copies of the log fds.
	stdout.Close()
	stderr.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", drivers.ErrStartFailed, err)
	}
	pid := cmd.Process.Pid
	t := &task{pid: pid, cmd: cmd, logs: logs}
	ticks, _, err := procStat(pid)
	if err == nil {
		t.watch, err = watchExit(pid, ticks)
	}
	if err != nil {
		// The child is ours and not yet reaped, so it must be there;
		// failing that, kill and reap it rather than leak it.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, fmt.Errorf("%w: watching pid %d: %w", drivers.ErrStartFailed, pid, err)
	}
	h := &drivers.TaskHandle{
		Version: drivers.HandleVersion, Driver: Name, Config: cfg, StartedAt: time.Now(),
	}
	if err := h.SetDriverState(handleState{PID: pid, StartTicks: ticks}); err != nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, err
	}
	d.track(id, t)
	return h, nil
}

// Recover re-attaches to the process a handle names, if it is still the
// same process (PID and start time). Its exit status is usually unknown:
// only a parent can wait for it, and the parent was the client that died.
// The driver reads it from /proc when it catches the process as a zombie
// before its new parent reaps it; otherwise the result says Unknown.
func (d *Driver) Recover(h *drivers.TaskHandle) error {
	if err := drivers.CheckHandle(h, Name); err != nil {
		return err
	}
	id := h.ID()
	d.mu.Lock()
	_, known := d.tasks[id]
	d.mu.Unlock()
	if known {
		return nil
	}
	var st handleState
	if err := h.GetDriverState(&st); err != nil {
		return fmt.Errorf("%w: %w", drivers.ErrInvalidConfig, err)
	}
	w, err := watchExit(st.PID, st.StartTicks)
	if errors.Is(err, errProcGone) {
		return fmt.Errorf("%w: pid %d of %s has exited", drivers.ErrTaskNotFound, st.PID, id)
	}
	if err != nil {
		return err
	}
	if !w.alive() {
		w.close()
		return fmt.Errorf("%w: pid %d of %s has exited", drivers.ErrTaskNotFound, st.PID, id)
	}
	stdout, stderr, logs, err := openLogs(h.Config)
	if err != nil {
		w.close()
		return fmt.Errorf("re-opening logs of %s: %w", id, err)
	}
	// The process holds its own fds; the client needs only the rotators.
	stdout.Close()
	stderr.Close()
	d.track(id, &task{pid: st.PID, watch: w, logs: logs})
	return nil
}

// track registers a task and starts its watcher goroutine, which rotates
// its logs until it exits, kills what is left of its group, and records
// the exit result.
func (d *Driver) track(id string, t *task) {
	d.mu.Lock()
	d.tasks[id] = t
	d.mu.Unlock()
	go t.run(d.logEvery)
}

func (t *task) run(logEvery time.Duration) {
	exited := make(chan struct{})
	go func() {
		t.watch.wait()
		close(exited)
	}()
	tick := time.NewTicker(logEvery)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-tick.C:
			t.rotate()
		case <-exited:
			waiting = false
		}
	}
	// The leader has exited. If it is our child it is not reaped yet, so
	// its PID (the group ID) cannot have been reused: kill the stragglers.
	// A re-attached leader may already have been reaped by its new parent;
	// the PID is then free, but reuse within this instant as a group ID
	// is unlikely enough to accept.
	res := drivers.ExitResult{Unknown: true}
	if t.cmd == nil {
		if ws, ok := zombieStatus(t.pid, t.watch.ticks); ok {
			res = waitStatusResult(ws)
		}
	}
	t.mu.Lock()
	_ = syscall.Kill(-t.pid, syscall.SIGKILL)
	t.exited = true
	t.mu.Unlock()
	if t.cmd != nil {
		res = exitResult(t.cmd.Wait())
	}
	t.watch.close()
	t.rotate()
	t.exit.Exit(res)
}

func (t *task) rotate() {
	for _, r := range t.logs {
		_, _ = r.check()
	}
}

// exitResult turns cmd.Wait's error into an exit result. A signalled
// process reports exit code 128+signal, as shells do.
func exitResult(err error) drivers.ExitResult {
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return drivers.ExitResult{ExitCode: -1, Err: err}
	}
	if ee == nil {
		return drivers.ExitResult{}
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok {
		return drivers.ExitResult{ExitCode: ee.ExitCode()}
	}
	return waitStatusResult(ws)
}

func waitStatusResult(ws syscall.WaitStatus) drivers.ExitResult {
	if ws.Signaled() {
		return drivers.ExitResult{ExitCode: 128 + int(ws.Signal()), Signal: int(ws.Signal())}
	}
	return drivers.ExitResult{ExitCode: ws.ExitStatus()}
}

// signal sends sig to the task's process group, unless the leader has
// already exited (its PID may then belong to someone else).
func (t *task) signal(sig syscall.Signal) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exited {
		return nil
	}
	if t.cmd == nil && !t.watch.alive() {
		return nil
	}
	err := syscall.Kill(-t.pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Wait returns a channel that receives the task's exit result.
func (d *Driver) Wait(h *drivers.TaskHandle) (<-chan drivers.ExitResult, error) {
	t, err := d.lookup(h)
	if err != nil {
		return nil, err
	}
	return t.exit.Wait(), nil
}

// Stop sends signal (default: the task's kill signal, else SIGTERM) to the
// task's process group, waits up to timeout, then sends SIGKILL to the
// group. It returns once the leader has exited.
func (d *Driver) Stop(h *drivers.TaskHandle, timeout time.Duration, signal string) error {
	t, err := d.lookup(h)
	if err != nil {
		return err
	}
	return drivers.StopGracefully(h.ID(), h, t.exit.Wait(), timeout, signal, t.signal)
}

// Destroy kills the task's process group if it still runs and forgets
// the task.
func (d *Driver) Destroy(h *drivers.TaskHandle) error {
	t, err := d.lookup(h)
	if err != nil {
		return err
	}
	if _, done := t.exit.Result(); !done {
		if err := d.Stop(h, 0, "SIGKILL"); err != nil {
			return err
		}
	}
	d.mu.Lock()
	if d.tasks[h.ID()] == t {
		delete(d.tasks, h.ID())
	}
	d.mu.Unlock()
	return nil
}

// execWait bounds how long Exec waits for the output of a killed
// command's stray processes to close.
const execWait = time.Second

// Exec runs cmd beside the running task, as the task runs: the client's
// user, the task's environment and working directory, the command looked
// up as the task's. It leads its own process group, killed whole when
// ctx ends. stdout and stderr are combined, the first
// drivers.ExecOutputLimit bytes kept.
func (d *Driver) Exec(ctx context.Context, h *drivers.TaskHandle, cmd []string) ([]byte, int, error) {
	t, err := d.lookup(h)
	if err != nil {
		return nil, 0, err
	}
	if _, done := t.exit.Result(); done {
		return nil, 0, fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
	}
	if len(cmd) == 0 || cmd[0] == "" {
		return nil, 0, fmt.Errorf("%w: no command", drivers.ErrInvalidConfig)
	}
	cfg := h.Config
	c := exec.CommandContext(ctx, lookPath(cmd[0], cfg.TaskDir, cfg.Env["PATH"]), cmd[1:]...)
	c.Args[0] = cmd[0]
	c.Dir = cfg.TaskDir
	c.Env = envList(cfg.Env)
	out := &drivers.LimitedBuffer{Limit: drivers.ExecOutputLimit}
	c.Stdout, c.Stderr = out, out
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = execWait
	if err = drivers.StartInNetNS(cfg.NetNSPath, c.Start); err == nil {
		err = c.Wait()
	}
	if ctx.Err() != nil {
		return out.Bytes(), -1, fmt.Errorf("%s: %w", cmd[0], ctx.Err())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return out.Bytes(), 128 + int(ws.Signal()), nil
		}
		return out.Bytes(), ee.ExitCode(), nil
	}
	if err != nil {
		return out.Bytes(), -1, err
	}
	return out.Bytes(), 0, nil
}

func (d *Driver) lookup(h *drivers.TaskHandle) (*task, error) {
	return drivers.Lookup(&d.mu, d.tasks, h, Name)
}

// openLogs opens the live stdout and stderr files (or /dev/null when logs
// are disabled) and returns their rotators.
func openLogs(cfg *drivers.TaskConfig) (stdout, stderr *os.File, rs []*rotator, err error) {
	lc := cfg.LogConfig
	if lc.Disabled || cfg.StdoutPath == "" || cfg.StderrPath == "" {
		if stdout, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
			return nil, nil, nil, err
		}
		if stderr, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
			stdout.Close()
			return nil, nil, nil, err
		}
		return stdout, stderr, nil, nil
	}
	if lc.MaxFiles == 0 {
		lc.MaxFiles = structs.DefaultLogMaxFiles
	}
	if lc.MaxFileSizeMB == 0 {
		lc.MaxFileSizeMB = structs.DefaultLogMaxFileMB
	}
	ro := newRotator(cfg.StdoutPath, lc.MaxFiles, lc.MaxFileSizeMB)
	re := newRotator(cfg.StderrPath, lc.MaxFiles, lc.MaxFileSizeMB)
	if cfg.TaskDir != "" {
		// The files are in the allocation's alloc/logs, which its tasks
		// can write: reach them through the allocation's directory.
		alloc := filepath.Dir(filepath.Clean(cfg.TaskDir))
		for _, r := range []*rotator{ro, re} {
			if err := r.inAlloc(alloc); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	if stdout, err = ro.open(); err != nil {
		return nil, nil, nil, err
	}
	if stderr, err = re.open(); err != nil {
		stdout.Close()
		return nil, nil, nil, err
	}
	return stdout, stderr, []*rotator{ro, re}, nil
}

// lookPath resolves a command as the task would: a name with a slash is
// taken relative to the task dir; a bare name is searched in the task's
// own PATH, then in the client's.
func lookPath(command, taskDir, path string) string {
	if strings.Contains(command, "/") {
		if filepath.IsAbs(command) {
			return command
		}
		return filepath.Join(taskDir, command)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, command)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath(command); err == nil {
		return p
	}
	// Start reports the missing file.
	return command
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
