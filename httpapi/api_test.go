package httpapi

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

func TestJobRegisterStampsEvalAndListsJob(t *testing.T) {
	b, srv := newTestAPI(t)
	code, body, hdr := do(t, "PUT", srv.URL+"/v1/jobs", webJob)
	if code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	var resp JobRegisterResponse
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.EvalID == "" || resp.Index == 0 || resp.EvalCreateIndex != resp.Index || resp.JobModifyIndex != resp.Index {
		t.Fatalf("register response %+v", resp)
	}
	if hdr.Get("X-Nomad-Index") == "" {
		t.Fatal("no X-Nomad-Index on the register answer")
	}
	eval, err := b.State().Snapshot().EvalByID(resp.EvalID)
	if err != nil || eval == nil {
		t.Fatalf("eval %s not stored: %v", resp.EvalID, err)
	}
	wantTime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	if eval.TriggeredBy != structs.EvalTriggerJobRegister || eval.Status != structs.EvalStatusPending ||
		eval.JobID != "web" || eval.CreateTime != wantTime {
		t.Fatalf("stored eval %+v", eval)
	}

	code, body, hdr = do(t, "GET", srv.URL+"/v1/jobs?prefix=we", "")
	var stubs []*structs.JobListStub
	if code != 200 || json.Unmarshal([]byte(body), &stubs) != nil || len(stubs) != 1 || stubs[0].ID != "web" {
		t.Fatalf("list: %d %s", code, body)
	}
	if hdr.Get("X-Nomad-Index") != "1" || hdr.Get("X-Nomad-KnownLeader") != "true" || hdr.Get("X-Nomad-LastContact") != "0" {
		t.Fatalf("list headers %v", hdr)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/jobs?prefix=zz", "")
	if code != 200 || strings.TrimSpace(body) != "[]" {
		t.Fatalf("list with another prefix: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/job/web", "")
	var job structs.Job
	if code != 200 || json.Unmarshal([]byte(body), &job) != nil || job.ID != "web" || job.SubmitTime != wantTime {
		t.Fatalf("job info: %d %s", code, body)
	}
}

func TestErrorsMapToStatuses(t *testing.T) {
	_, srv := newTestAPI(t)
	cases := []struct {
		name, method, path, body string
		want                     int
	}{
		{"unknown job", "GET", "/v1/job/nope", "", 404},
		{"malformed JSON", "PUT", "/v1/jobs", `{"Job": {`, 400},
		{"invalid job", "PUT", "/v1/jobs", `{"Job": {"ID": "x", "Type": "nonsense"}}`, 400},
		{"wrong method", "DELETE", "/v1/status/leader", "", 405},
		{"bad index", "GET", "/v1/jobs?index=abc", "", 400},
		{"bad wait", "GET", "/v1/jobs?wait=soon", "", 400},
		{"oversized body", "PUT", "/v1/jobs", `{"Job": "` + strings.Repeat("x", MaxBodyBytes) + `"}`, 413},
		{"join without addresses", "POST", "/v1/internal/join", `{"Self": {"ID": "x"}}`, 400},
		{"unknown path", "GET", "/v1/nothing", "", 404},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body, _ := do(t, c.method, srv.URL+c.path, c.body)
			if code != c.want {
				t.Fatalf("%s %s: status %d (%s), want %d", c.method, c.path, code, body, c.want)
			}
		})
	}
}

func TestBlockingQueryWaitsForChange(t *testing.T) {
	_, srv := newTestAPI(t)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", webJob); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	done := doAsync(t, "GET", srv.URL+"/v1/jobs?index=1&wait=30s", "")
	select {
	case a := <-done:
		t.Fatalf("blocking query returned before any change: %+v", a)
	case <-time.After(200 * time.Millisecond):
	}
	second := strings.Replace(webJob, `"web"`, `"api"`, 2)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", second); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	select {
	case a := <-done:
		if a.code != 200 || a.index != "2" || !strings.Contains(a.body, `"api"`) {
			t.Fatalf("blocking answer %+v", a)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("blocking query did not return after a change")
	}
	// With a short wait and no change, it answers the current data.
	code, _, hdr := do(t, "GET", srv.URL+"/v1/jobs?index=2&wait=50ms", "")
	if code != 200 || hdr.Get("X-Nomad-Index") != "2" {
		t.Fatalf("timed-out blocking query: %d index %s", code, hdr.Get("X-Nomad-Index"))
	}
}

