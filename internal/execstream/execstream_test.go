package execstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	nomad "github.com/hashicorp/nomad/api"
)

const testTimeout = 20 * time.Second

// The frames are Nomad's, byte for byte: what drover sends decodes into
// the Nomad client's types and back to the same JSON, and what the Nomad
// client sends decodes into drover's.
func TestFramesAreNomads(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ours  any
		nomad any
		json  string
	}{
		{"stdin data", &Input{Stdin: &IOOperation{Data: []byte("hi\n")}},
			&nomad.ExecStreamingInput{Stdin: &nomad.ExecStreamingIOOperation{Data: []byte("hi\n")}}, `{"stdin":{"data":"aGkK"}}`},
		{"stdin close", &Input{Stdin: &IOOperation{Close: true}},
			&nomad.ExecStreamingInput{Stdin: &nomad.ExecStreamingIOOperation{Close: true}}, `{"stdin":{"close":true}}`},
		{"tty size", &Input{TTYSize: &TerminalSize{Height: 40, Width: 100}},
			&nomad.ExecStreamingInput{TTYSize: &nomad.TerminalSize{Height: 40, Width: 100}}, `{"tty_size":{"height":40,"width":100}}`},
		{"heartbeat", &Input{}, &nomad.ExecStreamingInput{}, `{}`},
		{"stdout", &Output{Stdout: &IOOperation{Data: []byte("out")}},
			&nomad.ExecStreamingOutput{Stdout: &nomad.ExecStreamingIOOperation{Data: []byte("out")}}, `{"stdout":{"data":"b3V0"}}`},
		{"stderr", &Output{Stderr: &IOOperation{Data: []byte("err")}},
			&nomad.ExecStreamingOutput{Stderr: &nomad.ExecStreamingIOOperation{Data: []byte("err")}}, `{"stderr":{"data":"ZXJy"}}`},
		{"exit 0", &Output{Exited: true, Result: &ExitResult{ExitCode: 0}},
			&nomad.ExecStreamingOutput{Exited: true, Result: &nomad.ExecStreamingExitResult{ExitCode: 0}}, `{"exited":true,"result":{"exit_code":0}}`},
		{"exit 3", &Output{Exited: true, Result: &ExitResult{ExitCode: 3}},
			&nomad.ExecStreamingOutput{Exited: true, Result: &nomad.ExecStreamingExitResult{ExitCode: 3}}, `{"exited":true,"result":{"exit_code":3}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours, err := json.Marshal(tc.ours)
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := json.Marshal(tc.nomad)
			if err != nil {
				t.Fatal(err)
			}
			if string(ours) != tc.json || string(theirs) != tc.json {
				t.Fatalf("drover %s, nomad %s, want %s", ours, theirs, tc.json)
			}
			back := reflect.New(reflect.TypeOf(tc.ours).Elem()).Interface()
			if err := json.Unmarshal(theirs, back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.ours) {
				t.Fatalf("nomad's frame decodes to %+v, want %+v", back, tc.ours)
			}
		})
	}
}

// fakeSession is a command that upper-cases its input to stdout, echoes
// "err:" lines to stderr, records resizes, and exits with code 3 at the
// end of its input (or -9 when killed).
type fakeSession struct {
	stdout, stderr io.Writer
	in             *io.PipeWriter
	done           chan struct{}
	code           int

	mu      sync.Mutex
	resizes []TerminalSize
	events  []string // "resize" and "in:<data>", in the order the command saw them
	killed  bool
}

func newFakeSession(stdout, stderr io.Writer) *fakeSession {
	r, w := io.Pipe()
	f := &fakeSession{stdout: stdout, stderr: stderr, in: w, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		buf := make([]byte, 64)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				line := string(buf[:n])
				f.mu.Lock()
				f.events = append(f.events, "in:"+line)
				f.mu.Unlock()
				if rest, ok := strings.CutPrefix(line, "err:"); ok {
					_, _ = io.WriteString(f.stderr, rest)
				} else {
					_, _ = io.WriteString(f.stdout, strings.ToUpper(line))
				}
			}
			if err != nil {
				f.mu.Lock()
				if f.killed {
					f.code = -9
				} else {
					f.code = 3
				}
				f.mu.Unlock()
				return
			}
		}
	}()
	return f
}

func (f *fakeSession) Stdin() io.WriteCloser { return f.in }

func (f *fakeSession) Resize(h, w int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resizes = append(f.resizes, TerminalSize{Height: h, Width: w})
	f.events = append(f.events, "resize")
	return nil
}

func (f *fakeSession) Wait() (int, error) {
	<-f.done
	return f.code, nil
}

func (f *fakeSession) Kill() {
	f.mu.Lock()
	f.killed = true
	f.mu.Unlock()
	f.in.CloseWithError(errors.New("killed"))
}

// node serves one exec: the session starts (and may write) before the
// upgrade, as the agent's endpoint does; served reports Serve's return.
type node struct {
	srv    *httptest.Server
	sess   chan *fakeSession
	served chan error
	early  string // written before the upgrade
	// earlyDone is closed once early is written.
	earlyDone chan struct{}
	refuse    error
	// sizeWait, when set, is the server's SizeFirst.
	sizeWait time.Duration
}

func newNode(t *testing.T) *node {
	n := &node{sess: make(chan *fakeSession, 1), served: make(chan error, 1), earlyDone: make(chan struct{})}
	up := websocket.Upgrader{}
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := NewServer()
		if n.sizeWait > 0 {
			s.SizeFirst(n.sizeWait)
		}
		f := newFakeSession(s.Stdout(), s.Stderr())
		if n.early != "" {
			go func() {
				io.WriteString(s.Stdout(), n.early)
				close(n.earlyDone)
			}()
		}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			s.Discard()
			f.Kill()
			return
		}
		if n.refuse != nil {
			f.Kill()
			s.Discard()
			Refuse(conn, n.refuse)
			n.served <- n.refuse
			return
		}
		n.sess <- f
		_, err = s.Serve(conn, f)
		n.served <- err
	}))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *node) dial(t *testing.T) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(n.srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// The client's input reaches the command, its stdout and stderr come
// back apart (what it wrote before the upgrade first), resizes arrive,
// and the exit code ends the session on both sides.
func TestServeAndRun(t *testing.T) {
	n := newNode(t)
	n.early = "EARLY\n"
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	sizes := make(chan TerminalSize, 1)
	sizes <- TerminalSize{Height: 24, Width: 80}
	stdinR, stdinW := io.Pipe()
	var stdout, stderr bytes.Buffer
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	conn := n.dial(t)
	go func() {
		code, err := Run(ctx, conn, stdinR, &stdout, &stderr, sizes)
		done <- result{code, err}
	}()
	f := <-n.sess
	// The command's first output comes after what the session wrote
	// before the upgrade (on a busy machine the goroutine writing it
	// could otherwise run after the session ended).
	<-n.earlyDone
	for _, line := range []string{"hello\n", "err:oops\n"} {
		if _, err := io.WriteString(stdinW, line); err != nil {
			t.Fatal(err)
		}
	}
	stdinW.Close()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the session did not end")
	}
	if r.err != nil || r.code != 3 {
		t.Fatalf("exit %d, %v", r.code, r.err)
	}
	if stdout.String() != "EARLY\nHELLO\n" || stderr.String() != "oops\n" {
		t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
	}
	f.mu.Lock()
	resizes := f.resizes
	f.mu.Unlock()
	if len(resizes) != 1 || resizes[0] != (TerminalSize{Height: 24, Width: 80}) {
		t.Fatalf("resizes %v", resizes)
	}
	select {
	case err := <-n.served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("serve did not return")
	}
}

// With SizeFirst, input sent before the terminal's size reaches the
// command after the resize; without any size it is released after the
// wait.
func TestInputWaitsForTheTerminalSize(t *testing.T) {
	for _, sendSize := range []bool{true, false} {
		n := newNode(t)
		n.sizeWait = 300 * time.Millisecond
		conn := n.dial(t)
		f := <-n.sess
		if err := conn.WriteJSON(Input{Stdin: &IOOperation{Data: []byte("first")}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		if sendSize {
			if err := conn.WriteJSON(Input{TTYSize: &TerminalSize{Height: 20, Width: 60}}); err != nil {
				t.Fatal(err)
			}
		}
		want := []string{"resize", "in:first"}
		if !sendSize {
			want = []string{"in:first"}
		}
		deadline := time.Now().Add(testTimeout)
		for {
			f.mu.Lock()
			got := slices.Clone(f.events)
			f.mu.Unlock()
			if slices.Equal(got, want) {
				break
			}
			if len(got) >= len(want) || time.Now().After(deadline) {
				t.Fatalf("size sent %v: the command saw %q, want %q", sendSize, got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
		conn.Close()
	}
}

// A client that goes away before the command ends gets it killed.
func TestClientGoneKillsTheCommand(t *testing.T) {
	n := newNode(t)
	conn := n.dial(t)
	f := <-n.sess
	conn.Close()
	select {
	case <-n.served:
	case <-time.After(testTimeout):
		t.Fatal("serve did not return")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.killed || f.code != -9 {
		t.Fatalf("killed %v code %d", f.killed, f.code)
	}
}

// An error the node closes the connection with is what the client
// returns.
func TestRefusalIsTheClientsError(t *testing.T) {
	n := newNode(t)
	n.refuse = errors.New(`task "web" of allocation a1 is not running (dead)`)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	code, err := Run(ctx, n.dial(t), nil, io.Discard, io.Discard, nil)
	if code != -1 || err == nil || err.Error() != n.refuse.Error() {
		t.Fatalf("exit %d, %v", code, err)
	}
}

// A long refusal is cut to what a close frame holds.
func TestTruncate(t *testing.T) {
	long := strings.Repeat("x", 500)
	if got := truncate(long); len(got) > 123 || !strings.HasSuffix(got, "...") {
		t.Fatalf("%d bytes: %q", len(got), got)
	}
	if truncate("short") != "short" {
		t.Fatal("a short text changed")
	}
}

// The client closes as soon as it has the exit code; when the server's
// reader has answered that close frame before Serve sends its own, the
// session still ends without an error. Serve once returned "websocket:
// close sent" for a command that ran as it should.
func TestCloseAfterTheClientClosed(t *testing.T) {
	up := websocket.Upgrader{}
	served := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			served <- err
			return
		}
		s := NewServer()
		s.conn = conn
		// The reader sees the client's close frame and answers it.
		if _, _, err := conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
			served <- err
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		served <- s.closeWith(websocket.CloseNormalClosure, "")
	}))
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("closing after the client closed: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("the server did not return")
	}
}
