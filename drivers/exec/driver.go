// Package exec is the exec driver: it runs a task's command isolated as
// Nomad's exec driver does, through libcontainer (runc's library, which
// Nomad's executor uses too). The task's root is its own task directory,
// where the host directories of the client's chroot_env are bound
// read-only and the allocation's shared directory at /alloc; it has mount,
// UTS, PID and IPC namespaces of its own, runs as an unprivileged user
// (nobody unless the task names one), with a bounded set of capabilities,
// in a cgroup that limits its memory (past it the kernel's OOM killer
// ends it, reported as Nomad reports it) and weights its CPU, and whose
// counters are its resource usage.
//
// As raw_exec's, a task's process is the client's child, with no helper
// process between them: its stdout and stderr are log files it holds
// itself (raw_exec's rotating files), and it outlives the client. A
// restarted client re-attaches to it through libcontainer's state
// directory, kept under the client's data directory.
//
// NewFor builds another driver on the same isolation from a CommandFunc
// that turns its driver block into the command to run: drivers/java is
// one.
package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/opencontainers/runc/libcontainer"

	"github.com/droverhq/drover/client/allocfs"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/rawexec"
	"github.com/droverhq/drover/structs"
)

// Name is the driver's name.
const Name = structs.DriverExec

// DefaultCgroupParent is where the tasks' cgroups go, in every hierarchy
// (cgroup v1) or in the unified one (v2), as Nomad's /nomad.
const DefaultCgroupParent = "/drover"

// Options tune the driver; the client's plugin "exec" { config { … } }
// block sets the Nomad ones.
type Options struct {
	// StateDir holds libcontainer's state of each task, which a restarted
	// client re-attaches through (required; the client puts it under its
	// data directory).
	StateDir string
	// CgroupParent is the cgroup under which each task gets its own
	// (DefaultCgroupParent).
	CgroupParent string
	// ChrootEnv maps host paths to the paths inside each task's root
	// where they are bound read-only (Nomad's chroot_env; nil:
	// DefaultChrootEnv).
	ChrootEnv map[string]string
	// DefaultPidMode and DefaultIpcMode are the modes of tasks that set
	// none ("private" unless "host").
	DefaultPidMode string
	DefaultIpcMode string
	// AllowCaps are the capabilities tasks may have (nil:
	// DefaultAllowCaps); "all" allows every one.
	AllowCaps []string
	// LogCheckInterval is how often log sizes are checked (default 1s).
	LogCheckInterval time.Duration
	// AllowRoot lets tasks run as root (uid 0), which Nomad's default
	// client user.denylist refuses for exec tasks, as drover does
	// unless this is set.
	AllowRoot bool
}

// Driver is the exec driver, or a driver built on its isolation (java).
// Create it with New or NewFor.
type Driver struct {
	name         string
	command      CommandFunc
	stateDir     string
	cgroupParent string
	chrootEnv    map[string]string
	pidMode      string
	ipcMode      string
	allowCaps    []string
	logEvery     time.Duration
	noSwap       bool
	allowRoot    bool

	fpOnce sync.Once
	fp     drivers.Fingerprint

	mu    sync.Mutex
	tasks map[string]*task
}

// New returns an exec driver, or an error when its options are invalid.
func New(o Options) (*Driver, error) {
	return NewFor(Name, parseConfig, o)
}

