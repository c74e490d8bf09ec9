package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/internal/wire"
	"github.com/droverhq/drover/structs"
)

// syncAccepting sends an allocs-sync request, its body in MessagePack or
// JSON (by contentType), accepting accept, and decodes the answer in the
// encoding its Content-Type names.
func syncAccepting(t *testing.T, url, contentType, accept string, req AllocsSyncRequest) (int, string, AllocsSyncResponse, http.Header) {
	t.Helper()
	var body []byte
	var err error
	if wire.IsMediaType(contentType) {
		body, err = wire.Encode(&req)
	} else {
		body, err = json.Marshal(&req)
	}
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", contentType)
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	code, out, hdr := send(t, r)
	var got AllocsSyncResponse
	if code == 200 {
		if hdr.Get("Content-Type") == wire.ContentType {
			err = wire.Decode([]byte(out), &got)
		} else {
			err = json.Unmarshal([]byte(out), &got)
		}
		if err != nil {
			t.Fatalf("decoding %s answer: %v", hdr.Get("Content-Type"), err)
		}
	}
	return code, out, got, hdr
}

// The sync answers the node's index map and, in the same answer, the
// allocs changed past Since in their client's form: no task states,
// metrics or state changes, no job the client holds.
func TestAllocsSync(t *testing.T) {
	b, srv := newClientTestAPI(t)
	first := placeAlloc(t, b, "a-1", "n-1")
	placeAlloc(t, b, "a-other", "n-2")
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/internal/allocs/update",
		`{"Allocs":[{"ID":"a-1","ClientStatus":"running","TaskStates":{"t":{"State":"running"}}}]}`); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	second := placeAlloc(t, b, "a-2", "n-1")
	url := srv.URL + "/v1/internal/node/n-1/allocs-sync"

	code, body, got, hdr := syncAccepting(t, url, wire.ContentType, wire.ContentType, AllocsSyncRequest{})
	if code != 200 || len(got.Allocs) != 2 || got.Allocs["a-1"] != first || got.Allocs["a-2"] != second ||
		got.Index != second || hdr.Get("X-Nomad-Index") != strconv.FormatUint(second, 10) {
		t.Fatalf("sync from 0: %d %s %+v", code, body, got)
	}
	if len(got.Changed) != 2 || got.Changed[0].ID != "a-1" || got.Changed[1].ID != "a-2" || got.FromHeld != nil {
		t.Fatalf("changed from 0: %+v", got.Changed)
	}
	for _, a := range got.Changed {
		if a.Job == nil || a.Job.ID != "web" || a.TaskStates != nil || a.Metrics != nil || a.AllocStates != nil {
			t.Fatalf("alloc %s in the client's form: job %v, task states %v, metrics %v", a.ID, a.Job, a.TaskStates, a.Metrics)
		}
	}
	if got.Changed[0].ClientStatus != structs.AllocClientStatusRunning {
		t.Fatalf("a-1's client status %q, want what the servers hold", got.Changed[0].ClientStatus)
	}
	// The stored alloc keeps its task states.
	if a, _ := b.State().Snapshot().AllocByID("a-1"); a == nil || a.TaskStates["t"] == nil {
		t.Fatalf("stored alloc lost its task states: %+v", a)
	}

	// Since the first placement, only a-2 changed; held, its job stays home.
	ref := got.Changed[1].Job.Ref()
	other := structs.JobRef{Namespace: "default", ID: "web", Version: 9}
	code, body, got, _ = syncAccepting(t, url, wire.ContentType, wire.ContentType,
		AllocsSyncRequest{Since: first, HeldJobs: []structs.JobRef{other, ref}})
	if code != 200 || len(got.Allocs) != 2 || len(got.Changed) != 1 || got.Changed[0].ID != "a-2" ||
		got.Changed[0].Job != nil || got.FromHeld["a-2"] != 1 || len(got.FromHeld) != 1 {
		t.Fatalf("sync since %d with the job held: %d %s %+v", first, code, body, got)
	}
	// Nothing changed since the second: the index alone.
	code, body, got, _ = syncAccepting(t, url, wire.ContentType, wire.ContentType, AllocsSyncRequest{Since: second})
	if code != 200 || len(got.Allocs) != 2 || len(got.Changed) != 0 || got.FromHeld != nil {
		t.Fatalf("sync since %d: %d %s %+v", second, code, body, got)
	}

	// A client that holds what the servers hold at or below Since says so
	// with its digest, and the index map is left out; a digest of
	// anything else (an alloc the servers dropped, an older index) gets
	// the map.
	held := structs.AllocsDigest(0).Add("a-1", first).Add("a-2", second)
	code, body, got, _ = syncAccepting(t, url, wire.ContentType, wire.ContentType, AllocsSyncRequest{Since: second, Known: held})
	if code != 200 || !got.KnownCurrent || got.Allocs != nil || len(got.Changed) != 0 || got.Index != second {
		t.Fatalf("sync with the servers' digest: %d %s %+v", code, body, got)
	}
	// Blocking on the index with nothing changed: the query waits without
	// an answer, and at the end of the wait answers the full read's.
	start := time.Now()
	code, body, got, hdr = syncAccepting(t, url+fmt.Sprintf("?index=%d&wait=100ms", second), wire.ContentType, wire.ContentType, AllocsSyncRequest{Since: second, Known: held})
	if code != 200 || !got.KnownCurrent || got.Allocs != nil || len(got.Changed) != 0 || got.Index != second ||
		hdr.Get("X-Nomad-Index") != strconv.FormatUint(second, 10) || time.Since(start) < 100*time.Millisecond {
		t.Fatalf("blocking sync with nothing changed: %d %s %+v %v after %v", code, body, got, hdr, time.Since(start))
	}
	code, body, got, _ = syncAccepting(t, url, "application/json", "", AllocsSyncRequest{Since: first, Known: structs.AllocsDigest(0).Add("a-1", first)})
	if code != 200 || !got.KnownCurrent || got.Allocs != nil || len(got.Changed) != 1 || got.Changed[0].ID != "a-2" {
		t.Fatalf("sync since %d with the servers' digest, in JSON: %d %s %+v", first, code, body, got)
	}
	for _, wrong := range []structs.AllocsDigest{
		held.Add("a-dropped", 3),
		structs.AllocsDigest(0).Add("a-1", first-1).Add("a-2", second),
		structs.AllocsDigest(0).Add("a-1", first),
	} {
		code, body, got, _ = syncAccepting(t, url, wire.ContentType, wire.ContentType, AllocsSyncRequest{Since: second, Known: wrong})
		if code != 200 || got.KnownCurrent || len(got.Allocs) != 2 || got.Allocs["a-2"] != second {
			t.Fatalf("sync with digest %d: %d %s %+v", wrong, code, body, got)
		}
	}

	// Blocking: the client's own report does not answer it, a stop does,
	// with the stopped alloc.
	type result struct {
		code int
		got  AllocsSyncResponse
	}
	done := make(chan result, 1)
	go func() {
		code, _, got, _ := syncAccepting(t, fmt.Sprintf("%s?index=%d&wait=20s", url, second), wire.ContentType, wire.ContentType,
			AllocsSyncRequest{Since: second, HeldJobs: []structs.JobRef{ref}})
		done <- result{code, got}
	}()
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/internal/allocs/update",
		`{"Allocs":[{"ID":"a-2","ClientStatus":"running"}]}`); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	select {
	case r := <-done:
		t.Fatalf("answered on the client's own report: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	_, stopIdx, err := b.Apply(context.Background(), fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocsStopped: []*structs.AllocStopUpdate{{AllocID: "a-1", DesiredDescription: structs.AllocNotNeeded}}, UpdatedAt: 9,
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.code != 200 || r.got.Index != stopIdx || len(r.got.Changed) != 1 || r.got.Changed[0].ID != "a-1" ||
			r.got.Changed[0].DesiredStatus != structs.AllocDesiredStatusStop || r.got.Changed[0].Job != nil || r.got.FromHeld["a-1"] != 0 {
			t.Fatalf("blocking answer %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the blocking sync did not answer")
	}

	// A node the servers do not know has none, not an error.
	code, body, got, _ = syncAccepting(t, srv.URL+"/v1/internal/node/nobody/allocs-sync", "application/json", "", AllocsSyncRequest{})
	if code != 200 || got.Allocs == nil || len(got.Allocs) != 0 || len(got.Changed) != 0 {
		t.Fatalf("unknown node: %d %s", code, body)
	}

	// Bad bodies are a 400 naming the body, never a 500.
	for _, c := range []struct {
		name, contentType string
		body              []byte
	}{
		{"malformed MessagePack", wire.ContentType, []byte{0xde, 0xad, 0xbe, 0xef}},
		{"JSON named MessagePack", wire.AltContentType, []byte(`{"Since":1}`)},
		{"malformed JSON", "application/json", []byte(`{"Since":`)},
		{"a string for Since", "application/json", []byte(`{"Since":"x"}`)},
	} {
		code, resp := doTyped(t, "PUT", url, c.contentType, c.body)
		if code != http.StatusBadRequest || !strings.Contains(resp, "body") {
			t.Errorf("%s: %d %s, want a 400 about the body", c.name, code, resp)
		}
	}
}

// A client that asks in MessagePack (by either name of the media type)
// and one that asks in JSON are given the same data.
func TestAllocsSyncSameInMessagePackAndJSON(t *testing.T) {
	b, srv := newClientTestAPI(t)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/internal/node/register", nodeBody); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	first := placeAlloc(t, b, "a-1", "n-1")
	placeAlloc(t, b, "a-2", "n-1")
	healthy := true
	if _, _, err := b.Apply(context.Background(), fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{ID: "a-2", ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)},
			TaskStates: map[string]*structs.TaskState{"t": {State: structs.TaskStateRunning,
				Events: []*structs.TaskEvent{{Type: structs.TaskStarted, Time: 7}}}}}},
		UpdatedAt: 8,
	}); err != nil {
		t.Fatal(err)
	}
	url := srv.URL + "/v1/internal/node/n-1/allocs-sync"
	for _, req := range []AllocsSyncRequest{{}, {Since: first}} {
		var answers []string
		for _, c := range []struct{ contentType, accept, wantType string }{
			{"application/json", "", "application/json"},
			{"application/json", "application/json", "application/json"},
			{wire.ContentType, wire.ContentType + ", application/json;q=0.9", wire.ContentType},
			{wire.AltContentType, wire.AltContentType, wire.ContentType},
		} {
			code, body, got, hdr := syncAccepting(t, url, c.contentType, c.accept, req)
			if code != 200 || hdr.Get("Content-Type") != c.wantType {
				t.Fatalf("%s accepting %q: %d %q %s", c.contentType, c.accept, code, hdr.Get("Content-Type"), body)
			}
			j, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			answers = append(answers, string(j))
		}
		for i, a := range answers[1:] {
			if a != answers[0] {
				t.Fatalf("since %d: answer %d differs:\n%s\nagainst JSON's\n%s", req.Since, i+1, a, answers[0])
			}
		}
		if !strings.Contains(answers[0], `"a-2"`) {
			t.Fatalf("since %d: %s", req.Since, answers[0])
		}
	}
}

