// Package execstream is the protocol of an interactive command in a task
// (alloc exec) over a WebSocket, as Nomad's: both halves, the client's
// (the CLI, apiclient) and the node's (the agent's exec endpoint).
//
// Every message is a JSON text frame. The client sends
//
//	{"stdin":{"data":"<base64>"}}       bytes for the command's input
//	{"stdin":{"close":true}}            end of the input
//	{"tty_size":{"height":H,"width":W}} the terminal's size changed
//	{}                                  a heartbeat, every 10 seconds
//
// and the node sends
//
//	{"stdout":{"data":"<base64>"}}      output (all of it, with a terminal)
//	{"stderr":{"data":"<base64>"}}      error output (without a terminal)
//	{"exited":true,"result":{"exit_code":N}}
//
// then a close frame (1000, normal closure). An error after the
// connection was upgraded ends it with a close frame whose text is the
// error (1011 for the node's failures, 1008 otherwise), which the client
// reports. The command is killed when the connection ends first.
package execstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// IOOperation is a piece of a stream: bytes, or its end.
type IOOperation struct {
	Data  []byte `json:"data,omitempty"`
	Close bool   `json:"close,omitempty"`
}

// TerminalSize is a terminal's size in characters.
type TerminalSize struct {
	Height int `json:"height,omitempty"`
	Width  int `json:"width,omitempty"`
}

// Input is a message from the client; at most one field is set, none
// for a heartbeat.
type Input struct {
	Stdin   *IOOperation  `json:"stdin,omitempty"`
	TTYSize *TerminalSize `json:"tty_size,omitempty"`
}

// ExitResult is how the command ended.
type ExitResult struct {
	ExitCode int `json:"exit_code"`
}

// Output is a message from the node; at most one of Stdout, Stderr and
// Result is set (Result with Exited).
type Output struct {
	Stdout *IOOperation `json:"stdout,omitempty"`
	Stderr *IOOperation `json:"stderr,omitempty"`
	Exited bool         `json:"exited,omitempty"`
	Result *ExitResult  `json:"result,omitempty"`
}

// Timings of the protocol.
const (
	// HeartbeatInterval is how often the client sends a heartbeat.
	HeartbeatInterval = 10 * time.Second
	// closeWait bounds how long one side waits for the other's close
	// frame once it sent its own.
	closeWait = 5 * time.Second
	// controlWait bounds the writing of a control frame.
	controlWait = 5 * time.Second
	// MaxMessage bounds a message one side accepts (stdin chunks are
	// small; output chunks are at most a pipe read).
	MaxMessage = 4 << 20
)

// Session is the running command the node streams.
type Session interface {
	// Stdin is the command's input; Close is end of file.
	Stdin() io.WriteCloser
	// Resize changes the size of the command's terminal, if it has one.
	Resize(height, width int) error
	// Wait returns the exit code once the command ended and all its
	// output was written.
	Wait() (int, error)
	// Kill ends the command.
	Kill()
}

// Server is the node's half of one exec. Create it before the command
// starts and give the command Stdout and Stderr: what the command writes
// before the connection is upgraded waits for Serve (or is dropped after
// Discard).
type Server struct {
	ready     chan struct{}
	readyOnce sync.Once
	sizeWait  time.Duration

	mu   sync.Mutex // one writer at a time
	conn *websocket.Conn
}

// NewServer returns a server waiting for its connection.
func NewServer() *Server { return &Server{ready: make(chan struct{})} }

// SizeFirst makes Serve hold the client's input until its first terminal
// size arrives, or for at most wait: a TTY command then reads its first
// input on a terminal of the client's size. Clients send the size and
// the input on their own (Nomad's Go client from two goroutines), so the
// input may come first; without this, "stty size" typed at once could
// print 0 0.
func (s *Server) SizeFirst(wait time.Duration) { s.sizeWait = wait }

// Stdout returns the writer of the command's output ("stdout" frames).
func (s *Server) Stdout() io.Writer { return frameWriter{s: s, stderr: false} }

// Stderr returns the writer of the command's error output.
func (s *Server) Stderr() io.Writer { return frameWriter{s: s, stderr: true} }

