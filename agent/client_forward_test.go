package agent

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// fakeState is a nodeLookup over fixed allocations and nodes.
type fakeState struct {
	allocs map[string]string // alloc ID → node ID
	nodes  map[string]*structs.Node
}

func (f *fakeState) AllocNodeID(id string) (string, error) { return f.allocs[id], nil }
func (f *fakeState) Node(id string) (*structs.Node, error) { return f.nodes[id], nil }

// recorder is a node's HTTP API that records what reaches it.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, r)
	rec.mu.Unlock()
	fmt.Fprintf(w, "node answered %s?%s", r.URL.Path, r.URL.RawQuery)
}

func (rec *recorder) count() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.reqs)
}

func getVia(t *testing.T, h http.Handler, path string, header ...string) (int, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A server-only agent forwards a client request to the registered node
// of the allocation (or node_id), one hop, marked; it answers itself for
// unknown allocations and nodes, nodes that are down or silent, and
// requests that were forwarded already.
func TestServerForwardsClientRequestsToTheAllocationsNode(t *testing.T) {
	rec := &recorder{}
	node := httptest.NewServer(rec)
	t.Cleanup(node.Close)
	silent := loopback.Addr(t) // nothing listens there
	state := &fakeState{
		allocs: map[string]string{"a1": "n1", "a-down": "n-down", "a-silent": "n-silent", "a-gone": "n-gone", "a-noaddr": "n-noaddr"},
		nodes: map[string]*structs.Node{
			"n1":       {ID: "n1", Name: "c1", HTTPAddr: strings.TrimPrefix(node.URL, "http://"), Status: structs.NodeStatusReady},
			"n-down":   {ID: "n-down", Name: "c2", HTTPAddr: strings.TrimPrefix(node.URL, "http://"), Status: structs.NodeStatusDown},
			"n-silent": {ID: "n-silent", Name: "c3", HTTPAddr: silent, Status: structs.NodeStatusReady},
			"n-noaddr": {ID: "n-noaddr", Name: "c4", Status: structs.NodeStatusReady},
		},
	}
	cr := newClientRouter(nil, func(string) bool { return false }, "", state, hclog.NewNullLogger())

	for _, path := range []string{
		"/v1/client/allocation/a1/stats?task=app",
		"/v1/client/fs/logs/a1?task=app&type=stdout&plain=true",
		"/v1/client/stats?node_id=n1",
	} {
		code, body := getVia(t, cr, path, "X-Drover-Join-Signature", "secret")
		if code != http.StatusOK || body != "node answered "+path {
			t.Errorf("GET %s: %d %q", path, code, body)
		}
	}
	if rec.count() != 3 {
		t.Fatalf("%d requests reached the node", rec.count())
	}
	for _, r := range rec.reqs {
		if r.Header.Get(ClientForwardedHeader) == "" || r.Header.Get("X-Drover-Join-Signature") != "" ||
			r.Header.Get("X-Forwarded-For") == "" {
			t.Errorf("forwarded headers %v", r.Header)
		}
	}

	for path, want := range map[string]struct {
		code int
		msg  string
	}{
		"/v1/client/allocation/nope/stats":                 {404, `unknown allocation "nope"`},
		"/v1/client/allocation/a-gone/stats":               {404, `unknown node "n-gone"`},
		"/v1/client/allocation/a-down/stats":               {502, "node c2 (n-down) is down"},
		"/v1/client/allocation/a-noaddr/stats":             {502, "advertises no HTTP address"},
		"/v1/client/fs/logs/a-silent?task=app&type=stdout": {502, "node c3 (n-silent) at " + silent + " did not answer"},
		"/v1/client/stats?node_id=nope":                    {404, `unknown node "nope"`},
		"/v1/client/stats":                                 {400, "missing node_id"},
		"/v1/client/gc":                                    {404, "runs no client"},
	} {
		code, body := getVia(t, cr, path)
		if code != want.code || !strings.Contains(body, want.msg) {
			t.Errorf("GET %s: %d %q, want %d %q", path, code, body, want.code, want.msg)
		}
	}
	// A request that was forwarded already is never forwarded again.
	if code, body := getVia(t, cr, "/v1/client/allocation/a1/stats", ClientForwardedHeader, "1"); code != 404 ||
		!strings.Contains(body, "runs no client") {
		t.Errorf("forwarded request: %d %q", code, body)
	}
	if rec.count() != 3 {
		t.Fatalf("%d requests reached the node, want still 3", rec.count())
	}
}

// An agent whose client holds the allocation (or is the node asked for)
// answers itself; one whose client does not forwards, unless the request
// was forwarded already or names its own node.
func TestClientAgentAnswersWhatItHoldsAndForwardsTheRest(t *testing.T) {
	rec := &recorder{}
	node := httptest.NewServer(rec)
	t.Cleanup(node.Close)
	local := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "local "+r.URL.Path, http.StatusTeapot)
	})
	state := &fakeState{
		allocs: map[string]string{"mine": "self", "theirs": "n1", "was-mine": "self"},
		nodes: map[string]*structs.Node{
			"self": {ID: "self", HTTPAddr: "127.0.0.1:1", Status: structs.NodeStatusReady},
			"n1":   {ID: "n1", HTTPAddr: strings.TrimPrefix(node.URL, "http://"), Status: structs.NodeStatusReady},
		},
	}
	holds := func(id string) bool { return id == "mine" }
	cr := newClientRouter(local, holds, "self", state, hclog.NewNullLogger())
	for path, want := range map[string]int{
		"/v1/client/allocation/mine/stats":     http.StatusTeapot,
		"/v1/client/stats":                     http.StatusTeapot,
		"/v1/client/stats?node_id=self":        http.StatusTeapot,
		"/v1/client/allocation/was-mine/stats": http.StatusTeapot, // its own node: no hop to itself
		"/v1/client/allocation/theirs/stats":   http.StatusOK,
		"/v1/client/stats?node_id=n1":          http.StatusOK,
	} {
		if code, body := getVia(t, cr, path); code != want {
			t.Errorf("GET %s: %d %q, want %d", path, code, body, want)
		}
	}
	if code, _ := getVia(t, cr, "/v1/client/allocation/theirs/stats", ClientForwardedHeader, "1"); code != http.StatusTeapot {
		t.Errorf("a forwarded request for another node's alloc: %d, want the local answer", code)
	}
	// Without server state (a client-only agent) nothing is forwarded.
	alone := newClientRouter(local, holds, "self", nil, hclog.NewNullLogger())
	if code, _ := getVia(t, alone, "/v1/client/allocation/theirs/stats"); code != http.StatusTeapot {
		t.Errorf("a client-only agent: %d, want the local answer", code)
	}
	if rec.count() != 2 {
		t.Fatalf("%d requests reached the other node, want 2", rec.count())
	}
}