// Every message of the clients' protocol comes back from MessagePack as
// it went in, times, bytes, maps and nils included, and reads the same as
// its JSON.
func TestClientProtocolRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 7, 4, 5, 6, 789, time.UTC)
	healthy := false
	job := &structs.Job{ID: "web", Name: "web", Namespace: "default", Type: structs.JobTypeService, Version: 3,
		JobModifyIndex: 118, Payload: []byte{0, 1, 2, 0xff}, Meta: map[string]string{"k": "v"},
		TaskGroups: []*structs.TaskGroup{{Name: "g", Count: 2, Tasks: []*structs.Task{{Name: "t", Driver: "mock",
			Config: map[string]any{"run_for": "1s", "list": []any{"a", "b"}, "nested": map[string]any{"x": "y"}}}}}}}
	alloc := func(id string, j *structs.Job) *structs.Allocation {
		return &structs.Allocation{ID: id, Namespace: "default", Name: "web.g[0]", NodeID: "n-1", JobID: "web", Job: j,
			TaskGroup: "g", DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
			ClientDescription: "Tasks are running", DeploymentID: "d-1",
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: at},
			TaskStates: map[string]*structs.TaskState{"t": {State: structs.TaskStateRunning, StartedAt: at, Restarts: 2,
				Events: []*structs.TaskEvent{{Type: structs.TaskStarted, Time: at.UnixNano(), Message: "started"}}}},
			NetworkStatus: &structs.AllocNetworkStatus{InterfaceName: "eth0", Address: "10.0.0.2"},
			CreateIndex:   10, ModifyIndex: 12, AllocModifyIndex: 11, CreateTime: at.UnixNano(), ModifyTime: at.UnixNano()}
	}
	ref := job.Ref()
	for _, c := range []struct {
		name string
		in   any
		out  func() any
	}{
		{"NodeRegisterResponse", &NodeRegisterResponse{HeartbeatTTL: 10 * time.Second, Index: 4}, func() any { return &NodeRegisterResponse{} }},
		{"NodeHeartbeatResponse", &NodeHeartbeatResponse{HeartbeatTTL: time.Second}, func() any { return &NodeHeartbeatResponse{} }},
		{"NodeAllocsIndexResponse", &NodeAllocsIndexResponse{Allocs: map[string]uint64{"a": 1, "b": 2}, Index: 2}, func() any { return &NodeAllocsIndexResponse{} }},
		{"NodeAllocsIndexResponse, none", &NodeAllocsIndexResponse{Allocs: map[string]uint64{}, Index: 2}, func() any { return &NodeAllocsIndexResponse{} }},
		{"AllocsGetRequest", &AllocsGetRequest{AllocIDs: []string{"a", "b"}, HeldJobs: []structs.JobRef{ref}}, func() any { return &AllocsGetRequest{} }},
		{"AllocsGetRequest, nothing held", &AllocsGetRequest{AllocIDs: []string{"a"}}, func() any { return &AllocsGetRequest{} }},
		{"AllocsGetResponse", &AllocsGetResponse{Allocs: []*structs.Allocation{alloc("a", job), alloc("b", nil)},
			FromHeld: map[string]int{"b": 0}, Index: 12}, func() any { return &AllocsGetResponse{} }},
		{"AllocsSyncRequest", &AllocsSyncRequest{Since: 9, HeldJobs: []structs.JobRef{ref, {Namespace: "x", ID: "y"}},
			Known: structs.AllocsDigest(0).Add("a", 1)}, func() any { return &AllocsSyncRequest{} }},
		{"AllocsSyncRequest, from 0", &AllocsSyncRequest{}, func() any { return &AllocsSyncRequest{} }},
		{"AllocsSyncResponse", &AllocsSyncResponse{Allocs: map[string]uint64{"a": 11, "b": 11}, Changed: []*structs.Allocation{
			clientView(alloc("a", job)), clientView(alloc("b", nil))}, FromHeld: map[string]int{"b": 0}, Index: 12},
			func() any { return &AllocsSyncResponse{} }},
		{"AllocsSyncResponse, nothing changed", &AllocsSyncResponse{Allocs: map[string]uint64{"a": 11}, Index: 12}, func() any { return &AllocsSyncResponse{} }},
		{"AllocsSyncResponse, known current", &AllocsSyncResponse{KnownCurrent: true, Changed: []*structs.Allocation{clientView(alloc("a", job))}, Index: 12},
			func() any { return &AllocsSyncResponse{} }},
		{"AllocUpdateRequest", &AllocUpdateRequest{Allocs: []*structs.Allocation{{ID: "a", ClientStatus: structs.AllocClientStatusFailed,
			ClientDescription: "Failed tasks", TaskStates: alloc("a", nil).TaskStates,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: at},
			NetworkStatus:    &structs.AllocNetworkStatus{}}}}, func() any { return &AllocUpdateRequest{} }},
		{"AllocUpdateResponse", &AllocUpdateResponse{Index: 43}, func() any { return &AllocUpdateResponse{} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := wire.Encode(c.in)
			if err != nil {
				t.Fatal(err)
			}
			got := c.out()
			if err := wire.Decode(b, got); err != nil {
				t.Fatal(err)
			}
			// Jobs' driver configs come back with MessagePack's numbers;
			// the client reads them as JSON's (apiclient.pointAtHeld).
			for _, a := range allocsOf(got) {
				if a != nil && a.Job != nil {
					a.Job.JSONNumbers()
				}
			}
			if !reflect.DeepEqual(normalize(c.in), normalize(got)) {
				t.Fatalf("round trip:\n in  %s\n out %s", mustJSON(t, c.in), mustJSON(t, got))
			}
			// JSON carries the same.
			viaJSON := c.out()
			if err := json.Unmarshal([]byte(mustJSON(t, c.in)), viaJSON); err != nil {
				t.Fatal(err)
			}
			if w, j := mustJSON(t, got), mustJSON(t, viaJSON); w != j {
				t.Fatalf("MessagePack and JSON differ:\n%s\n%s", w, j)
			}
		})
	}
	// Times keep their instant to the nanosecond.
	b, err := wire.Encode(&AllocsSyncResponse{Changed: []*structs.Allocation{alloc("a", nil)}})
	if err != nil {
		t.Fatal(err)
	}
	var got AllocsSyncResponse
	if err := wire.Decode(b, &got); err != nil {
		t.Fatal(err)
	}
	if ts := got.Changed[0].DeploymentStatus.Timestamp; !ts.Equal(at) {
		t.Fatalf("health timestamp %v, want %v", ts, at)
	}
	if st := got.Changed[0].TaskStates["t"].StartedAt; !st.Equal(at) {
		t.Fatalf("task start %v, want %v", st, at)
	}
}

// allocsOf returns the allocations a protocol message carries.
func allocsOf(v any) []*structs.Allocation {
	switch m := v.(type) {
	case *AllocsGetResponse:
		return m.Allocs
	case *AllocsSyncResponse:
		return m.Changed
	case *AllocUpdateRequest:
		return m.Allocs
	}
	return nil
}

// normalize is v as JSON decoded into a free-form value, so that two
// messages compare by content (a time's location, an empty map left out
// by one encoding) rather than by representation.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return err.Error()
	}
	return out
}
