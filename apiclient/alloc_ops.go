package apiclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/droverhq/drover/internal/execstream"
)

// What a user asks of an allocation: stop (the servers), restart, signal
// and exec (the node that runs it, or a server, which forwards them).

// AllocStopResponse answers Stop, as Nomad's.
type AllocStopResponse struct {
	EvalID string
	Index  uint64
}

// Stop stops the allocation and has it replaced: PUT
// /v1/allocation/{id}/stop.
func (a *Allocations) Stop(ctx context.Context, id string) (*AllocStopResponse, error) {
	return a.StopWith(ctx, id, false)
}

// StopWith is Stop; noShutdownDelay stops the allocation without its
// group's and tasks' shutdown_delay (?no_shutdown_delay=true).
func (a *Allocations) StopWith(ctx context.Context, id string, noShutdownDelay bool) (*AllocStopResponse, error) {
	var out AllocStopResponse
	var q url.Values
	if noShutdownDelay {
		q = url.Values{"no_shutdown_delay": {"true"}}
	}
	if _, err := a.c.do(ctx, http.MethodPut, "/v1/allocation/"+url.PathEscape(id)+"/stop", q, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Restart restarts the task (every running task when task is "") in
// place: PUT /v1/client/allocation/{id}/restart.
func (a *Allocations) Restart(ctx context.Context, id, task string, allTasks bool) error {
	in := struct {
		TaskName string
		AllTasks bool
	}{task, allTasks}
	_, err := a.c.Put(ctx, "/v1/client/allocation/"+url.PathEscape(id)+"/restart", in, nil)
	return err
}

// Signal sends a signal to the task (every running task when task is
// ""): PUT /v1/client/allocation/{id}/signal.
func (a *Allocations) Signal(ctx context.Context, id, task, signal string) error {
	in := struct {
		Task   string
		Signal string
	}{task, signal}
	_, err := a.c.Put(ctx, "/v1/client/allocation/"+url.PathEscape(id)+"/signal", in, nil)
	return err
}

// TerminalSize is a terminal's size in characters.
type TerminalSize = execstream.TerminalSize

// ExecOptions is one command to run in a task.
type ExecOptions struct {
	Task    string
	Command []string
	// TTY runs the command on a terminal; Sizes (may be nil) sends the
	// terminal's size, first and whenever it changes.
	TTY   bool
	Sizes <-chan TerminalSize
	// Stdin is the command's input (nil: none, end of file at once).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// execHandshakeTimeout bounds the WebSocket's opening.
const execHandshakeTimeout = 30 * time.Second

// Exec runs a command in a task of the allocation over a WebSocket (GET
// /v1/client/allocation/{id}/exec, see internal/execstream) and returns
// its exit code. A refusal before the command starts is a StatusError;
// one after, the error the node closed the connection with.
func (a *Allocations) Exec(ctx context.Context, allocID string, o ExecOptions) (int, error) {
	cmd, err := json.Marshal(o.Command)
	if err != nil {
		return -1, err
	}
	u := *a.c.base
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return -1, fmt.Errorf("unsupported scheme %q", u.Scheme)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/client/allocation/" + url.PathEscape(allocID) + "/exec"
	u.RawQuery = url.Values{"task": {o.Task}, "command": {string(cmd)}, "tty": {strconv.FormatBool(o.TTY)}}.Encode()

	d := websocket.Dialer{HandshakeTimeout: execHandshakeTimeout, ReadBufferSize: 4096, WriteBufferSize: 4096}
	if t, ok := a.c.http.Transport.(*http.Transport); ok {
		d.TLSClientConfig = t.TLSClientConfig
		d.NetDialContext = t.DialContext
		d.Proxy = t.Proxy
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return -1, err
	}
	a.c.setToken(req)
	conn, resp, err := d.DialContext(ctx, u.String(), req.Header)
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			defer resp.Body.Close()
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			return -1, &StatusError{Code: resp.StatusCode, Msg: strings.TrimSpace(string(msg))}
		}
		return -1, fmt.Errorf("connecting to exec in allocation %s: %w", allocID, err)
	}
	stdout, stderr := o.Stdout, o.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	return execstream.Run(ctx, conn, o.Stdin, stdout, stderr, o.Sizes)
}
