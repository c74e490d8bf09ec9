package drivers

import (
	"context"
	"errors"
)

// ErrExecNotSupported: the driver cannot run a command inside its tasks.
var ErrExecNotSupported = errors.New("driver cannot run commands in its tasks")

// ExecTaskDriver is implemented by drivers that can run a command inside
// a running task's environment; script checks (check { type = "script" })
// need it. raw_exec runs the command as a process beside the task, with
// the task's environment and working directory; a container driver would
// run it inside the task's container (docker exec).
//
// Exec runs cmd (the command, then its arguments) to completion and
// returns its combined stdout and stderr (drivers may cap it, at no less
// than 4 KiB), and its exit code. When ctx ends first the command is
// killed (with every process it started) and the error wraps ctx.Err().
// A command that cannot be started, or a task that is not running
// (ErrTaskNotFound), is an error; a command that ran and exited non-zero
// is not.
type ExecTaskDriver interface {
	Exec(ctx context.Context, h *TaskHandle, cmd []string) (output []byte, exitCode int, err error)
}

// ExecOutputLimit is how much of a command's output Exec keeps, at least.
const ExecOutputLimit = 4 << 10

// LimitedBuffer keeps the first Limit bytes written to it and drops the
// rest, saying so; it is an io.Writer for a command's output.
type LimitedBuffer struct {
	Limit     int
	buf       []byte
	truncated bool
}

// Write keeps what fits and reports the whole of p written.
func (b *LimitedBuffer) Write(p []byte) (int, error) {
	if room := b.Limit - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
		if len(p) > room {
			b.truncated = true
		}
	} else if len(p) > 0 {
		b.truncated = true
	}
	return len(p), nil
}

// Bytes returns what was kept, marked when some was dropped.
func (b *LimitedBuffer) Bytes() []byte {
	if b.truncated {
		return append(append([]byte(nil), b.buf...), "\n[output truncated]"...)
	}
	return b.buf
}