// Discard drops the output: the connection could not be upgraded.
func (s *Server) Discard() { s.readyOnce.Do(func() { close(s.ready) }) }

type frameWriter struct {
	s      *Server
	stderr bool
}

// Write sends p as one frame. It never fails: once the connection is
// gone the output is dropped (Serve then kills the command).
func (fw frameWriter) Write(p []byte) (int, error) {
	s := fw.s
	<-s.ready
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil || len(p) == 0 {
		return len(p), nil
	}
	op := &IOOperation{Data: p}
	out := Output{Stdout: op}
	if fw.stderr {
		out = Output{Stderr: op}
	}
	if err := s.conn.WriteJSON(out); err != nil {
		s.conn = nil
	}
	return len(p), nil
}

// Serve streams the session over conn until the command ends, and sends
// its exit code; when the client goes away first, the command is killed.
// It closes conn and returns the exit code.
func (s *Server) Serve(conn *websocket.Conn, sess Session) (int, error) {
	conn.SetReadLimit(MaxMessage)
	s.mu.Lock()
	s.conn = conn
	s.mu.Unlock()
	s.readyOnce.Do(func() { close(s.ready) })
	defer conn.Close()

	readDone := make(chan error, 1)
	go func() { readDone <- readInput(conn, sess, s.sizeWait) }()
	type result struct {
		code int
		err  error
	}
	waited := make(chan result, 1)
	go func() {
		code, err := sess.Wait()
		waited <- result{code, err}
	}()

	select {
	case res := <-waited:
		s.mu.Lock()
		var err error
		if res.err != nil {
			err = s.closeWith(websocket.CloseInternalServerErr, res.err.Error())
		} else if s.conn != nil {
			err = s.conn.WriteJSON(Output{Exited: true, Result: &ExitResult{ExitCode: res.code}})
			if err == nil {
				err = s.closeWith(websocket.CloseNormalClosure, "")
			}
		}
		s.conn = nil
		s.mu.Unlock()
		select {
		case <-readDone:
		case <-time.After(closeWait):
		}
		if res.err != nil {
			return -1, res.err
		}
		return res.code, err
	case err := <-readDone:
		sess.Kill()
		s.mu.Lock()
		s.conn = nil
		s.mu.Unlock()
		conn.Close()
		res := <-waited
		if err == nil {
			err = errors.New("the client closed the connection before the command ended")
		}
		return res.code, err
	}
}

// closeWith sends a close frame; called with s.mu held. A close frame
// already sent is no error: the client, once it has the exit code, closes
// first, and the reader answers its close frame with one of its own.
func (s *Server) closeWith(code int, text string) error {
	if s.conn == nil {
		return nil
	}
	err := s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, truncate(text)), time.Now().Add(controlWait))
	if errors.Is(err, websocket.ErrCloseSent) {
		return nil
	}
	return err
}

// truncate keeps a close frame's text within the 123 bytes a control
// frame allows.
func truncate(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	return s[:max-3] + "..."
}

// readInput applies the client's messages to the session until the
// connection ends; it returns nil when the client closed it normally.
// With sizeWait, input waits for the first terminal size (or sizeWait).
func readInput(conn *websocket.Conn, sess Session, sizeWait time.Duration) error {
	var (
		mu      sync.Mutex
		holding = sizeWait > 0
		held    []*IOOperation
	)
	release := func() {
		mu.Lock()
		defer mu.Unlock()
		if holding {
			holding = false
			for _, op := range held {
				applyStdin(sess, op)
			}
			held = nil
		}
	}
	if holding {
		t := time.AfterFunc(sizeWait, release)
		defer t.Stop()
	}
	defer release()
	for {
		var in Input
		if err := conn.ReadJSON(&in); err != nil {
			if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) {
				return nil
			}
			return err
		}
		switch {
		case in.Stdin != nil:
			mu.Lock()
			if holding {
				held = append(held, in.Stdin)
				mu.Unlock()
				continue
			}
			mu.Unlock()
			applyStdin(sess, in.Stdin)
		case in.TTYSize != nil:
			_ = sess.Resize(in.TTYSize.Height, in.TTYSize.Width)
			release()
		}
	}
}