// NewFor returns a driver named name whose tasks run the Command that cmd
// makes of their driver block, isolated as exec's tasks are: the java
// driver is one. Its handles carry name; o is its plugin block's
// settings, with a state directory of its own.
func NewFor(name string, cmd CommandFunc, o Options) (*Driver, error) {
	if name == "" || cmd == nil {
		return nil, fmt.Errorf("%w: a driver built on exec needs a name and a command", drivers.ErrInvalidConfig)
	}
	if o.StateDir == "" {
		return nil, fmt.Errorf("%w: %s needs a state directory", drivers.ErrInvalidConfig, name)
	}
	if o.CgroupParent == "" {
		o.CgroupParent = DefaultCgroupParent
	}
	if o.ChrootEnv == nil {
		o.ChrootEnv = DefaultChrootEnv()
	}
	for src, dst := range o.ChrootEnv {
		if !filepath.IsAbs(src) || !filepath.IsAbs(dst) {
			return nil, fmt.Errorf("%w: %s chroot_env %q = %q: both paths must be absolute", drivers.ErrInvalidConfig, name, src, dst)
		}
	}
	if o.DefaultPidMode == "" {
		o.DefaultPidMode = ModePrivate
	}
	if o.DefaultIpcMode == "" {
		o.DefaultIpcMode = ModePrivate
	}
	if err := checkMode(name, "default_pid_mode", o.DefaultPidMode); err != nil {
		return nil, err
	}
	if err := checkMode(name, "default_ipc_mode", o.DefaultIpcMode); err != nil {
		return nil, err
	}
	if o.AllowCaps == nil {
		o.AllowCaps = DefaultAllowCaps()
	}
	allow, err := capList(name, o.AllowCaps)
	if err != nil {
		return nil, err
	}
	if o.LogCheckInterval <= 0 {
		o.LogCheckInterval = rawexec.DefaultLogCheckInterval
	}
	return &Driver{
		name: name, command: cmd, stateDir: o.StateDir, cgroupParent: filepath.Clean("/" + o.CgroupParent),
		chrootEnv: o.ChrootEnv, pidMode: o.DefaultPidMode, ipcMode: o.DefaultIpcMode,
		allowCaps: allow, logEvery: o.LogCheckInterval, noSwap: swapLimitable(), allowRoot: o.AllowRoot,
		tasks: make(map[string]*task),
	}, nil
}

var (
	_ drivers.Driver           = (*Driver)(nil)
	_ drivers.Capable          = (*Driver)(nil)
	_ drivers.TaskSignaler     = (*Driver)(nil)
	_ drivers.StatsDriver      = (*Driver)(nil)
	_ drivers.ExecTaskDriver   = (*Driver)(nil)
	_ drivers.StreamExecDriver = (*Driver)(nil)
)

// handleState is exec's part of a TaskHandle: where libcontainer keeps
// the task's state, and its init process.
type handleState struct {
	ContainerID string
	StateDir    string
	PID         int
	StartTime   uint64
}

// task is one running (or finished) container.
type task struct {
	id   string
	c    *libcontainer.Container
	proc *libcontainer.Process // nil for a re-attached task
	pid  int
	// memCgroup is the task's memory cgroup directory, where the
	// kernel counts its OOM kills.
	memCgroup string
	watch     *pidWatch // a re-attached task's
	logs      *rawexec.LogFiles
	exit      drivers.ExitNotifier

	mu     sync.Mutex
	exited bool // the init has exited; the container is being destroyed
}

// Name returns "exec", or the name NewFor was given.
func (d *Driver) Name() string { return d.name }

// Capabilities: the task has a root of its own (a chroot).
func (d *Driver) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{FSIsolation: drivers.FSIsolationChroot}
}

// Fingerprint reports the driver as detected where it can isolate tasks:
// the client runs as root, on Linux with the PID, IPC, mount and UTS
// namespaces and the cpu and memory cgroup controllers (v1 or v2).
func (d *Driver) Fingerprint() drivers.Fingerprint {
	d.fpOnce.Do(func() {
		if reason := Unsupported(); reason != "" {
			d.fp = drivers.Fingerprint{Undetected: true, HealthDescription: reason}
			return
		}
		d.fp = drivers.Fingerprint{
			Attributes:        map[string]string{"driver." + d.name: "1"},
			Healthy:           true,
			HealthDescription: "Healthy",
		}
	})
	return d.fp
}

