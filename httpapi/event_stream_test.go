package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
)

// newEventAPI is an API over a fake backend whose FSM publishes into a
// buffer of size entries; conn, when set, is called on each accepted
// connection (to shrink its buffers).
func newEventAPI(t *testing.T, size int, cfg EventStreamConfig, conn func(net.Conn)) (*fakeBackend, *httptest.Server) {
	t.Helper()
	b := newFakeBackend()
	cfg.Buffer = stream.NewBuffer(size)
	b.fsm.SetEvents(cfg.Buffer)
	srv := httptest.NewUnstartedServer(New(b, nil, WithEventStream(cfg)).Handler())
	if conn != nil {
		srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context { conn(c); return ctx }
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return b, srv
}

func registerJob(t *testing.T, b *fakeBackend, id string) {
	t.Helper()
	job := statetestJob(id)
	if _, _, err := b.Apply(context.Background(), fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job,
		Eval: &structs.Evaluation{ID: structs.GenerateUUID(), Namespace: "default", JobID: id, Status: structs.EvalStatusPending,
			Type: structs.JobTypeService, TriggeredBy: structs.EvalTriggerJobRegister}}); err != nil {
		t.Fatal(err)
	}
}

// recv returns the next batch of events (heartbeats are not passed on by
// the client), failing on an error or after a bounded wait.
func recv(t *testing.T, ch <-chan *nomad.Events) *nomad.Events {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("event stream closed")
		}
		if ev.Err != nil {
			t.Fatalf("event stream: %v", ev.Err)
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return nil
}

// The official client subscribes by topic and key, decodes Nomad's
// payloads, and resumes after an index.
func TestEventStreamNomadClientTopicKeyAndIndex(t *testing.T) {
	b, srv := newEventAPI(t, 32, EventStreamConfig{}, nil)
	nc := nomadClient(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, err := nc.EventStream().Stream(ctx, map[nomad.Topic][]string{nomad.TopicJob: {"web"}, nomad.TopicEvaluation: nil}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	registerJob(t, b, "api") // Job:api is filtered out; its evaluation is not
	registerJob(t, b, "web")

	first := recv(t, ch)
	if len(first.Events) != 1 || first.Events[0].Topic != nomad.TopicEvaluation || first.Events[0].Type != "JobRegistered" {
		t.Fatalf("first batch %+v", first)
	}
	eval, err := first.Events[0].Evaluation()
	if err != nil || eval == nil || eval.JobID != "api" || eval.TriggeredBy != "job-register" {
		t.Fatalf("evaluation payload %+v, %v", eval, err)
	}
	second := recv(t, ch)
	if second.Index <= first.Index || len(second.Events) != 2 {
		t.Fatalf("second batch %+v", second)
	}
	var job *nomad.Job
	for _, e := range second.Events {
		if e.Topic == nomad.TopicJob {
			if e.Key != "web" || e.Index != second.Index || e.Type != "JobRegistered" {
				t.Fatalf("job event %+v", e)
			}
			if job, err = e.Job(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if job == nil || *job.ID != "web" || *job.Type != "service" || len(job.TaskGroups) != 1 || *job.TaskGroups[0].Name != "g" {
		t.Fatalf("job payload %+v", job)
	}

	// Resuming after the first batch starts at the second.
	ch2, err := nc.EventStream().Stream(ctx, map[nomad.Topic][]string{nomad.TopicJob: {"*"}, nomad.TopicEvaluation: {"*"}}, first.Index+1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again := recv(t, ch2); again.Index != second.Index {
		t.Fatalf("resume after %d started at %d, want %d", first.Index, again.Index, second.Index)
	}
}

// A stream with nothing to say sends a heartbeat frame {} each interval.
func TestEventStreamHeartbeats(t *testing.T) {
	_, srv := newEventAPI(t, 8, EventStreamConfig{Heartbeat: 20 * time.Millisecond}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/event/stream?topic=Node", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	for range 3 {
		if !sc.Scan() {
			t.Fatalf("stream ended: %v", sc.Err())
		}
		if sc.Text() != "{}" {
			t.Fatalf("frame %q, want a heartbeat", sc.Text())
		}
	}
}

// A subscriber that does not read while many entries are written holds
// nothing up: every write finishes, and once it reads again it gets what
// was in flight, then an error frame, and the stream ends.
func TestEventStreamSlowReaderDropped(t *testing.T) {
	small := func(c net.Conn) {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetWriteBuffer(4096)
		}
	}
	b, srv := newEventAPI(t, 8, EventStreamConfig{WriteTimeout: time.Minute}, small)
	dialer := &net.Dialer{Control: nil}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4096)
		}
		return c, err
	}}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/event/stream?topic=Job&topic=Evaluation", nil)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	// Hundreds of entries, each with a job and its evaluation: far more
	// than the socket buffers and the ring hold.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 400 {
			registerJob(t, b, "job-"+strings.Repeat("x", 200)+"-"+string(rune('a'+i%26))+time.Now().Format("150405.000000000"))
		}
	}()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("writes blocked behind a subscriber that does not read")
	}

	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	frames, last := 0, ""
	for sc.Scan() {
		frames++
		last = sc.Text()
	}
	var end struct{ Error string }
	if err := json.Unmarshal([]byte(last), &end); err != nil || !strings.Contains(end.Error, "fell behind") {
		t.Fatalf("last of %d frames %q, want the error frame", frames, last)
	}
	if frames > 400 {
		t.Fatalf("%d frames: the subscriber was not dropped", frames)
	}
	if st := b.fsm.Events().Stats(); st.Dropped != 1 || st.Subscribers != 0 {
		t.Fatalf("buffer stats %+v", st)
	}
}

