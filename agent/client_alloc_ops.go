package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/droverhq/drover/client"
	"github.com/droverhq/drover/client/allocrunner"
	"github.com/droverhq/drover/client/taskrunner"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/internal/execstream"
)

// What a user asks of a running allocation, served by the node that runs
// it (and forwarded there by the servers, see client_forward.go), as
// Nomad's:
//
//	GET /v1/client/allocation/{alloc_id}/exec?task=T&command=["sh","-c","…"]&tty=true|false
//	    a WebSocket (see internal/execstream for its messages): the
//	    command runs in the task, its input, output and terminal size
//	    streamed, its exit code the last message
//	PUT|POST /v1/client/allocation/{alloc_id}/restart  {"TaskName": "", "AllTasks": false}
//	    restarts the task (every running task without TaskName) in place;
//	    answers once they have been stopped
//	PUT|POST /v1/client/allocation/{alloc_id}/signal   {"Task": "", "Signal": "SIGUSR1"}
//	    sends the signal (SIGKILL when empty) to the task (every running
//	    task without Task)
//
// Everything that can be checked is checked before a command starts or
// the connection is upgraded, and answered as HTTP: 404 for an unknown
// allocation or task; 400 for a missing or malformed parameter, an
// unknown signal, an allocation or task that is not running, a command
// that cannot be started, a driver that cannot exec or signal. Restart
// and signal answer {"Index": 0} (Nomad's GenericResponse).

// allocOps is what these endpoints need of the client.
type allocOps interface {
	ExecTask(ctx context.Context, allocID, task string, req drivers.ExecStreamRequest) (drivers.ExecSession, error)
	RestartAlloc(ctx context.Context, allocID, task string, allTasks bool) error
	SignalAlloc(allocID, task, signal string) error
}

var _ allocOps = (*client.Agent)(nil)

// opsBodyLimit bounds the body of restart and signal.
const opsBodyLimit = 64 << 10

// opError answers a refused operation with the status its error calls
// for.
func opError(err error) error {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, client.ErrUnknownAlloc), errors.Is(err, allocrunner.ErrUnknownTask):
		code = http.StatusNotFound
	case errors.Is(err, taskrunner.ErrTaskNotRunning), errors.Is(err, drivers.ErrInvalidConfig),
		errors.Is(err, drivers.ErrExecStart), errors.Is(err, drivers.ErrExecNotSupported),
		errors.Is(err, taskrunner.ErrSignalNotSupported):
		code = http.StatusBadRequest
	}
	return &httpError{code: code, msg: err.Error()}
}

// execRequest is a parsed exec request.
type execRequest struct {
	alloc, task string
	command     []string
	tty         bool
}

func parseExecRequest(r *http.Request) (*execRequest, error) {
	q := r.URL.Query()
	er := &execRequest{alloc: r.PathValue("alloc_id"), task: q.Get("task")}
	if er.task == "" {
		return nil, badRequest("must provide task name")
	}
	raw := q.Get("command")
	if raw == "" {
		return nil, badRequest(`missing command: command must be a JSON array of strings, such as ["/bin/sh"]`)
	}
	if err := json.Unmarshal([]byte(raw), &er.command); err != nil {
		return nil, badRequest(`command must be a JSON array of strings, such as ["/bin/sh"] (got %q)`, raw)
	}
	if len(er.command) == 0 || er.command[0] == "" {
		return nil, badRequest("missing command: the command array is empty")
	}
	if v := q.Get("tty"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, badRequest("tty must be true or false (got %q)", v)
		}
		er.tty = b
	}
	return er, nil
}

// upgrader accepts a WebSocket from a program (no Origin) or a page of
// the address it dialled; a request a server forwarded is compared with
// the address the caller dialled (X-Forwarded-Host).
var upgrader = websocket.Upgrader{
	ReadBufferSize: 4096, WriteBufferSize: 4096,
	CheckOrigin: func(r *http.Request) bool {
		origin := r.Header.Get("Origin")
		if origin == "" {
			return true
		}
		u, err := url.Parse(origin)
		if err != nil {
			return false
		}
		host := r.Host
		if r.Header.Get(ClientForwardedHeader) != "" && r.Header.Get("X-Forwarded-Host") != "" {
			host = r.Header.Get("X-Forwarded-Host")
		}
		return strings.EqualFold(u.Host, host)
	},
}

