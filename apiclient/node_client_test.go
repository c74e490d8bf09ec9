package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/wire"
	"github.com/droverhq/drover/structs"
)

// fakeServer answers the client endpoints with canned values and counts
// the requests it got; code, when set, is the status of every answer.
type fakeServer struct {
	srv   *httptest.Server
	code  atomic.Int32
	calls atomic.Int32
	last  atomic.Value // string: method and path of the last request
	body  atomic.Value // string: body of the last request
}

func newFakeServer(t *testing.T) *fakeServer {
	f := &fakeServer{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		f.last.Store(r.Method + " " + r.URL.String())
		b, _ := io.ReadAll(r.Body)
		f.body.Store(string(b))
		if c := f.code.Load(); c != 0 {
			http.Error(w, "failing on purpose", int(c))
			return
		}
		w.Header().Set("X-Nomad-Index", "42")
		switch r.URL.Path {
		case "/v1/internal/node/register":
			_, _ = w.Write([]byte(`{"HeartbeatTTL": 10000000000, "Index": 3}`))
		case "/v1/internal/node/n1/heartbeat":
			_, _ = w.Write([]byte(`{"HeartbeatTTL": 5000000000}`))
		case "/v1/node/n1/allocations":
			_, _ = w.Write([]byte(`[{"ID": "a1", "DesiredStatus": "run", "Job": {"ID": "web"}}]`))
		case "/v1/internal/node/n1/allocs-index":
			_, _ = w.Write([]byte(`{"Allocs": {"a1": 41, "a2": 42}, "Index": 42}`))
		case "/v1/internal/allocs/get":
			_, _ = w.Write([]byte(`{"Allocs": [{"ID": "a1", "Job": {"ID": "web"}}], "Index": 41}`))
		case "/v1/internal/allocs/update":
			_, _ = w.Write([]byte(`{"Index": 9}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestNodeClientEndpoints(t *testing.T) {
	f := newFakeServer(t)
	n, err := NewNodeClient([]string{f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := n.Register(ctx(t), &structs.Node{ID: "n1", Name: "box", Datacenter: "dc1"})
	if err != nil || reg.HeartbeatTTL != 10*time.Second || reg.Index != 3 {
		t.Fatalf("register: %+v %v", reg, err)
	}
	var sent structs.NodeRegisterRequest
	if err := json.Unmarshal([]byte(f.body.Load().(string)), &sent); err != nil || sent.Node.ID != "n1" {
		t.Fatalf("register body %s", f.body.Load())
	}
	hb, err := n.Heartbeat(ctx(t), "n1")
	if err != nil || hb.HeartbeatTTL != 5*time.Second {
		t.Fatalf("heartbeat: %+v %v", hb, err)
	}
	allocs, meta, err := n.Allocations(ctx(t), "n1", &QueryOptions{WaitIndex: 7, WaitTime: time.Minute, AllowStale: true})
	if err != nil || len(allocs) != 1 || allocs[0].Job.ID != "web" || meta.LastIndex != 42 {
		t.Fatalf("allocations: %v %+v %v", allocs, meta, err)
	}
	if got := f.last.Load().(string); got != "GET /v1/node/n1/allocations?index=7&stale=true&wait=1m0s" {
		t.Fatalf("query %q", got)
	}
	ix, meta, err := n.AllocsIndex(ctx(t), "n1", &QueryOptions{WaitIndex: 7, WaitTime: time.Minute, AllowStale: true})
	if err != nil || len(ix.Allocs) != 2 || ix.Allocs["a1"] != 41 || ix.Index != 42 || meta.LastIndex != 42 {
		t.Fatalf("allocs index: %+v %+v %v", ix, meta, err)
	}
	if got := f.last.Load().(string); got != "GET /v1/internal/node/n1/allocs-index?index=7&stale=true&wait=1m0s" {
		t.Fatalf("query %q", got)
	}
	allocs, _, err = n.GetAllocs(ctx(t), []string{"a1"}, nil, &QueryOptions{WaitIndex: 40, WaitTime: time.Minute, AllowStale: true})
	if err != nil || len(allocs) != 1 || allocs[0].Job.ID != "web" {
		t.Fatalf("get allocs: %v %v", allocs, err)
	}
	if got := f.last.Load().(string); got != "PUT /v1/internal/allocs/get?index=40&stale=true&wait=1m0s" {
		t.Fatalf("query %q", got)
	}
	if got := f.body.Load().(string); got != `{"AllocIDs":["a1"]}` {
		t.Fatalf("get allocs body %s", got)
	}
	idx, err := n.UpdateAllocs(ctx(t), []*structs.Allocation{{ID: "a1", ClientStatus: "running"}})
	if err != nil || idx != 9 {
		t.Fatalf("update: %d %v", idx, err)
	}
}

// An alloc the servers send without its job gets the caller's copy of
// it; a position past the held jobs is an error, not a nil job.
func TestNodeClientGetAllocsHeldJobs(t *testing.T) {
	var body atomic.Value
	answer := `{"Allocs": [{"ID": "a1", "Job": {"ID": "web", "Version": 3}}, {"ID": "a2", "Job": null}], "FromHeld": {"a2": 1}, "Index": 41}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body.Store(string(b))
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	n, err := NewNodeClient([]string{srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	held := []*structs.Job{
		{Namespace: "default", ID: "api", Version: 1, JobModifyIndex: 5},
		{Namespace: "default", ID: "web", Version: 2, JobModifyIndex: 9},
	}
	allocs, _, err := n.GetAllocs(ctx(t), []string{"a1", "a2"}, held, nil)
	if err != nil || len(allocs) != 2 || allocs[0].Job.Version != 3 || allocs[1].Job != held[1] {
		t.Fatalf("get allocs: %+v %v", allocs, err)
	}
	want := `{"AllocIDs":["a1","a2"],"HeldJobs":[{"Namespace":"default","ID":"api","Version":1,"JobModifyIndex":5},` +
		`{"Namespace":"default","ID":"web","Version":2,"JobModifyIndex":9}]}`
	if got := body.Load().(string); got != want {
		t.Fatalf("body %s\nwant %s", got, want)
	}
	if _, _, err := n.GetAllocs(ctx(t), []string{"a1", "a2"}, held[:1], nil); err == nil || !strings.Contains(err.Error(), "held job 1 of 1") {
		t.Fatalf("a position past the held jobs: %v", err)
	}
}

func TestNodeClientFailsOver(t *testing.T) {
	down := newFakeServer(t)
	down.srv.Close() // connection refused
	broken := newFakeServer(t)
	broken.code.Store(500)
	good := newFakeServer(t)
	n, err := NewNodeClient([]string{down.srv.URL, broken.srv.URL, good.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Heartbeat(ctx(t), "n1"); err != nil {
		t.Fatalf("heartbeat through the third server: %v", err)
	}
	if n.Current() != good.srv.URL {
		t.Fatalf("current %s, want %s", n.Current(), good.srv.URL)
	}
	// The next call goes straight to the server that answered.
	if _, err := n.Heartbeat(ctx(t), "n1"); err != nil || broken.calls.Load() != 1 || good.calls.Load() != 2 {
		t.Fatalf("second call: %v; broken %d calls, good %d", err, broken.calls.Load(), good.calls.Load())
	}
}

func TestNodeClientReturnsClientErrorsAtOnce(t *testing.T) {
	notFound := newFakeServer(t)
	other := newFakeServer(t)
	n, _ := NewNodeClient([]string{notFound.srv.URL, other.srv.URL})
	_, err := n.Heartbeat(ctx(t), "unknown")
	if !IsNotFound(err) {
		t.Fatalf("want a 404, got %v", err)
	}
	if other.calls.Load() != 0 {
		t.Fatal("a 404 was retried on another server")
	}
}

func TestNodeClientAllServersDown(t *testing.T) {
	a, b := newFakeServer(t), newFakeServer(t)
	a.code.Store(503)
	b.code.Store(500)
	n, _ := NewNodeClient([]string{a.srv.URL, b.srv.URL})
	_, err := n.Register(ctx(t), &structs.Node{ID: "n1"})
	var se *StatusError
	if err == nil || !errors.As(err, &se) || a.calls.Load() != 1 || b.calls.Load() != 1 {
		t.Fatalf("err %v; calls %d %d", err, a.calls.Load(), b.calls.Load())
	}
	if _, err := NewNodeClient(nil); !errors.Is(err, ErrNoServers) {
		t.Fatalf("no servers: %v", err)
	}
}

// A report goes in MessagePack; a server that reads only JSON answers it
// as a malformed body and gets it again in JSON, and every later report
// goes in JSON.
func TestNodeClientUpdateAllocsEncodings(t *testing.T) {
	var types []string
	jsonOnly := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		types = append(types, r.Header.Get("Content-Type"))
		var req struct{ Allocs []*structs.Allocation }
		var err error
		if !jsonOnly && r.Header.Get("Content-Type") == wire.ContentType {
			err = wire.Decode(b, &req)
		} else {
			err = json.Unmarshal(b, &req)
		}
		if err != nil {
			http.Error(w, "malformed request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if len(req.Allocs) != 1 || req.Allocs[0].ID != "a1" || req.Allocs[0].ClientStatus != "running" ||
			req.Allocs[0].TaskStates["web"].State != "running" {
			http.Error(w, "unexpected report", http.StatusTeapot)
			return
		}
		_, _ = w.Write([]byte(`{"Index": 9}`))
	}))
	t.Cleanup(srv.Close)
	n, err := NewNodeClient([]string{srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	report := []*structs.Allocation{{ID: "a1", ClientStatus: "running",
		TaskStates: map[string]*structs.TaskState{"web": {State: "running"}}}}
	update := func() {
		t.Helper()
		if idx, err := n.UpdateAllocs(ctx(t), report); err != nil || idx != 9 {
			t.Fatalf("update: %d %v", idx, err)
		}
	}

	update()
	if len(types) != 1 || types[0] != wire.ContentType {
		t.Fatalf("sent %q, want one MessagePack report", types)
	}
	jsonOnly, types = true, nil
	update()
	if len(types) != 2 || types[0] != wire.ContentType || types[1] != "application/json" {
		t.Fatalf("sent %q to a server that reads JSON only, want MessagePack then JSON", types)
	}
	types = nil
	update()
	if len(types) != 1 || types[0] != "application/json" {
		t.Fatalf("sent %q after a refusal, want JSON", types)
	}
}

// A report the server refuses for what it says (a 400 that is not about
// the encoding) is not sent again in JSON.
func TestNodeClientUpdateAllocsRefusedReportIsNotResent(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, `alloc a1: a client cannot report status "lost"`, http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	n, err := NewNodeClient([]string{srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = n.UpdateAllocs(ctx(t), []*structs.Allocation{{ID: "a1", ClientStatus: "lost"}})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusBadRequest || calls.Load() != 1 || n.jsonReports.Load() {
		t.Fatalf("err %v after %d calls (JSON from now on: %v), want the 400 after one", err, calls.Load(), n.jsonReports.Load())
	}
}

// The alloc reads ask for MessagePack and read it, with a driver config's
// numbers as JSON gives them; a server that answers JSON still works (the
// tests above).
func TestNodeClientReadsMessagePack(t *testing.T) {
	job := &structs.Job{ID: "web", Version: 3, TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: []*structs.Task{{
		Name: "t", Driver: "mock",
		Config: map[string]any{"exit_code": int64(3), "big": uint64(7), "ratio": 0.5, "args": []any{int64(-1), "x"},
			"nested": map[string]any{"port": uint64(8080)}},
	}}}}}
	var accepts atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accepts.Store(r.Header.Get("Accept"))
		var v any
		switch {
		case strings.HasSuffix(r.URL.Path, "/allocs/get"):
			v = map[string]any{"Allocs": []*structs.Allocation{{ID: "a1", JobID: "web", Job: job}}, "Index": 41}
		case strings.HasSuffix(r.URL.Path, "/allocs-index"):
			v = map[string]any{"Allocs": map[string]uint64{"a1": 40}, "Index": 41}
		default:
			http.NotFound(w, r)
			return
		}
		b, err := wire.Encode(v)
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", wire.ContentType)
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	n, err := NewNodeClient([]string{srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	allocs, _, err := n.GetAllocs(ctx(t), []string{"a1"}, nil, nil)
	if err != nil || len(allocs) != 1 || allocs[0].Job == nil {
		t.Fatalf("get allocs: %+v %v", allocs, err)
	}
	if a := accepts.Load().(string); !strings.Contains(a, wire.ContentType) {
		t.Fatalf("Accept %q", a)
	}
	got, err := json.Marshal(allocs[0].Job.TaskGroups[0].Tasks[0].Config)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"args":[-1,"x"],"big":7,"exit_code":3,"nested":{"port":8080},"ratio":0.5}`
	if string(got) != want {
		t.Fatalf("config %s, want %s", got, want)
	}
	cfg := allocs[0].Job.TaskGroups[0].Tasks[0].Config
	if _, ok := cfg["exit_code"].(float64); !ok {
		t.Fatalf("exit_code is %T, want float64 as from JSON", cfg["exit_code"])
	}
	if _, ok := cfg["nested"].(map[string]any)["port"].(float64); !ok {
		t.Fatalf("nested port is %T", cfg["nested"].(map[string]any)["port"])
	}
	idx, _, err := n.AllocsIndex(ctx(t), "n1", nil)
	if err != nil || idx.Index != 41 || idx.Allocs["a1"] != 40 {
		t.Fatalf("allocs index: %+v %v", idx, err)
	}
	if a := accepts.Load().(string); !strings.Contains(a, wire.ContentType) {
		t.Fatalf("Accept %q", a)
	}
}

// Forks of one client spread over its servers, each with its own current
// server.
func TestNodeClientForksSpread(t *testing.T) {
	addrs := []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}
	base, err := NewNodeClient(addrs)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for range 600 {
		f := base.Fork()
		if &f.clients[0] != &base.clients[0] {
			t.Fatal("a fork does not share its servers' clients")
		}
		count[f.Current()]++
	}
	for _, a := range addrs {
		// 200 expected each; 120 is more than nine standard deviations off.
		if c := count["http://"+a]; c < 120 || c > 280 {
			t.Fatalf("forks per server %v", count)
		}
	}
}

// Rebalance passes over a server a call just failed on, and comes back
// to it once the failure is RecentFailure old.
func TestNodeClientRebalanceAvoidsFailedServer(t *testing.T) {
	down := newFakeServer(t)
	down.srv.Close()
	a, b := newFakeServer(t), newFakeServer(t)
	n, err := NewNodeClient([]string{down.srv.URL, a.srv.URL, b.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Heartbeat(ctx(t), "n1"); err != nil {
		t.Fatal(err)
	}
	picked := map[string]int{}
	for range 200 {
		n.Rebalance()
		picked[n.Current()]++
	}
	if picked[down.srv.URL] != 0 || picked[a.srv.URL] == 0 || picked[b.srv.URL] == 0 {
		t.Fatalf("picked %v", picked)
	}
	n.mu.Lock()
	n.failed[0] = time.Now().Add(-RecentFailure)
	n.mu.Unlock()
	clear(picked)
	for range 200 {
		n.Rebalance()
		picked[n.Current()]++
	}
	if picked[down.srv.URL] == 0 {
		t.Fatalf("the server that failed a minute ago is never picked again: %v", picked)
	}
}