func TestStatusAgentOperatorEndpoints(t *testing.T) {
	_, srv := newTestAPI(t)
	code, body, _ := do(t, "GET", srv.URL+"/v1/status/leader", "")
	if code != 200 || strings.TrimSpace(body) != `"127.0.0.1:4647"` {
		t.Fatalf("leader: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/status/peers", "")
	if code != 200 || strings.TrimSpace(body) != `["127.0.0.1:4647","127.0.0.2:4647"]` {
		t.Fatalf("peers (voters only): %d %s", code, body)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/operator/raft/configuration", "")
	var cfg structs.RaftConfiguration
	if code != 200 || json.Unmarshal([]byte(body), &cfg) != nil || len(cfg.Servers) != 3 || !cfg.Servers[0].Leader {
		t.Fatalf("raft configuration: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/agent/self", "")
	if code != 200 || !strings.Contains(body, `"config"`) || !strings.Contains(body, `"NodeName":"s1"`) {
		t.Fatalf("self: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/agent/health", "")
	if code != 200 || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("health: %d %s", code, body)
	}
}

func TestFollowerForwardsWritesAndConsistentReads(t *testing.T) {
	leader, leaderSrv := newTestAPI(t)
	follower, followerSrv := newTestAPI(t)
	follower.leader = false

	// No leader known: 500 "No cluster leader"; ?stale reads still local.
	code, body, _ := do(t, "PUT", followerSrv.URL+"/v1/jobs", webJob)
	if code != 500 || !strings.Contains(body, "No cluster leader") {
		t.Fatalf("write without leader: %d %s", code, body)
	}
	if code, _, _ := do(t, "GET", followerSrv.URL+"/v1/jobs?stale", ""); code != 200 {
		t.Fatalf("stale read without leader: %d", code)
	}
	code, body, _ = do(t, "GET", followerSrv.URL+"/v1/agent/health", "")
	if code != 500 || !strings.Contains(body, `"ok":false`) {
		t.Fatalf("health without leader: %d %s", code, body)
	}

	follower.leaderHTTP = strings.TrimPrefix(leaderSrv.URL, "http://")
	code, body, _ = do(t, "PUT", followerSrv.URL+"/v1/jobs", webJob)
	if code != 200 {
		t.Fatalf("forwarded write: %d %s", code, body)
	}
	if j, _ := leader.State().Snapshot().JobByID("default", "web"); j == nil {
		t.Fatal("the forwarded write did not reach the leader")
	}
	if j, _ := follower.State().Snapshot().JobByID("default", "web"); j != nil {
		t.Fatal("the follower wrote locally")
	}
	// A consistent read is the leader's; a stale one the local copy.
	if code, _, _ := do(t, "GET", followerSrv.URL+"/v1/job/web", ""); code != 200 {
		t.Fatalf("forwarded read: %d", code)
	}
	if code, _, _ := do(t, "GET", followerSrv.URL+"/v1/job/web?stale", ""); code != 404 {
		t.Fatalf("stale read: %d, want the local copy's 404", code)
	}
	// A malformed write is refused by the leader with 400.
	if code, _, _ := do(t, "PUT", followerSrv.URL+"/v1/jobs", "{"); code != 400 {
		t.Fatalf("forwarded malformed write: %d", code)
	}
}

func TestForwardedRequestIsNotForwardedAgain(t *testing.T) {
	b, srv := newTestAPI(t)
	b.leader = false
	b.leaderHTTP = strings.TrimPrefix(srv.URL, "http://") // would loop to itself
	req, _ := http.NewRequest("PUT", srv.URL+"/v1/jobs", strings.NewReader(webJob))
	req.Header.Set(ForwardedHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Fatalf("status %d, want 500", resp.StatusCode)
	}
}

func TestPanicBecomes500(t *testing.T) {
	rt := route{"GET /v1/test/panic", localRoute, public, func(*Server, http.ResponseWriter, *http.Request) (any, error) {
		panic("boom")
	}}
	s := New(newFakeBackend(), nil)
	s.mux.Handle(rt.pattern, s.wrap(rt))
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/test/panic", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), "boom") {
		t.Fatalf("panic answer: %d %s", rec.Code, rec.Body.String())
	}
}

// A follower keeps its connections to the leader for the next forwarded
// requests, however many ran at once: a second burst as large as the
// first opens no new connection.
func TestForwardingReusesConnectionsToTheLeader(t *testing.T) {
	const burst = 100
	leader := newFakeBackend()
	var opened atomic.Int64
	// The leader answers a burst only once all of it has arrived, so that
	// every burst holds burst connections at once.
	var mu sync.Mutex
	arrived, release := 0, make(chan struct{})
	api := New(leader, nil).Handler()
	barrier := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived++
		ch := release
		if arrived == burst {
			arrived, release = 0, make(chan struct{})
			close(ch)
		}
		mu.Unlock()
		select {
		case <-ch:
		case <-time.After(20 * time.Second):
		}
		api.ServeHTTP(w, r)
	})
	leaderSrv := httptest.NewUnstartedServer(barrier)
	leaderSrv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	leaderSrv.Start()
	t.Cleanup(leaderSrv.Close)
	follower, followerSrv := newTestAPI(t)
	follower.leader = false
	follower.leaderHTTP = strings.TrimPrefix(leaderSrv.URL, "http://")

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: burst}}
	t.Cleanup(client.CloseIdleConnections)
	round := func() int64 {
		before := opened.Load()
		var wg sync.WaitGroup
		for range burst {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get(followerSrv.URL + "/v1/jobs")
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("forwarded read: %d", resp.StatusCode)
				}
			}()
		}
		wg.Wait()
		return opened.Load() - before
	}
	first := round()
	second := round()
	if first != burst || second != 0 {
		t.Fatalf("connections opened to the leader: %d in the first burst, %d in the second; want the second to reuse them", first, second)
	}
}