// A forwarded log streams: what the node writes reaches the caller while
// the node is still writing.
func TestForwardedLogsStream(t *testing.T) {
	release := make(chan struct{})
	releaseNode := sync.OnceFunc(func() { close(release) })
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "first line")
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprintln(w, "second line")
	}))
	t.Cleanup(node.Close)
	t.Cleanup(releaseNode)
	state := &fakeState{
		allocs: map[string]string{"a1": "n1"},
		nodes:  map[string]*structs.Node{"n1": {ID: "n1", HTTPAddr: strings.TrimPrefix(node.URL, "http://"), Status: "ready"}},
	}
	srv := httptest.NewServer(newClientRouter(nil, func(string) bool { return false }, "", state, hclog.NewNullLogger()))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/client/fs/logs/a1?follow=true", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "first line\n" {
		t.Fatalf("first line before the node finished: %q %v", line, err)
	}
	releaseNode()
	if line, err := br.ReadString('\n'); err != nil || line != "second line\n" {
		t.Fatalf("second line: %q %v", line, err)
	}
}

func TestTargetOfReadsTheAllocationOrNode(t *testing.T) {
	for path, want := range map[string]clientTarget{
		"/v1/client/allocation/a1/stats":       {allocID: "a1"},
		"/v1/client/allocation/a1/checks":      {allocID: "a1"},
		"/v1/client/fs/logs/a2?task=t":         {allocID: "a2"},
		"/v1/client/fs/cat/a3?path=alloc/logs": {allocID: "a3"},
		"/v1/client/stats?node_id=n1":          {host: true, nodeID: "n1"},
		"/v1/client/stats":                     {host: true},
		"/v1/client/gc":                        {},
		"/v1/client/fs/logs":                   {},
	} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		if got := targetOf(r); got != want {
			t.Errorf("%s: %+v, want %+v", path, got, want)
		}
	}
}
