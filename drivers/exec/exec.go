package exec

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"

	"github.com/droverhq/drover/drivers"
)

// execWait bounds how long a command's output is waited for once it has
// exited (a process it started in the background may hold it open).
const execWait = time.Second

// Exec runs cmd inside the running task, as Nomad's exec driver does for
// script checks: in its namespaces, chroot and cgroup, as its user, with
// its environment and working directory. stdout and stderr are combined,
// the first drivers.ExecOutputLimit bytes kept; ctx's end kills it.
func (d *Driver) Exec(ctx context.Context, h *drivers.TaskHandle, cmd []string) ([]byte, int, error) {
	out := &drivers.LimitedBuffer{Limit: drivers.ExecOutputLimit}
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return out.Write(p)
	})
	s, err := d.ExecStream(ctx, h, drivers.ExecStreamRequest{Command: cmd, Stdout: w, Stderr: w})
	if err != nil {
		return nil, 0, err
	}
	_ = s.Stdin().Close()
	code, err := s.Wait()
	mu.Lock()
	defer mu.Unlock()
	if ctx.Err() != nil {
		return out.Bytes(), -1, fmt.Errorf("%s: %w", cmd[0], ctx.Err())
	}
	return out.Bytes(), code, err
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// ExecStream runs an interactive command inside the running task (drover
// alloc exec): in its namespaces, chroot and cgroup, as its user, with its
// environment and working directory; on a terminal of the task's own
// (its /dev/pts) with req.TTY, on pipes otherwise.
func (d *Driver) ExecStream(ctx context.Context, h *drivers.TaskHandle, req drivers.ExecStreamRequest) (drivers.ExecSession, error) {
	t, err := d.running(h)
	if err != nil {
		return nil, err
	}
	if len(req.Command) == 0 || req.Command[0] == "" {
		return nil, fmt.Errorf("%w: no command", drivers.ErrInvalidConfig)
	}
	if req.Stdout == nil || req.Stderr == nil {
		return nil, fmt.Errorf("%w: no output writers", drivers.ErrInvalidConfig)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg := h.Config
	tc, err := d.command(cfg.Config)
	if err != nil {
		return nil, err
	}
	name := cfg.User
	if name == "" {
		name = DefaultUser
	}
	u, err := lookupUser(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", drivers.ErrExecStart, err)
	}
	cwd := tc.WorkDir
	if cwd == "" {
		cwd = "/"
	}
	p := &libcontainer.Process{
		Args: req.Command, Env: envList(cfg.Env), Cwd: cwd,
		UID: u.uid, GID: u.gid, AdditionalGroups: u.groups,
	}
	s := &session{p: p, done: make(chan struct{})}
	if req.TTY {
		err = s.startTTY(t.c, req)
	} else {
		err = s.startPipes(t.c, req)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", drivers.ErrExecStart, req.Command[0], err)
	}
	stop := context.AfterFunc(ctx, s.Kill)
	go func() {
		s.wait()
		stop()
	}()
	return s, nil
}

// session is a command running inside a task.
type session struct {
	p     *libcontainer.Process
	stdin io.WriteCloser
	ptmx  *os.File
	// outs are the read ends of the command's output; copied is closed
	// once they are drained.
	outs   []*os.File
	copied chan struct{}

	mu     sync.Mutex
	pid    int
	reaped bool

	done     chan struct{}
	exitCode int
	err      error
}

func (s *session) startPipes(c *libcontainer.Container, req drivers.ExecStreamRequest) error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return err
	}
	s.p.Stdin, s.p.Stdout, s.p.Stderr = inR, outW, errW
	err = c.Run(s.p)
	// The command holds its own copies.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return err
	}
	s.pid, _ = s.p.Pid()
	s.stdin = inW
	s.outs = []*os.File{outR, errR}
	s.copied = make(chan struct{})
	var wg sync.WaitGroup
	for i, w := range []io.Writer{req.Stdout, req.Stderr} {
		wg.Add(1)
		go func(r *os.File, w io.Writer) {
			defer wg.Done()
			_, _ = io.Copy(w, r)
		}(s.outs[i], w)
	}
	go func() {
		wg.Wait()
		close(s.copied)
	}()
	return nil
}

// startTTY runs the command on a new terminal that libcontainer opens
// inside the task (its own devpts) and hands back over a socket.
func (s *session) startTTY(c *libcontainer.Container, req drivers.ExecStreamRequest) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	parent, child := os.NewFile(uintptr(fds[0]), "console-parent"), os.NewFile(uintptr(fds[1]), "console-child")
	defer parent.Close()
	s.p.ConsoleSocket = child
	if req.Size.Height > 0 && req.Size.Width > 0 {
		s.p.ConsoleHeight = uint16(min(req.Size.Height, 0xffff))
		s.p.ConsoleWidth = uint16(min(req.Size.Width, 0xffff))
	}
	err = c.Run(s.p)
	child.Close()
	if err != nil {
		return err
	}
	ptmx, err := recvFile(parent)
	if err != nil {
		_ = s.p.Signal(syscall.SIGKILL)
		_, _ = s.p.Wait()
		return fmt.Errorf("receiving the terminal: %w", err)
	}
	s.pid, _ = s.p.Pid()
	s.ptmx = ptmx
	s.stdin = drivers.NewTTYInput(ptmx)
	s.copied = make(chan struct{})
	go func() {
		defer close(s.copied)
		_, _ = io.Copy(req.Stdout, ptmx)
	}()
	return nil
}

// recvFile receives one file descriptor sent over a unix socket.
func recvFile(sock *os.File) (*os.File, error) {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("no file received (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, fmt.Errorf("no file received (%v)", err)
	}
	return os.NewFile(uintptr(fds[0]), string(buf[:n])), nil
}

// wait waits for the command, then for its output (execWait at most),
// and records its exit code.
func (s *session) wait() {
	ps, err := s.p.Wait()
	s.mu.Lock()
	s.reaped = true
	s.mu.Unlock()
	select {
	case <-s.copied:
	case <-time.After(execWait):
	}
	if s.ptmx != nil {
		s.ptmx.Close()
	}
	for _, f := range s.outs {
		f.Close()
	}
	<-s.copied
	if f, ok := s.stdin.(*os.File); ok {
		f.Close()
	}
	res := exitResult(ps, nil)
	if ps == nil {
		s.exitCode, s.err = -1, err
	} else {
		s.exitCode = res.ExitCode
	}
	close(s.done)
}

func (s *session) Stdin() io.WriteCloser { return s.stdin }

func (s *session) Resize(sz drivers.TerminalSize) error {
	if s.ptmx == nil || sz.Height <= 0 || sz.Width <= 0 {
		return nil
	}
	select {
	case <-s.done:
		return nil
	default:
	}
	return pty.Setsize(s.ptmx, &pty.Winsize{Rows: uint16(min(sz.Height, 0xffff)), Cols: uint16(min(sz.Width, 0xffff))})
}

func (s *session) Wait() (int, error) {
	<-s.done
	return s.exitCode, s.err
}

// Kill kills the command (and, on a terminal, its session's process
// group), unless it was reaped already.
func (s *session) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reaped || s.pid <= 0 {
		return
	}
	if s.ptmx != nil {
		_ = syscall.Kill(-s.pid, syscall.SIGKILL)
	}
	_ = syscall.Kill(s.pid, syscall.SIGKILL)
}
