package docker

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/droverhq/drover/drivers"
)

var _ drivers.ExecTaskDriver = (*Driver)(nil)

// Exec runs cmd inside the task's running container (docker exec), with
// the container's environment, user and working directory, and returns
// its combined output (the first drivers.ExecOutputLimit bytes) and exit
// code. When ctx ends first, the command's process is killed through its
// host PID (the daemon offers no way to end an exec); processes it
// started may outlive it.
func (d *Driver) Exec(ctx context.Context, h *drivers.TaskHandle, cmd []string) ([]byte, int, error) {
	t, err := d.lookup(h)
	if err != nil {
		return nil, 0, err
	}
	if _, done := t.exit.Result(); done {
		return nil, 0, fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, h.ID())
	}
	if len(cmd) == 0 {
		return nil, 0, fmt.Errorf("%w: empty command", drivers.ErrInvalidConfig)
	}
	created, err := d.client.ContainerExecCreate(ctx, t.containerID, container.ExecOptions{
		Cmd: cmd, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return nil, 0, fmt.Errorf("creating exec in %s: %w", h.ID(), err)
	}
	att, err := d.client.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("starting exec in %s: %w", h.ID(), err)
	}
	defer att.Close()
	out := &drivers.LimitedBuffer{Limit: drivers.ExecOutputLimit}
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(out, out, att.Reader)
		copied <- err
	}()
	select {
	case err = <-copied:
	case <-ctx.Done():
		d.killExec(created.ID)
		att.Close()
		<-copied
		return out.Bytes(), 0, fmt.Errorf("exec in %s: %w", h.ID(), ctx.Err())
	}
	if err != nil {
		return out.Bytes(), 0, fmt.Errorf("reading exec output in %s: %w", h.ID(), err)
	}
	// The output ends when the process exits; its exit code follows
	// shortly.
	for {
		ictx, cancel := context.WithTimeout(context.Background(), callTimeout)
		ins, err := d.client.ContainerExecInspect(ictx, created.ID)
		cancel()
		if err != nil {
			return out.Bytes(), 0, fmt.Errorf("inspecting exec in %s: %w", h.ID(), err)
		}
		if !ins.Running {
			return out.Bytes(), ins.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			d.killExec(created.ID)
			return out.Bytes(), 0, fmt.Errorf("exec in %s: %w", h.ID(), ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// killExec kills an exec's process by its host PID, best effort.
func (d *Driver) killExec(execID string) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	ins, err := d.client.ContainerExecInspect(ctx, execID)
	if err != nil || !ins.Running || ins.Pid <= 0 {
		return
	}
	if err := syscall.Kill(ins.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		d.logger.Warn("killing an exec that outlived its deadline", "exec", shortID(execID), "pid", ins.Pid, "error", err)
	}
}