func (h *clientHandler) exec(w http.ResponseWriter, r *http.Request) {
	er, err := parseExecRequest(r)
	if err == nil && !websocket.IsWebSocketUpgrade(r) {
		err = badRequest("exec is a WebSocket endpoint: the request must ask to upgrade (Upgrade: websocket)")
	}
	if err != nil {
		writeClientError(w, err)
		return
	}
	// The command lives as long as this handler: Serve returns when it
	// ended or the caller went away.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	srv := execstream.NewServer()
	if er.tty {
		srv.SizeFirst(ttySizeWait)
	}
	sess, err := h.ops.ExecTask(ctx, er.alloc, er.task, drivers.ExecStreamRequest{
		Command: er.command, TTY: er.tty, Stdout: srv.Stdout(), Stderr: srv.Stderr(),
	})
	if err != nil {
		srv.Discard()
		answerClientError(w, r, opError(err))
		return
	}
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		// The upgrader answered the caller.
		srv.Discard()
		sess.Kill()
		_, _ = sess.Wait()
		return
	}
	h.logger.Debug("exec started", "alloc_id", er.alloc, "task", er.task, "command", er.command[0], "tty", er.tty)
	code, err := srv.Serve(conn, execSession{sess})
	if err != nil {
		h.logger.Debug("exec ended", "alloc_id", er.alloc, "task", er.task, "exit_code", code, "error", err)
		return
	}
	h.logger.Debug("exec ended", "alloc_id", er.alloc, "task", er.task, "exit_code", code)
}

// ttySizeWait bounds how long a TTY exec's input waits for the client's
// terminal size.
const ttySizeWait = 500 * time.Millisecond

// execSession adapts a driver's session to the protocol's.
type execSession struct{ drivers.ExecSession }

func (s execSession) Resize(height, width int) error {
	return s.ExecSession.Resize(drivers.TerminalSize{Height: height, Width: width})
}

// genericResponse is Nomad's GenericResponse.
type genericResponse struct {
	Index uint64
}

// decodeOps decodes an optional JSON body.
func decodeOps(w http.ResponseWriter, r *http.Request, v any) error {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, opsBodyLimit))
	if err != nil {
		return badRequest("reading the request body: %v", err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return badRequest("malformed request body: %v", err)
	}
	return nil
}

// allocRestartRequest is Nomad's AllocationRestartRequest.
type allocRestartRequest struct {
	TaskName string
	AllTasks bool
}

func (h *clientHandler) restart(w http.ResponseWriter, r *http.Request) {
	var req allocRestartRequest
	if err := decodeOps(w, r, &req); err != nil {
		writeClientError(w, err)
		return
	}
	if req.TaskName != "" && req.AllTasks {
		writeClientError(w, badRequest("TaskName and AllTasks cannot both be set"))
		return
	}
	if err := h.ops.RestartAlloc(r.Context(), r.PathValue("alloc_id"), req.TaskName, req.AllTasks); err != nil {
		writeClientError(w, opError(err))
		return
	}
	writeJSON(w, genericResponse{})
}

// allocSignalRequest is Nomad's AllocSignalRequest.
type allocSignalRequest struct {
	Task   string
	Signal string
}

// defaultSignal is what alloc signal sends without -s, as Nomad's.
const defaultSignal = "SIGKILL"

func (h *clientHandler) signal(w http.ResponseWriter, r *http.Request) {
	var req allocSignalRequest
	if err := decodeOps(w, r, &req); err != nil {
		writeClientError(w, err)
		return
	}
	if req.Signal == "" {
		req.Signal = defaultSignal
	}
	if _, err := drivers.ParseSignal(req.Signal); err != nil {
		writeClientError(w, badRequest("unknown signal %q", req.Signal))
		return
	}
	if err := h.ops.SignalAlloc(r.PathValue("alloc_id"), req.Task, req.Signal); err != nil {
		writeClientError(w, opError(err))
		return
	}
	writeJSON(w, genericResponse{})
}
