package rawexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/droverhq/drover/drivers"
)

var (
	_ drivers.StreamExecDriver = (*Driver)(nil)
	_ drivers.TaskSignaler     = (*Driver)(nil)
)

// ExecStream runs an interactive command beside the running task, as the
// task runs (the client's user, the task's environment, working
// directory and PATH), in a session of its own: on a new pseudo-terminal
// with req.TTY (whose size Resize sets; the kernel tells the command with
// SIGWINCH), with pipes otherwise. When the command exits, whatever it
// started in its process group is killed, so that its output ends;
// output still held open by a process that left the group is cut after
// execWait.
func (d *Driver) ExecStream(ctx context.Context, h *drivers.TaskHandle, req drivers.ExecStreamRequest) (drivers.ExecSession, error) {
	t, err := d.lookup(h)
	if err != nil {
		return nil, err
	}
	if _, done := t.exit.Result(); done {
		return nil, fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
	}
	if len(req.Command) == 0 || req.Command[0] == "" {
		return nil, fmt.Errorf("%w: no command", drivers.ErrInvalidConfig)
	}
	if req.Stdout == nil || req.Stderr == nil {
		return nil, fmt.Errorf("%w: no output writers", drivers.ErrInvalidConfig)
	}
	cfg := h.Config
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := exec.Command(lookPath(req.Command[0], cfg.TaskDir, cfg.Env["PATH"]), req.Command[1:]...)
	c.Args[0] = req.Command[0]
	c.Dir = cfg.TaskDir
	c.Env = envList(cfg.Env)
	c.WaitDelay = execWait
	s := &execSession{done: make(chan struct{})}
	// In a bridge allocation, in its network namespace, as the task.
	err = drivers.StartInNetNS(cfg.NetNSPath, func() error {
		if req.TTY {
			return s.startTTY(c, req)
		}
		return s.startPipes(c, req)
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", drivers.ErrExecStart, req.Command[0], err)
	}
	// The session's process group is its PID's: killed whole when ctx
	// ends (at once if it already has).
	stop := context.AfterFunc(ctx, s.Kill)
	go func() {
		s.wait(c)
		stop()
	}()
	return s, nil
}

// execSession is a command ExecStream started.
type execSession struct {
	stdin io.WriteCloser
	ptmx  *os.File // the terminal's controlling side; nil without one
	// copied is closed when the terminal's output has been copied out.
	copied chan struct{}

	mu     sync.Mutex
	pid    int
	reaped bool // the command is reaped: its PID may be another's

	done     chan struct{}
	exitCode int
	err      error
}

func (s *execSession) startPipes(c *exec.Cmd, req drivers.ExecStreamRequest) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	c.Stdin, c.Stdout, c.Stderr = r, req.Stdout, req.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = c.Start()
	r.Close() // the command holds its own copy
	if err != nil {
		w.Close()
		return err
	}
	s.stdin, s.pid = w, c.Process.Pid
	return nil
}

func (s *execSession) startTTY(c *exec.Cmd, req drivers.ExecStreamRequest) error {
	ptmx, tty, err := pty.Open()
	if err != nil {
		return fmt.Errorf("opening a terminal: %w", err)
	}
	if req.Size.Height > 0 && req.Size.Width > 0 {
		_ = pty.Setsize(ptmx, winsize(req.Size))
	}
	c.Stdin, c.Stdout, c.Stderr = tty, tty, tty
	// A session of its own, with the terminal as its controlling
	// terminal (its stdin, fd 0): ^C and the like reach its foreground
	// process group, and its process group is its PID.
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	err = c.Start()
	tty.Close()
	if err != nil {
		ptmx.Close()
		return err
	}
	s.ptmx, s.pid = ptmx, c.Process.Pid
	s.stdin = drivers.NewTTYInput(ptmx)
	s.copied = make(chan struct{})
	go func() {
		defer close(s.copied)
		// Reading the terminal fails (EIO) once no process holds it.
		_, _ = io.Copy(req.Stdout, ptmx)
	}()
	return nil
}

func winsize(sz drivers.TerminalSize) *pty.Winsize {
	return &pty.Winsize{Rows: uint16(min(max(sz.Height, 0), 0xffff)), Cols: uint16(min(max(sz.Width, 0), 0xffff))}
}

// wait waits for the command's exit; kills, before reaping it, what it
// left in its process group; then waits for its output.
func (s *execSession) wait(c *exec.Cmd) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, s.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	s.mu.Lock()
	_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	s.mu.Unlock()
	err := c.Wait()
	s.mu.Lock()
	s.reaped = true
	s.mu.Unlock()
	if s.ptmx != nil {
		select {
		case <-s.copied:
		case <-time.After(execWait):
		}
		s.ptmx.Close()
		<-s.copied
	}
	if s.stdin != nil {
		if f, ok := s.stdin.(*os.File); ok {
			f.Close()
		}
	}
	s.exitCode, s.err = execExit(c, err)
	close(s.done)
}

// execExit is the exit code of a command that ended: 128+n when signal n
// killed it, as shells report it.
func execExit(c *exec.Cmd, err error) (int, error) {
	ps := c.ProcessState
	if ps == nil {
		return -1, err
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ps.ExitCode(), nil
}

func (s *execSession) Stdin() io.WriteCloser { return s.stdin }

func (s *execSession) Resize(sz drivers.TerminalSize) error {
	if s.ptmx == nil || sz.Height <= 0 || sz.Width <= 0 {
		return nil
	}
	select {
	case <-s.done:
		return nil
	default:
	}
	return pty.Setsize(s.ptmx, winsize(sz))
}

func (s *execSession) Wait() (int, error) {
	<-s.done
	return s.exitCode, s.err
}

// Kill kills the command's process group, unless it was reaped already.
func (s *execSession) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.reaped && s.pid > 0 {
		_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	}
}

// Signal sends a signal to the task's process (its leader, as Nomad's
// raw_exec does: a shell script decides what its children get).
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
	if t.exited || (t.cmd == nil && !t.watch.alive()) {
		return fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
	}
	if err := syscall.Kill(t.pid, sig); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
		}
		return fmt.Errorf("signalling %s: %w", h.ID(), err)
	}
	return nil
}