func applyStdin(sess Session, op *IOOperation) {
	if len(op.Data) > 0 {
		// A command that closed its input just loses it.
		_, _ = sess.Stdin().Write(op.Data)
	}
	if op.Close {
		_ = sess.Stdin().Close()
	}
}

// Refuse ends an upgraded connection with an error the client reports
// (close code 1008, policy violation, as Nomad's for a refused request).
func Refuse(conn *websocket.Conn, err error) {
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.ClosePolicyViolation, truncate(err.Error())),
		time.Now().Add(controlWait))
	conn.Close()
}

// ErrClosedEarly: the node closed the connection without an exit code.
var ErrClosedEarly = errors.New("websocket closed before receiving exit code")

// Run is the client's half, as Nomad's api.Allocations.Exec: it sends
// stdin (nil: none, end of file at once), the terminal's sizes from
// sizes (may be nil) and heartbeats, writes what the command outputs,
// and returns the command's exit code. An error the node closed the
// connection with is returned as is. It closes conn.
func Run(ctx context.Context, conn *websocket.Conn, stdin io.Reader, stdout, stderr io.Writer, sizes <-chan TerminalSize) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer conn.Close()
	conn.SetReadLimit(MaxMessage)
	var wmu sync.Mutex
	send := func(in *Input) error {
		wmu.Lock()
		defer wmu.Unlock()
		return conn.WriteJSON(in)
	}
	// A size already given goes first, so that the command starts on a
	// terminal of the right size, before any input.
	select {
	case sz, ok := <-sizes:
		if ok {
			_ = send(&Input{TTYSize: &sz})
		} else {
			sizes = nil
		}
	default:
	}
	sendErr := make(chan error, 1)
	go sendStdin(ctx, stdin, send, sendErr)
	go func() {
		t := time.NewTicker(HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case sz, ok := <-sizes:
				if !ok {
					sizes = nil
					continue
				}
				_ = send(&Input{TTYSize: &sz})
			case <-t.C:
				_ = send(&Input{})
			}
		}
	}()
	type result struct {
		code int
		err  error
	}
	recv := make(chan result, 1)
	go func() {
		for {
			var out Output
			if err := conn.ReadJSON(&out); err != nil {
				var ce *websocket.CloseError
				switch {
				case errors.As(err, &ce) && ce.Text != "":
					err = errors.New(ce.Text)
				case websocket.IsCloseError(err, websocket.CloseNormalClosure):
					err = ErrClosedEarly
				}
				recv <- result{-1, err}
				return
			}
			switch {
			case out.Stdout != nil:
				_, _ = stdout.Write(out.Stdout.Data)
			case out.Stderr != nil:
				_, _ = stderr.Write(out.Stderr.Data)
			case out.Exited && out.Result != nil:
				recv <- result{out.Result.ExitCode, nil}
				return
			}
		}
	}()
	select {
	case <-ctx.Done():
		return -1, ctx.Err()
	case err := <-sendErr:
		return -1, fmt.Errorf("sending input: %w", err)
	case r := <-recv:
		if r.err == nil {
			wmu.Lock()
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""),
				time.Now().Add(controlWait))
			wmu.Unlock()
		}
		return r.code, r.err
	}
}

// sendStdin forwards stdin to the node until its end, which it sends.
func sendStdin(ctx context.Context, stdin io.Reader, send func(*Input) error, errs chan<- error) {
	if stdin == nil {
		_ = send(&Input{Stdin: &IOOperation{Close: true}})
		return
	}
	buf := make([]byte, 2048)
	for ctx.Err() == nil {
		n, err := stdin.Read(buf)
		if n > 0 {
			if serr := send(&Input{Stdin: &IOOperation{Data: buf[:n]}}); serr != nil {
				return // the receiving side sees the connection end
			}
		}
		if errors.Is(err, io.EOF) {
			_ = send(&Input{Stdin: &IOOperation{Close: true}})
			return
		}
		if err != nil {
			select {
			case errs <- err:
			default:
			}
			return
		}
	}
}