// The official client sees a dropped stream as an error on its channel.
func TestEventStreamNomadClientSeesDrop(t *testing.T) {
	b, srv := newEventAPI(t, 4, EventStreamConfig{}, nil)
	nc := nomadClient(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, err := nc.EventStream().Stream(ctx, map[nomad.Topic][]string{nomad.TopicJob: nil}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	registerJob(t, b, "first")
	recv(t, ch)
	// Drop the subscription as the buffer would drop a slow one: more
	// entries than the ring holds while the server's reader is held up is
	// hard to arrange through a real socket here (the test above does);
	// a reset ends it the same way, with an error frame and EOF.
	b.fsm.Events().Reset()
	select {
	case ev := <-ch:
		if ev == nil || ev.Err == nil {
			t.Fatalf("after the drop: %+v, want an error", ev)
		}
	case <-ctx.Done():
		t.Fatal("no error after the drop")
	}
}

func TestEventStreamBadRequests(t *testing.T) {
	_, srv := newEventAPI(t, 4, EventStreamConfig{}, nil)
	for _, q := range []string{"topic=Jobs", "topic=Job&index=x", "topic=Evaluation:::*"} {
		code, body, _ := do(t, "GET", srv.URL+"/v1/event/stream?"+q, "")
		if code != 400 {
			t.Fatalf("%s: %d %s", q, code, body)
		}
	}
	// A key with a colon, as Nomad's: its words.
	if code, body, _ := do(t, "GET", srv.URL+"/v1/event/stream?topic=Evaluation:::*", ""); !strings.Contains(body, "Invalid key value pair for topic: Evaluation:::*") {
		t.Fatalf("a key with a colon: %d %s", code, body)
	}
	// Without a buffer the route says so.
	plain := httptest.NewServer(New(newFakeBackend(), nil).Handler())
	defer plain.Close()
	if code, body, _ := do(t, "GET", plain.URL+"/v1/event/stream", ""); code != 501 {
		t.Fatalf("no buffer: %d %s", code, body)
	}
}

// With ACLs on, each topic needs its capability, as Nomad's: read-job for
// Job (and Allocation, Deployment, Evaluation), node:read for Node, a
// management token for every topic. (The fixture's API has no event
// buffer: a request let through is answered 501.)
func TestEventStreamACL(t *testing.T) {
	f := newACLFixture(t)
	for _, c := range []struct {
		who, query string
		code       int
	}{
		{"reader", "topic=Job", 501},
		{"reader", "topic=Deployment:web&topic=Node", 501},
		{"reader", "topic=*", 403},
		{"reader", "", 403},
		{"reader", "topic=Job&namespace=prod", 403},
		{"writer", "topic=Allocation", 501},
		{"writer", "topic=Node", 403},
		{"mgmt", "", 501},
		{"", "topic=Job", 403},
		{"expired", "topic=Job", 403},
	} {
		code, body := f.do(t, c.who, "GET", "/v1/event/stream?"+c.query, "")
		if code != c.code {
			t.Errorf("%s ?%s: %d %s, want %d", c.who, c.query, code, body, c.code)
		}
	}
}
