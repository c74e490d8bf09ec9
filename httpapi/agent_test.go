package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/server"
	"github.com/droverhq/drover/structs"
)

// agentBackend serves the agent endpoints' interfaces over a fakeBackend:
// its log is an intercept logger the test writes to, its targets a map.
type agentBackend struct {
	*fakeBackend
	debug   bool
	log     hclog.InterceptLogger
	targets map[string]string // server ID or node ID → HTTP address
	pool    server.WorkerPoolConfig
}

func (b *agentBackend) AgentTarget(nodeID, serverID string) (string, error) {
	id := nodeID + serverID
	if id == "self" {
		return "", nil
	}
	if addr, ok := b.targets[id]; ok {
		return addr, nil
	}
	return "", Errorf(http.StatusInternalServerError, "unknown Nomad server %s", id)
}

func (b *agentBackend) DebugEnabled() bool { return b.debug }

func (b *agentBackend) RegisterLogSink(s hclog.SinkAdapter) func() {
	b.log.RegisterSink(s)
	return func() { b.log.DeregisterSink(s) }
}

func (b *agentBackend) SchedulerWorkerConfig() server.WorkerPoolConfig { return b.pool }

func (b *agentBackend) SetSchedulerWorkerConfig(c server.WorkerPoolConfig) (server.WorkerPoolConfig, error) {
	if err := c.Validate(); err != nil {
		return b.pool, err
	}
	b.pool = c
	return c, nil
}

func (b *agentBackend) SchedulerWorkersInfo() []server.WorkerInfo {
	out := make([]server.WorkerInfo, b.pool.NumSchedulers)
	for i := range out {
		out[i] = server.WorkerInfo{ID: "w", EnabledSchedulers: b.pool.EnabledSchedulers, Status: "Started", WorkloadStatus: "WaitingToDequeue"}
	}
	return out
}

func (b *agentBackend) ServerName() string { return "node-1.global" }

func newAgentAPI(t *testing.T, debug bool) (*agentBackend, *httptest.Server) {
	t.Helper()
	b := &agentBackend{fakeBackend: newFakeBackend(), debug: debug, targets: map[string]string{},
		log:  hclog.NewInterceptLogger(&hclog.LoggerOptions{Level: hclog.Error, Output: testLogWriter{t}}),
		pool: server.WorkerPoolConfig{NumSchedulers: 1, EnabledSchedulers: []string{"service", server.CoreScheduler}}}
	srv := httptest.NewServer(New(b, nil).Handler())
	t.Cleanup(srv.Close)
	return b, srv
}

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// The profiles: served with enable_debug when ACLs are off (403 without),
// Go's named profiles by name (404 for another), the target forwarded.
func TestAgentPprof(t *testing.T) {
	_, off := newAgentAPI(t, false)
	if code, body, _ := do(t, "GET", off.URL+"/v1/agent/pprof/heap", ""); code != 403 || !strings.Contains(body, "enable_debug") {
		t.Errorf("without enable_debug: %d %s", code, body)
	}
	b, srv := newAgentAPI(t, true)
	code, body, hdr := do(t, "GET", srv.URL+"/v1/agent/pprof/heap", "")
	if code != 200 || hdr.Get("Content-Disposition") != `attachment; filename="heap"` || len(body) == 0 {
		t.Errorf("heap: %d %v", code, hdr)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/agent/pprof/goroutine?debug=1", ""); code != 200 || !strings.Contains(body, "goroutine profile:") {
		t.Errorf("goroutine text: %d %.80s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/agent/pprof/invalid", ""); code != 404 || !strings.Contains(body, "Pprof profile not found profile: invalid") {
		t.Errorf("unknown profile: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/agent/pprof/profile?seconds=100000", ""); code != 400 || !strings.Contains(body, "seconds must be at most") {
		t.Errorf("too long: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/agent/pprof/heap?node_id=a&server_id=b", ""); code != 400 || !strings.Contains(body, "Cannot target node and server simultaneously") {
		t.Errorf("both targets: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/agent/pprof/heap?server_id=unknown.global", ""); code != 500 || !strings.Contains(body, "unknown Nomad server unknown.global") {
		t.Errorf("unknown server: %d %s", code, body)
	}
	// Another server's profile is its own: the request is forwarded
	// there, without its target, and answered as it answers.
	var got *http.Request
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		_, _ = w.Write([]byte("other's profile"))
	}))
	defer other.Close()
	b.targets["s2"] = strings.TrimPrefix(other.URL, "http://")
	if code, body, _ := do(t, "GET", srv.URL+"/v1/agent/pprof/heap?server_id=s2&debug=1", ""); code != 200 || body != "other's profile" {
		t.Errorf("forwarded: %d %s", code, body)
	}
	if got == nil || got.URL.RawQuery != "debug=1" || got.Header.Get(AgentForwardedHeader) == "" {
		t.Errorf("forwarded request: %+v", got)
	}
}

// The monitor streams the agent's log at the level asked, whatever level
// the agent writes at: as text with plain=true, else as Nomad's frames.
func TestAgentMonitor(t *testing.T) {
	b, srv := newAgentAPI(t, false)
	if code, body, _ := do(t, "GET", srv.URL+"/v1/agent/monitor?log_level=loud", ""); code != 400 || !strings.Contains(body, "Unknown log level: loud") {
		t.Errorf("bad level: %d %s", code, body)
	}
	for _, plain := range []bool{true, false} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		url := srv.URL + "/v1/agent/monitor?log_level=debug"
		if plain {
			url += "&plain=true"
		}
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-ctx.Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
				b.log.Named("test").Debug("hello from the agent", "i", i)
			}
		}()
		var line string
		if plain {
			line, err = bufio.NewReader(resp.Body).ReadString('\n')
		} else {
			var f struct{ Data []byte }
			err = json.NewDecoder(resp.Body).Decode(&f)
			line = string(f.Data)
		}
		cancel()
		<-done
		resp.Body.Close()
		if err != nil || !strings.Contains(line, "[DEBUG] test: hello from the agent") {
			t.Errorf("plain=%v: %q, %v", plain, line, err)
		}
	}
}

