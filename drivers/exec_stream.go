package drivers

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
)

// StreamExecDriver is implemented by drivers that can run an interactive
// command inside a running task (drover alloc exec): its input and output
// stream while it runs, optionally on a terminal. raw_exec runs the
// command beside the task, with the task's environment and working
// directory; docker runs it in the task's container (docker exec).
//
// ExecStream starts the command and returns once it runs, or with an
// error when it cannot be started: a task that is not running wraps
// ErrTaskNotFound, an empty command ErrInvalidConfig, and a command that
// does not exist or cannot be executed ErrExecStart. Nothing is left
// running after an error. When ctx ends the command is killed.
type StreamExecDriver interface {
	ExecStream(ctx context.Context, h *TaskHandle, req ExecStreamRequest) (ExecSession, error)
}

// ErrExecStart: the command could not be started in the task (it does
// not exist, or is not executable).
var ErrExecStart = errors.New("cannot start the command")

// TerminalSize is a terminal's size in characters.
type TerminalSize struct {
	Height, Width int
}

// ExecStreamRequest is one command to run in a task.
type ExecStreamRequest struct {
	// Command is the command and its arguments.
	Command []string
	// TTY runs the command on a new terminal (a pty), of Size when it is
	// set; its output, stdout and stderr alike, is written to Stdout.
	TTY  bool
	Size TerminalSize
	// Stdout and Stderr receive the command's output as it comes, from
	// one goroutine each (the same writer may be passed twice only if it
	// is safe for concurrent use). They must not block for long.
	Stdout, Stderr io.Writer
}

// ExecSession is a running command.
type ExecSession interface {
	// Stdin is the command's input; Close sends end of file.
	Stdin() io.WriteCloser
	// Resize changes the size of the command's terminal; without a
	// terminal it does nothing.
	Resize(TerminalSize) error
	// Wait returns the command's exit code (128+n for a command killed by
	// signal n) once it has exited and its output has been written, and
	// what it started is gone. It may be called more than once.
	Wait() (exitCode int, err error)
	// Kill ends the command and what it started; Wait then returns.
	Kill()
}

// TaskSignaler is implemented by drivers that can send a signal to a
// running task (drover alloc signal). Signal takes a signal's name
// (ParseSignal's forms); a task that is not running wraps
// ErrTaskNotFound.
type TaskSignaler interface {
	Signal(h *TaskHandle, signal string) error
}

// TTYInput is a task's terminal as the input of an exec session: writes
// go to the terminal; Close types end-of-file (^D) as a user would, for
// the terminal must stay open for the command's output.
type TTYInput struct {
	f    *os.File
	once sync.Once
}

// NewTTYInput returns the input side of the terminal f.
func NewTTYInput(f *os.File) *TTYInput { return &TTYInput{f: f} }

func (t *TTYInput) Write(p []byte) (int, error) { return t.f.Write(p) }

// Close types end-of-file once.
func (t *TTYInput) Close() error {
	var err error
	t.once.Do(func() { _, err = t.f.Write([]byte{4}) })
	return err
}