// Start creates the task's container and runs its command as the
// container's init (PID 1 of its PID namespace), with the task's
// environment, as its user, its stdout and stderr appended to its log
// files.
func (d *Driver) Start(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: no task config", drivers.ErrInvalidConfig)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if fp := d.Fingerprint(); fp.Undetected {
		return nil, fmt.Errorf("%w: %s cannot isolate tasks on this client: %s", drivers.ErrStartFailed, d.name, fp.HealthDescription)
	}
	tc, err := d.command(cfg.Config)
	if err != nil {
		return nil, err
	}
	if tc.PidMode == "" {
		tc.PidMode = d.pidMode
	}
	if tc.IpcMode == "" {
		tc.IpcMode = d.ipcMode
	}
	caps, err := taskCaps(d.allowCaps, tc.CapAdd, tc.CapDrop)
	if err != nil {
		return nil, err
	}
	name := cfg.User
	if name == "" {
		name = DefaultUser
	}
	u, err := lookupUser(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", drivers.ErrStartFailed, err)
	}
	if u.uid == 0 && !d.allowRoot {
		return nil, fmt.Errorf("%w: user %q is root, which this client denies %s tasks (as Nomad's user.denylist)", drivers.ErrStartFailed, name, d.name)
	}
	tid := drivers.TaskID(cfg.AllocID, cfg.TaskName)
	d.mu.Lock()
	if old, ok := d.tasks[tid]; ok {
		if _, done := old.exit.Result(); !done {
			d.mu.Unlock()
			return nil, fmt.Errorf("%w: task %s is already running", drivers.ErrStartFailed, tid)
		}
	}
	d.mu.Unlock()
	if err := ownTaskDirs(cfg, u); err != nil {
		return nil, fmt.Errorf("%w: %w", drivers.ErrStartFailed, err)
	}
	id := containerID(cfg.AllocID, cfg.TaskName)
	if err := d.removeStale(id); err != nil {
		return nil, fmt.Errorf("%w: %w", drivers.ErrStartFailed, err)
	}
	ccfg, err := d.containerConfig(id, cfg, tc, caps)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", drivers.ErrStartFailed, err)
	}
	c, err := libcontainer.Create(d.stateDir, id, ccfg)
	if err != nil {
		return nil, fmt.Errorf("%w: creating the container: %w", drivers.ErrStartFailed, err)
	}
	logs, err := rawexec.OpenLogFiles(cfg)
	if err != nil {
		_ = c.Destroy()
		return nil, fmt.Errorf("%w: opening logs: %w", drivers.ErrStartFailed, err)
	}
	workDir := tc.WorkDir
	if workDir == "" {
		workDir = "/"
	}
	p := &libcontainer.Process{
		Args: append([]string{tc.Command}, tc.Args...), Env: envList(cfg.Env),
		Cwd: workDir, UID: u.uid, GID: u.gid, AdditionalGroups: u.groups,
		Stdout: logs.Stdout, Stderr: logs.Stderr, Init: true,
	}
	err = c.Run(p)
	// The task holds its own copies of the log files.
	logs.CloseFiles()
	if err != nil {
		_ = c.Destroy()
		return nil, fmt.Errorf("%w: %w", drivers.ErrStartFailed, err)
	}
	d.waitExec(p)
	st, err := c.State()
	if err != nil {
		_ = c.Signal(syscall.SIGKILL)
		_, _ = p.Wait()
		_ = c.Destroy()
		return nil, fmt.Errorf("%w: reading the container's state: %w", drivers.ErrStartFailed, err)
	}
	h := &drivers.TaskHandle{Version: drivers.HandleVersion, Driver: d.name, Config: cfg, StartedAt: time.Now()}
	hs := handleState{ContainerID: id, StateDir: d.stateDir, PID: st.InitProcessPid, StartTime: st.InitProcessStartTime}
	if err := h.SetDriverState(hs); err != nil {
		_ = c.Signal(syscall.SIGKILL)
		_, _ = p.Wait()
		_ = c.Destroy()
		return nil, err
	}
	d.track(tid, &task{id: tid, c: c, proc: p, pid: st.InitProcessPid, memCgroup: memoryCgroup(st.CgroupPaths), logs: logs})
	return h, nil
}

// execWaitLimit bounds how long Start waits for a task's init to become
// its command.
const execWaitLimit = 2 * time.Second