// The forwarder's proxy copies answers with pooled buffers of the size
// io.Copy would allocate; a buffer of another size is not kept.
func TestForwarderPoolsItsCopyBuffers(t *testing.T) {
	f := newForwarder(nil, "", nil)
	pool, ok := f.proxy.BufferPool.(*proxyBuffers)
	if !ok {
		t.Fatalf("proxy buffer pool %T, want *proxyBuffers", f.proxy.BufferPool)
	}
	b := pool.Get()
	if len(b) != proxyBufferSize {
		t.Fatalf("buffer of %d bytes, want %d", len(b), proxyBufferSize)
	}
	pool.Put(make([]byte, 10))
	if got := pool.Get(); len(got) != proxyBufferSize {
		t.Fatalf("after a foreign Put: buffer of %d bytes, want %d", len(got), proxyBufferSize)
	}
}

// BenchmarkForwardedWrite times a job registration a follower forwards
// to the leader (both in this process, on loopback), with its bytes
// allocated per request.
func BenchmarkForwardedWrite(b *testing.B) {
	leader := newFakeBackend()
	leaderSrv := httptest.NewServer(New(leader, nil).Handler())
	b.Cleanup(leaderSrv.Close)
	follower := newFakeBackend()
	follower.leader = false
	follower.leaderHTTP = strings.TrimPrefix(leaderSrv.URL, "http://")
	followerSrv := httptest.NewServer(New(follower, nil).Handler())
	b.Cleanup(followerSrv.Close)
	b.ReportAllocs()
	for b.Loop() {
		benchDo(b, http.MethodPut, followerSrv.URL+"/v1/jobs", webJob)
	}
}