// The worker pool: read, resized, and an invalid pool refused with
// Nomad's text.
func TestAgentSchedulers(t *testing.T) {
	_, srv := newAgentAPI(t, false)
	code, body, _ := do(t, "GET", srv.URL+"/v1/agent/schedulers/config", "")
	if code != 200 || body != `{"server_id":"node-1.global","num_schedulers":1,"enabled_schedulers":["service","_core"]}`+"\n" {
		t.Errorf("config: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/agent/schedulers/config", `{"num_schedulers":0,"enabled_schedulers":["_core","system"]}`); code != 200 || !strings.Contains(body, `"num_schedulers":0`) {
		t.Errorf("set: %d %s", code, body)
	}
	for _, bad := range []string{
		`{"num_schedulers":-1,"enabled_schedulers":["_core"]}`,
		`{"num_schedulers":1,"enabled_schedulers":["service"]}`,
		`{"num_schedulers":1,"enabled_schedulers":["_core","fast"]}`,
		`{"num_schedulers":` + strings.Repeat("9", 3) + `0000,"enabled_schedulers":["_core"]}`,
	} {
		if code, body, _ := do(t, "PUT", srv.URL+"/v1/agent/schedulers/config", bad); code != 400 || strings.TrimSpace(body) != "Invalid request" {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/agent/schedulers/config", `{`); code != 400 || !strings.Contains(body, "Invalid request: ") {
		t.Errorf("malformed: %d %s", code, body)
	}
	_, _, _ = do(t, "PUT", srv.URL+"/v1/agent/schedulers/config", `{"num_schedulers":1,"enabled_schedulers":["_core","batch"]}`)
	code, body, _ = do(t, "GET", srv.URL+"/v1/agent/schedulers", "")
	if code != 200 || !strings.Contains(body, `"enabled_schedulers":["_core","batch"]`) || !strings.Contains(body, `"status":"Started"`) {
		t.Errorf("info: %d %s", code, body)
	}
}

// The scheduler configuration: drover's default until written, replaced
// with a check-and-set, and an unknown algorithm refused.
func TestSchedulerConfiguration(t *testing.T) {
	_, srv := newTestAPI(t)
	code, body, _ := do(t, "GET", srv.URL+"/v1/operator/scheduler/configuration", "")
	if code != 200 || !strings.Contains(body, `"SchedulerAlgorithm":"binpack"`) || !strings.Contains(body, `"MemoryOversubscriptionEnabled":true`) {
		t.Fatalf("default: %d %s", code, body)
	}
	set := `{"SchedulerAlgorithm":"spread","PauseEvalBroker":true,"PreemptionConfig":{"SystemSchedulerEnabled":true},"NodeLimitForFeasibilityChecks":7}`
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/operator/scheduler/configuration?cas=5", set); code != 200 || !strings.Contains(body, `"Updated":false`) {
		t.Errorf("stale cas: %d %s", code, body)
	}
	code, body, _ = do(t, "PUT", srv.URL+"/v1/operator/scheduler/configuration?cas=0", set)
	if code != 200 || !strings.Contains(body, `"Updated":true`) {
		t.Fatalf("cas on none: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/operator/scheduler/configuration", "")
	for _, want := range []string{`"SchedulerAlgorithm":"spread"`, `"PauseEvalBroker":true`, `"SystemSchedulerEnabled":true`, `"NodeLimitForFeasibilityChecks":7`, `"MemoryOversubscriptionEnabled":false`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("stored: %d %s lacks %s", code, body, want)
		}
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/operator/scheduler/configuration", `{"SchedulerAlgorithm":"fastest"}`); code != 400 || !strings.Contains(body, "invalid scheduler algorithm: fastest") {
		t.Errorf("unknown algorithm: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/operator/scheduler/configuration?cas=x", `{}`); code != 400 || !strings.Contains(body, "Error parsing cas value") {
		t.Errorf("bad cas: %d %s", code, body)
	}
}

// RejectJobRegistration refuses registrations, dispatches and scalings of
// tokens that are not management ones, with Nomad's text.
func TestRejectJobRegistration(t *testing.T) {
	f := newACLFixture(t)
	if _, _, err := f.b.Apply(context.Background(), fsm.SchedulerSetConfigRequestType, &structs.SchedulerSetConfigRequest{
		Config: structs.SchedulerConfiguration{RejectJobRegistration: true, MemoryOversubscriptionEnabled: true}}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/jobs", "/v1/job/web/scale", "/v1/job/web/dispatch"} {
		if code, body := f.do(t, "writer", "PUT", path, webJob); code != 403 || !strings.Contains(body, structs.ErrJobRegistrationDisabled) {
			t.Errorf("writer %s: %d %s", path, code, body)
		}
	}
	if code, body := f.do(t, "mgmt", "PUT", "/v1/jobs", webJob); code != 200 {
		t.Errorf("management: %d %s", code, body)
	}
}