// waitExec waits until the init libcontainer released has executed the
// task's command: in between, it is still the re-executed client binary,
// where a signal (Stop right after Start) would end it with the Go
// runtime's exit code rather than reach the command.
func (d *Driver) waitExec(p *libcontainer.Process) {
	pid, err := p.Pid()
	if err != nil {
		return
	}
	// Until then its command line is libcontainer's for the init.
	initArgs := os.Args[0] + "\x00init\x00"
	cmdline := "/proc/" + strconv.Itoa(pid) + "/cmdline"
	deadline := time.Now().Add(execWaitLimit)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(cmdline)
		if err != nil || string(b) != initArgs {
			return
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// removeStale destroys what is left of a container of the same ID whose
// init has exited (the client was down when it did); one still running
// is an error.
func (d *Driver) removeStale(id string) error {
	c, err := libcontainer.Load(d.stateDir, id)
	if err != nil {
		return nil // none
	}
	if s, err := c.Status(); err == nil && s != libcontainer.Stopped {
		return fmt.Errorf("container %s is still %s", id, s)
	}
	return c.Destroy()
}

// Recover re-attaches to the container a handle names, if its init is
// still the process the handle recorded. Its exit status is unknown (only
// the client that died could wait for it), unless the kernel's OOM killer
// ended it, which its cgroup tells.
func (d *Driver) Recover(h *drivers.TaskHandle) error {
	if err := drivers.CheckHandle(h, d.name); err != nil {
		return err
	}
	tid := h.ID()
	d.mu.Lock()
	_, known := d.tasks[tid]
	d.mu.Unlock()
	if known {
		return nil
	}
	var hs handleState
	if err := h.GetDriverState(&hs); err != nil {
		return fmt.Errorf("%w: %w", drivers.ErrInvalidConfig, err)
	}
	stateDir := hs.StateDir
	if stateDir == "" {
		stateDir = d.stateDir
	}
	c, err := libcontainer.Load(stateDir, hs.ContainerID)
	if err != nil {
		return fmt.Errorf("%w: container %s of %s: %w", drivers.ErrTaskNotFound, hs.ContainerID, tid, err)
	}
	if s, err := c.Status(); err != nil || s == libcontainer.Stopped {
		_ = c.Destroy()
		return fmt.Errorf("%w: container %s of %s has exited", drivers.ErrTaskNotFound, hs.ContainerID, tid)
	}
	w, err := watchPid(hs.PID, hs.StartTime)
	if err != nil {
		_ = c.Destroy()
		return fmt.Errorf("%w: init %d of %s has exited", drivers.ErrTaskNotFound, hs.PID, tid)
	}
	logs, err := rawexec.OpenLogFiles(h.Config)
	if err != nil {
		w.close()
		return fmt.Errorf("re-opening logs of %s: %w", tid, err)
	}
	logs.CloseFiles()
	var mem string
	if st, err := c.State(); err == nil {
		mem = memoryCgroup(st.CgroupPaths)
	}
	d.track(tid, &task{id: tid, c: c, pid: hs.PID, watch: w, memCgroup: mem, logs: logs})
	return nil
}

// track registers a task and starts its watcher.
func (d *Driver) track(id string, t *task) {
	d.mu.Lock()
	d.tasks[id] = t
	d.mu.Unlock()
	go t.run(d.logEvery)
}

// run rotates the task's logs until its init exits, then records how it
// ended and destroys the container (its cgroup and state).
func (t *task) run(logEvery time.Duration) {
	type waited struct {
		ps  *os.ProcessState
		err error
	}
	done := make(chan waited, 1)
	go func() {
		if t.proc != nil {
			ps, err := t.proc.Wait()
			done <- waited{ps, err}
			return
		}
		t.watch.wait()
		done <- waited{}
	}()
	tick := time.NewTicker(logEvery)
	defer tick.Stop()
	var w waited
	for waiting := true; waiting; {
		select {
		case <-tick.C:
			t.logs.Rotate()
		case w = <-done:
			waiting = false
		}
	}
	t.mu.Lock()
	t.exited = true
	t.mu.Unlock()
	res := drivers.ExitResult{Unknown: true}
	if t.proc != nil {
		res = exitResult(w.ps, w.err)
	} else {
		t.watch.close()
	}
	if oomKills(t.memCgroup) > 0 {
		// The kernel's OOM killer ended one of the task's processes, as
		// Nomad reports it: the exit status is the init's own (137 when
		// it was the one killed); a re-attached init's, unknown, is
		// taken to be that.
		res.OOMKilled = true
		if res.Unknown {
			res = drivers.ExitResult{ExitCode: 128 + int(syscall.SIGKILL), Signal: int(syscall.SIGKILL), OOMKilled: true}
		}
	}
	// With a PID namespace of its own, the kernel killed what the init
	// left; with the host's, Destroy kills what is left in the cgroup.
	_ = t.c.Signal(syscall.SIGKILL)
	if err := t.c.Destroy(); err != nil && res.Err == nil && !res.Unknown && res.ExitCode == 0 {
		res.Err = fmt.Errorf("destroying the container: %w", err)
	}
	t.logs.Rotate()
	t.exit.Exit(res)
}

// exitResult turns the init's wait status into an exit result: a
// signalled process reports exit code 128+signal, as shells do.
func exitResult(ps *os.ProcessState, err error) drivers.ExitResult {
	if ps == nil {
		if err == nil {
			err = errors.New("no exit status")
		}
		return drivers.ExitResult{ExitCode: -1, Err: err}
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return drivers.ExitResult{ExitCode: ps.ExitCode()}
	}
	if ws.Signaled() {
		return drivers.ExitResult{ExitCode: 128 + int(ws.Signal()), Signal: int(ws.Signal())}
	}
	return drivers.ExitResult{ExitCode: ws.ExitStatus()}
}

// signal sends sig to the task's init, unless it has exited; a task gone
// is not an error.
func (t *task) signal(sig syscall.Signal) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exited {
		return nil
	}
	err := t.c.Signal(sig)
	if err == nil || errors.Is(err, libcontainer.ErrNotRunning) || errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.ESRCH) {
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
// task's init, waits up to timeout, then kills it (and with it its PID
// namespace). As PID 1 of its namespace, the init gets only the signals
// it handles: one that ignores SIGTERM is killed at the timeout.
func (d *Driver) Stop(h *drivers.TaskHandle, timeout time.Duration, signal string) error {
	t, err := d.lookup(h)
	if err != nil {
		return err
	}
	return drivers.StopGracefully(h.ID(), h, t.exit.Wait(), timeout, signal, t.signal)
}

// Signal sends a signal to the task's init (drover alloc signal).
func (d *Driver) Signal(h *drivers.TaskHandle, signal string) error {
	t, err := d.lookup(h)
	if err != nil {
		return err
	}
	sig, err := drivers.ParseSignal(signal)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exited {
		return fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
	}
	if err := t.c.Signal(sig); err != nil {
		if errors.Is(err, libcontainer.ErrNotRunning) || errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
		}
		return fmt.Errorf("signalling %s: %w", h.ID(), err)
	}
	return nil
}

// Destroy kills the task if it still runs and forgets it.
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

func (d *Driver) lookup(h *drivers.TaskHandle) (*task, error) {
	return drivers.Lookup(&d.mu, d.tasks, h, d.name)
}

// running returns the task h names if it still runs.
func (d *Driver) running(h *drivers.TaskHandle) (*task, error) {
	t, err := d.lookup(h)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	exited := t.exited
	t.mu.Unlock()
	if exited {
		return nil, fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
	}
	return t, nil
}

// ownTaskDirs gives the task's local/, secrets/ and tmp/ to its user, and
// opens the allocation's data/ to every user, so that a task that is not
// root can write there as Nomad's can; they are changed through the
// allocation's root, a symlink there not followed (or kept inside).
func ownTaskDirs(cfg *drivers.TaskConfig, u taskUser) error {
	if u.uid == 0 {
		return nil
	}
	root, err := allocfs.Open(filepath.Dir(cfg.TaskDir))
	if err != nil {
		return err
	}
	defer root.Close()
	task := filepath.Base(cfg.TaskDir)
	for _, dir := range []string{"local", "secrets", "tmp"} {
		name := allocfs.Task(task, dir)
		if _, err := root.Stat(name); err != nil {
			continue
		}
		if err := root.Lchown(name, u.uid, u.gid); err != nil {
			return fmt.Errorf("giving %s to %s: %w", dir, u.name, err)
		}
	}
	// The allocation's shared data directory is for all its tasks,
	// whatever their users, as Nomad's (alloc/tmp is already 1777).
	if fi, err := root.Stat(allocfs.Shared("data")); err == nil && fi.IsDir() && fi.Mode().Perm() != 0o777 {
		if err := root.Chmod(allocfs.Shared("data"), 0o777); err != nil {
			return fmt.Errorf("opening alloc/data to the allocation's tasks: %w", err)
		}
	}
	// So is the shared directory itself (/alloc, where Nomad's jobs put
	// what a prestart task builds, as javac -d ${NOMAD_ALLOC_DIR}):
	// Nomad's is 0777; sticky here, as /tmp, so that a task cannot remove
	// or rename what is not its own (the client's logs/).
	const shared = os.ModeSticky | 0o777
	if fi, err := root.Stat(allocfs.Shared("")); err == nil && fi.IsDir() && fi.Mode()&shared != shared {
		if err := root.Chmod(allocfs.Shared(""), shared); err != nil {
			return fmt.Errorf("opening alloc/ to the allocation's tasks: %w", err)
		}
	}
	return nil
}

// defaultPath is the PATH of a task whose environment sets none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env)+1)
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	if _, ok := env["PATH"]; !ok {
		out = append(out, "PATH="+defaultPath)
	}
	sort.Strings(out)
	return out
}

// memoryCgroup is the memory controller's directory among a container's
// cgroup paths ("memory" under v1, the one unified path under v2).
func memoryCgroup(paths map[string]string) string {
	if p, ok := paths["memory"]; ok {
		return p
	}
	return paths[""]
}
