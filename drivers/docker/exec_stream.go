package docker

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/droverhq/drover/drivers"
)

var (
	_ drivers.StreamExecDriver = (*Driver)(nil)
	_ drivers.TaskSignaler     = (*Driver)(nil)
)

// execInspectEvery is how often a finished exec is asked for its exit
// code, which the daemon records a moment after its output ends.
const execInspectEvery = 10 * time.Millisecond

// ExecStream runs an interactive command in the task's container (docker
// exec), with the container's environment, user and working directory:
// on a terminal the daemon allocates with req.TTY, with its output
// demultiplexed into stdout and stderr otherwise. A command the
// container does not have is reported as the daemon reports it: its
// message on the output and exit code 126 or 127. Kill kills the
// command's process by its host PID (the daemon offers no way to end an
// exec); processes it started may outlive it.
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
	var size *[2]uint
	if req.TTY && req.Size.Height > 0 && req.Size.Width > 0 {
		size = &[2]uint{uint(req.Size.Height), uint(req.Size.Width)}
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	created, err := d.client.ContainerExecCreate(cctx, t.containerID, container.ExecOptions{
		Cmd: req.Command, Tty: req.TTY, ConsoleSize: size,
		AttachStdin: true, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: creating exec in %s: %w", drivers.ErrExecStart, h.ID(), err)
	}
	att, err := d.client.ContainerExecAttach(cctx, created.ID, container.ExecAttachOptions{Tty: req.TTY, ConsoleSize: size})
	if err != nil {
		return nil, fmt.Errorf("%w: starting exec in %s: %w", drivers.ErrExecStart, h.ID(), err)
	}
	s := &dockerExec{d: d, id: created.ID, att: att, tty: req.TTY, done: make(chan struct{})}
	stop := context.AfterFunc(ctx, s.Kill)
	go func() {
		defer stop()
		s.run(req)
	}()
	return s, nil
}

// dockerExec is a running docker exec.
type dockerExec struct {
	d    *Driver
	id   string
	att  types.HijackedResponse
	tty  bool
	once sync.Once

	done     chan struct{}
	exitCode int
	err      error
}

// run copies the exec's output until it ends, then reads its exit code.
func (s *dockerExec) run(req drivers.ExecStreamRequest) {
	defer close(s.done)
	defer s.att.Close()
	if s.tty {
		_, _ = io.Copy(req.Stdout, s.att.Reader)
	} else {
		_, _ = stdcopy.StdCopy(req.Stdout, req.Stderr, s.att.Reader)
	}
	deadline := time.Now().Add(callTimeout)
	for {
		ctx, cancel := context.WithTimeout(s.d.ctx, callTimeout)
		ins, err := s.d.client.ContainerExecInspect(ctx, s.id)
		cancel()
		if err != nil {
			s.exitCode, s.err = -1, fmt.Errorf("inspecting exec %s: %w", shortID(s.id), err)
			return
		}
		if !ins.Running {
			s.exitCode = ins.ExitCode
			return
		}
		if time.Now().After(deadline) {
			s.exitCode, s.err = -1, fmt.Errorf("exec %s still running after its output ended", shortID(s.id))
			return
		}
		select {
		case <-s.d.ctx.Done():
			s.exitCode, s.err = -1, s.d.ctx.Err()
			return
		case <-time.After(execInspectEvery):
		}
	}
}

func (s *dockerExec) Stdin() io.WriteCloser { return execInput{s} }

// execInput writes to the exec's input; closing it is end of file: ^D
// on a terminal (which must stay open for the output), else the end of
// the connection's writing half.
type execInput struct{ s *dockerExec }

func (in execInput) Write(p []byte) (int, error) { return in.s.att.Conn.Write(p) }

func (in execInput) Close() error {
	var err error
	in.s.once.Do(func() {
		if in.s.tty {
			_, err = in.s.att.Conn.Write([]byte{4})
			return
		}
		err = in.s.att.CloseWrite()
	})
	return err
}

func (s *dockerExec) Resize(sz drivers.TerminalSize) error {
	if !s.tty || sz.Height <= 0 || sz.Width <= 0 {
		return nil
	}
	select {
	case <-s.done:
		return nil
	default:
	}
	ctx, cancel := context.WithTimeout(s.d.ctx, callTimeout)
	defer cancel()
	return s.d.client.ContainerExecResize(ctx, s.id, container.ResizeOptions{Height: uint(sz.Height), Width: uint(sz.Width)})
}

func (s *dockerExec) Wait() (int, error) {
	<-s.done
	return s.exitCode, s.err
}

// Kill kills the exec's process and closes its streams.
func (s *dockerExec) Kill() {
	select {
	case <-s.done:
		return
	default:
	}
	s.d.killExec(s.id)
	s.att.Close()
}

// Signal sends a signal to the task's container (its main process), as
// docker kill -s does.
func (d *Driver) Signal(h *drivers.TaskHandle, signal string) error {
	t, err := d.lookup(h)
	if err != nil {
		return err
	}
	sig, err := drivers.ParseSignal(signal)
	if err != nil {
		return err
	}
	if _, done := t.exit.Result(); done {
		return fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
	}
	ctx, cancel := context.WithTimeout(d.ctx, callTimeout)
	defer cancel()
	if err := d.client.ContainerKill(ctx, t.containerID, strconv.Itoa(int(sig))); err != nil {
		return fmt.Errorf("signalling %s: %w", h.ID(), err)
	}
	return nil
}
