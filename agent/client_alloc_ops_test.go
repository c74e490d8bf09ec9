package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/internal/execstream"
	"github.com/droverhq/drover/structs"
)

// execURL is the WebSocket address of an exec.
func execURL(addr, allocID, task, command string, tty bool) string {
	q := url.Values{"task": {task}, "command": {command}, "tty": {fmt.Sprint(tty)}}
	return "ws://" + addr + "/v1/client/allocation/" + allocID + "/exec?" + q.Encode()
}

// taskEvents reads a task's event types from the servers' copy of the
// allocation.
func taskEvents(t *testing.T, s *Agent, allocID, task string) []*structs.TaskEvent {
	t.Helper()
	a, _, err := api(t, s).Allocations().Info(bounded(t), allocID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := a.TaskStates[task]; st != nil {
		return st.Events
	}
	return nil
}

func hasEvent(events []*structs.TaskEvent, typ, msg string) bool {
	for _, e := range events {
		if e.Type == typ && e.DisplayMessage == msg {
			return true
		}
	}
	return false
}

// Through a server-only agent's address, the official Go client runs a
// command in a client node's task over a WebSocket the server forwards
// to the node: stdin reaches it, stdout and stderr come back apart, the
// exit code is the command's. Restart and signal act on the task in
// place, with Nomad's events; bad requests are refused before anything
// runs.
func TestExecRestartAndSignalThroughAServersAddress(t *testing.T) {
	s := startAgent(t, "s1", 1)
	waitLeader(t, s)
	c := startClientAgent(t, s, "c1")
	allocID := runRawExec(t, s, "ops", `trap 'echo got-usr1' USR1; echo ready; while :; do sleep 0.1; done`)
	nc := nomadAPI(t, s)
	logs := func() string {
		_, body := get(t, "http://"+s.HTTPAddr()+"/v1/client/fs/logs/"+allocID+"?task=app&type=stdout&plain=true")
		return body
	}
	waitFor(t, "the task's trap", func() error {
		if !strings.Contains(logs(), "ready") {
			return fmt.Errorf("log %q", logs())
		}
		return nil
	})

	// No NodeID: the Go client cannot reach the node itself and asks the
	// server, which forwards the WebSocket.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code, err := nc.Allocations().Exec(ctx, &nomad.Allocation{ID: allocID}, "app", false,
		[]string{"/bin/sh", "-c", `read line; echo "in:$line pwd:$(basename $(pwd))"; echo to-stderr >&2; exit 3`},
		strings.NewReader("hello\n"), &stdout, &stderr, nil, nil)
	if err != nil || code != 3 {
		t.Fatalf("exec: code %d, %v (stdout %q stderr %q)", code, err, stdout.String(), stderr.String())
	}
	if stdout.String() != "in:hello pwd:app\n" || stderr.String() != "to-stderr\n" {
		t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
	}

	// The same through the server with a plain WebSocket client, on a
	// terminal: the server forwards the upgrade to the node.
	conn, _, err := websocket.DefaultDialer.Dial(execURL(s.HTTPAddr(), allocID, "app", `["/bin/sh"]`, true), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tty bytes.Buffer
	sizes := make(chan execstream.TerminalSize, 1)
	sizes <- execstream.TerminalSize{Height: 33, Width: 77}
	code, err = execstream.Run(ctx, conn, strings.NewReader("stty size; exit 4\n"), &tty, &tty, sizes)
	if err != nil || code != 4 || !strings.Contains(tty.String(), "33 77") {
		t.Fatalf("exec on a terminal through the server: code %d, %v, output %q", code, err, tty.String())
	}

	// Refusals, through the server and on the node alike: a request that
	// does not parse is an HTTP answer before any upgrade; what the node
	// refuses is answered inside the WebSocket, closed with its text, as
	// Nomad's (its client returns the text as the error).
	for _, addr := range []string{s.HTTPAddr(), c.HTTPAddr()} {
		for _, tc := range []struct {
			url  string
			code int // HTTP status; 0: upgraded, then closed with 1008
			msg  string
		}{
			{execURL(addr, allocID, "nope", `["true"]`, false), 0, `unknown task "nope"`},
			{execURL(addr, "0c8a3c0e-0000-0000-0000-000000000000", "app", `["true"]`, false), 0, `Unknown allocation "0c8a3c0e-0000-0000-0000-000000000000"`},
			{execURL(addr, allocID, "app", `[]`, false), 400, "missing command"},
			{execURL(addr, allocID, "app", `sh`, false), 400, "JSON array"},
			{execURL(addr, allocID, "app", `["/no/such/command"]`, false), 0, "cannot start the command"},
		} {
			conn, resp, err := websocket.DefaultDialer.Dial(tc.url, nil)
			if tc.code == 0 {
				if err != nil {
					t.Errorf("%s: not upgraded: %v", tc.url, err)
					continue
				}
				_, _, rerr := conn.ReadMessage()
				conn.Close()
				var ce *websocket.CloseError
				if !errors.As(rerr, &ce) || ce.Code != websocket.ClosePolicyViolation || !strings.Contains(ce.Text, tc.msg) {
					t.Errorf("%s: %v, want a close 1008 %q", tc.url, rerr, tc.msg)
				}
				continue
			}
			if err == nil {
				conn.Close()
				t.Errorf("%s: upgraded", tc.url)
				continue
			}
			var body bytes.Buffer
			if resp != nil {
				_, _ = body.ReadFrom(resp.Body)
				resp.Body.Close()
			}
			if resp == nil || resp.StatusCode != tc.code || !strings.Contains(body.String(), tc.msg) {
				t.Errorf("%s: %v %q, want %d %q", tc.url, resp, body.String(), tc.code, tc.msg)
			}
		}
	}

	// Signal: the task traps it; Nomad's event is recorded.
	if err := nc.Allocations().Signal(&nomad.Allocation{ID: allocID}, nil, "app", "SIGUSR1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the trap to run", func() error {
		if !strings.Contains(logs(), "got-usr1") {
			return fmt.Errorf("log %q", logs())
		}
		return nil
	})
	waitFor(t, "the Signaling event", func() error {
		if !hasEvent(taskEvents(t, s, allocID, "app"), structs.TaskSignaling, "Task being sent signal SIGUSR1") {
			return fmt.Errorf("events %+v", taskEvents(t, s, allocID, "app"))
		}
		return nil
	})
	if err := nc.Allocations().Signal(&nomad.Allocation{ID: allocID}, nil, "app", "SIGNOPE"); err == nil ||
		!strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), `unknown signal "SIGNOPE"`) {
		t.Fatalf("unknown signal: %v", err)
	}
	if err := nc.Allocations().Signal(&nomad.Allocation{ID: allocID}, nil, "nope", "SIGUSR1"); err == nil ||
		!strings.Contains(err.Error(), "404") {
		t.Fatalf("unknown task: %v", err)
	}

	// Restart in place: the same allocation, the task started again, not
	// counted against the policy.
	if err := nc.Allocations().Restart(&nomad.Allocation{ID: allocID}, "app", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the restarted task", func() error {
		a, _, err := api(t, s).Allocations().Info(bounded(t), allocID, nil)
		if err != nil {
			return err
		}
		st := a.TaskStates["app"]
		if st == nil || st.Restarts != 1 || st.State != structs.TaskStateRunning || strings.Count(logs(), "ready") != 2 {
			return fmt.Errorf("state %+v, log %q", st, logs())
		}
		if !hasEvent(st.Events, structs.TaskRestartSignal, structs.TaskRestartUserRequested) ||
			!hasEvent(st.Events, structs.TaskRestarting, "Task restarting in 0s") {
			return fmt.Errorf("events %+v", st.Events)
		}
		return nil
	})
	if err := nc.Allocations().Restart(&nomad.Allocation{ID: allocID}, "nope", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("restart of an unknown task: %v", err)
	}
	resp, err := http.Post("http://"+c.HTTPAddr()+"/v1/client/allocation/"+allocID+"/restart", "application/json",
		strings.NewReader(`{"TaskName":"app","AllTasks":true}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("TaskName with AllTasks: %d", resp.StatusCode)
	}
}
