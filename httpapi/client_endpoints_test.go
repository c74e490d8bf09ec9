package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/internal/wire"
	"github.com/droverhq/drover/structs"
)

// fakeClientBackend adds the leader's client services to fakeBackend,
// writing through the same real FSM.
type fakeClientBackend struct {
	*fakeBackend
	ttl     time.Duration
	beats   []string
	updates [][]*structs.Allocation
}

func (b *fakeClientBackend) RegisterNode(ctx context.Context, n *structs.Node) (time.Duration, uint64, error) {
	_, idx, err := b.Apply(ctx, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n})
	return b.ttl, idx, err
}

func (b *fakeClientBackend) NodeHeartbeat(_ context.Context, id string) (time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.beats = append(b.beats, id)
	return b.ttl, nil
}

func (b *fakeClientBackend) UpdateAllocsFromClient(ctx context.Context, allocs []*structs.Allocation) (uint64, error) {
	b.mu.Lock()
	b.updates = append(b.updates, allocs)
	b.mu.Unlock()
	_, idx, err := b.Apply(ctx, fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{Allocs: allocs, UpdatedAt: 7})
	return idx, err
}

func newClientTestAPI(t *testing.T) (*fakeClientBackend, *httptest.Server) {
	t.Helper()
	b := &fakeClientBackend{fakeBackend: newFakeBackend(), ttl: 10 * time.Second}
	srv := httptest.NewServer(New(b, nil).Handler())
	t.Cleanup(srv.Close)
	return b, srv
}

const nodeBody = `{"Node":{"ID":"n-1","Name":"box","Datacenter":"dc1","Status":"ready"}}`

func TestNodeRegisterAndHeartbeat(t *testing.T) {
	b, srv := newClientTestAPI(t)
	code, body, _ := do(t, "PUT", srv.URL+"/v1/internal/node/n-1/heartbeat", "")
	if code != 404 {
		t.Fatalf("heartbeat of an unknown node: %d %s", code, body)
	}
	code, body, hdr := do(t, "PUT", srv.URL+"/v1/internal/node/register", nodeBody)
	if code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	var reg NodeRegisterResponse
	if err := json.Unmarshal([]byte(body), &reg); err != nil || reg.HeartbeatTTL != 10*time.Second || reg.Index == 0 {
		t.Fatalf("register answer %s (%v)", body, err)
	}
	if hdr.Get("X-Nomad-Index") != strconv.FormatUint(reg.Index, 10) {
		t.Fatalf("index header %q", hdr.Get("X-Nomad-Index"))
	}
	n, err := b.State().Snapshot().NodeByID("n-1")
	if err != nil || n == nil || n.Name != "box" {
		t.Fatalf("node not stored: %+v %v", n, err)
	}
	code, body, _ = do(t, "PUT", srv.URL+"/v1/internal/node/n-1/heartbeat", "")
	var hb NodeHeartbeatResponse
	if code != 200 || json.Unmarshal([]byte(body), &hb) != nil || hb.HeartbeatTTL != 10*time.Second {
		t.Fatalf("heartbeat: %d %s", code, body)
	}
	if len(b.beats) != 1 || b.beats[0] != "n-1" {
		t.Fatalf("beats %v", b.beats)
	}
}

func TestClientEndpointsRejectBadInput(t *testing.T) {
	_, srv := newClientTestAPI(t)
	cases := []struct{ name, method, path, body string }{
		{"no node", "PUT", "/v1/internal/node/register", `{}`},
		{"no node ID", "PUT", "/v1/internal/node/register", `{"Node":{"Name":"x","Datacenter":"dc1"}}`},
		{"no datacenter", "PUT", "/v1/internal/node/register", `{"Node":{"ID":"x","Name":"x"}}`},
		{"down on register", "PUT", "/v1/internal/node/register", `{"Node":{"ID":"x","Name":"x","Datacenter":"dc1","Status":"down"}}`},
		{"malformed", "PUT", "/v1/internal/node/register", `{"Node":`},
		{"alloc without ID", "PUT", "/v1/internal/allocs/update", `{"Allocs":[{"ClientStatus":"running"}]}`},
		{"lost from a client", "PUT", "/v1/internal/allocs/update", `{"Allocs":[{"ID":"a","ClientStatus":"lost"}]}`},
		{"network status without an address", "PUT", "/v1/internal/allocs/update", `{"Allocs":[{"ID":"a","NetworkStatus":{"InterfaceName":"eth0","Address":"not-an-ip"}}]}`},
		{"bad index", "GET", "/v1/node/x/allocations?index=z", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if code, body, _ := do(t, c.method, srv.URL+c.path, c.body); code != 400 {
				t.Fatalf("%d %s", code, body)
			}
		})
	}
}

func TestClientEndpointsNeedAServer(t *testing.T) {
	_, srv := newTestAPI(t) // the plain backend has no client services
	for _, p := range []string{"/v1/internal/node/register", "/v1/internal/node/n/heartbeat", "/v1/internal/allocs/update"} {
		if code, body, _ := do(t, "PUT", srv.URL+p, nodeBody); code != 501 {
			t.Fatalf("%s: %d %s", p, code, body)
		}
	}
}

// placeAlloc commits one alloc of job "web" on the node.
func placeAlloc(t *testing.T, b *fakeClientBackend, id, node string) uint64 {
	t.Helper()
	job := &structs.Job{ID: "web", Name: "web", Namespace: "default", Type: structs.JobTypeService,
		TaskGroups: []*structs.TaskGroup{{Name: "g", Count: 1, Tasks: []*structs.Task{{Name: "t", Driver: "mock"}}}}}
	_, idx, err := b.Apply(context.Background(), fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		Job: job, AllocsPlaced: []*structs.Allocation{{ID: id, Name: "web.g[0]", NodeID: node, JobID: "web",
			Namespace: "default", TaskGroup: "g", DesiredStatus: structs.AllocDesiredStatusRun}},
		UpdatedAt: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func TestNodeAllocationsBlocksUntilItsAllocsChange(t *testing.T) {
	b, srv := newClientTestAPI(t)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/internal/node/register", nodeBody); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	first := placeAlloc(t, b, "a-1", "n-1")
	placeAlloc(t, b, "a-other", "n-2")

	code, body, hdr := do(t, "GET", srv.URL+"/v1/node/n-1/allocations", "")
	var allocs []*structs.Allocation
	if code != 200 || json.Unmarshal([]byte(body), &allocs) != nil || len(allocs) != 1 || allocs[0].ID != "a-1" ||
		allocs[0].Job == nil || allocs[0].Job.ID != "web" {
		t.Fatalf("allocations: %d %s", code, body)
	}
	if hdr.Get("X-Nomad-Index") != strconv.FormatUint(first, 10) {
		t.Fatalf("index %s, want the alloc's %d (not the later write to another node)", hdr.Get("X-Nomad-Index"), first)
	}

	// The client's report moves the index, as Nomad's Node.GetAllocs: a
	// drain monitor waits on it for allocations to stop. (Clients follow
	// allocs-index, which their own reports do not move.)
	code, body, _ = do(t, "PUT", srv.URL+"/v1/internal/allocs/update",
		`{"Allocs":[{"ID":"a-1","ClientStatus":"running","NodeID":"elsewhere","DesiredStatus":"stop"}]}`)
	var up AllocUpdateResponse
	if code != 200 || json.Unmarshal([]byte(body), &up) != nil || up.Index == 0 {
		t.Fatalf("update: %d %s", code, body)
	}
	code, body, hdr = do(t, "GET", srv.URL+"/v1/node/n-1/allocations", "")
	allocs = nil
	if code != 200 || json.Unmarshal([]byte(body), &allocs) != nil || len(allocs) != 1 ||
		allocs[0].ClientStatus != structs.AllocClientStatusRunning || allocs[0].DesiredStatus != structs.AllocDesiredStatusRun ||
		allocs[0].NodeID != "n-1" {
		t.Fatalf("after the client's report: %d %s", code, body)
	}
	reported := hdr.Get("X-Nomad-Index")
	if reported != strconv.FormatUint(up.Index, 10) {
		t.Fatalf("index %s after the client's report at %d", reported, up.Index)
	}
	if got := b.updates[0][0]; got.NodeID != "" || got.DesiredStatus != "" {
		t.Fatalf("client update passed server fields on: %+v", got)
	}

	done := doAsync(t, "GET", fmt.Sprintf("%s/v1/node/n-1/allocations?index=%s&wait=20s", srv.URL, reported), "")
	// A change to another node's allocs does not answer the query; the
	// servers stopping this node's alloc does.
	placeAlloc(t, b, "a-other-2", "n-2")
	_, stopIdx, err := b.Apply(context.Background(), fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocsStopped: []*structs.AllocStopUpdate{{AllocID: "a-1", DesiredDescription: structs.AllocNotNeeded}}, UpdatedAt: 9,
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-done:
		allocs = nil
		if a.code != 200 || json.Unmarshal([]byte(a.body), &allocs) != nil || len(allocs) != 1 {
			t.Fatalf("blocking answer %d %s", a.code, a.body)
		}
		if allocs[0].DesiredStatus != structs.AllocDesiredStatusStop || a.index != strconv.FormatUint(stopIdx, 10) {
			t.Fatalf("after the stop: %+v index %s", allocs[0], a.index)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the blocking query did not answer")
	}
}

func TestNodeAllocsIndex(t *testing.T) {
	b, srv := newClientTestAPI(t)
	// A node the servers do not know has no allocs: not an error.
	code, body, _ := do(t, "GET", srv.URL+"/v1/internal/node/nobody/allocs-index", "")
	var ix NodeAllocsIndexResponse
	if code != 200 || json.Unmarshal([]byte(body), &ix) != nil || ix.Allocs == nil || len(ix.Allocs) != 0 {
		t.Fatalf("unknown node: %d %s", code, body)
	}

	first := placeAlloc(t, b, "a-1", "n-1")
	placeAlloc(t, b, "a-other", "n-2")
	code, body, hdr := do(t, "GET", srv.URL+"/v1/internal/node/n-1/allocs-index", "")
	ix = NodeAllocsIndexResponse{}
	if code != 200 || json.Unmarshal([]byte(body), &ix) != nil || len(ix.Allocs) != 1 || ix.Allocs["a-1"] != first ||
		ix.Index != first || hdr.Get("X-Nomad-Index") != strconv.FormatUint(first, 10) {
		t.Fatalf("allocs index: %d %s (index %s), want a-1 at %d", code, body, hdr.Get("X-Nomad-Index"), first)
	}

	done := doAsync(t, "GET", fmt.Sprintf("%s/v1/internal/node/n-1/allocs-index?index=%d&wait=20s", srv.URL, first), "")
	// Neither the client's own report nor another node's change answers
	// the query; a second alloc placed on the node does.
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/internal/allocs/update",
		`{"Allocs":[{"ID":"a-1","ClientStatus":"running"}]}`); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	placeAlloc(t, b, "a-other-2", "n-2")
	select {
	case a := <-done:
		t.Fatalf("answered before the node's allocs changed: %d %s", a.code, a.body)
	case <-time.After(50 * time.Millisecond):
	}
	second := placeAlloc(t, b, "a-2", "n-1")
	select {
	case a := <-done:
		ix = NodeAllocsIndexResponse{}
		if a.code != 200 || json.Unmarshal([]byte(a.body), &ix) != nil || len(ix.Allocs) != 2 ||
			ix.Allocs["a-1"] != first || ix.Allocs["a-2"] != second || a.index != strconv.FormatUint(second, 10) {
			t.Fatalf("blocking answer %d %s (index %s)", a.code, a.body, a.index)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the blocking query did not answer")
	}

	// A query that times out after only the client's own reports answers
	// in full, though it did not read the allocations again.
	done = doAsync(t, "GET", fmt.Sprintf("%s/v1/internal/node/n-1/allocs-index?index=%d&wait=200ms", srv.URL, second), "")
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/internal/allocs/update",
		`{"Allocs":[{"ID":"a-2","ClientStatus":"running"}]}`); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	select {
	case a := <-done:
		ix = NodeAllocsIndexResponse{}
		if a.code != 200 || json.Unmarshal([]byte(a.body), &ix) != nil || len(ix.Allocs) != 2 ||
			ix.Allocs["a-2"] != second || a.index != strconv.FormatUint(second, 10) {
			t.Fatalf("answer at the wait's end %d %s (index %s)", a.code, a.body, a.index)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the blocking query did not answer")
	}
}

func TestAllocsGet(t *testing.T) {
	b, srv := newClientTestAPI(t)
	first := placeAlloc(t, b, "a-1", "n-1")
	second := placeAlloc(t, b, "a-2", "n-1")
	code, body, hdr := do(t, "PUT", srv.URL+"/v1/internal/allocs/get", `{"AllocIDs":["a-2","gone","a-1"]}`)
	var got AllocsGetResponse
	if code != 200 || json.Unmarshal([]byte(body), &got) != nil || len(got.Allocs) != 2 ||
		got.Allocs[0].ID != "a-1" || got.Allocs[1].ID != "a-2" || got.Allocs[0].Job == nil || got.Allocs[0].Job.ID != "web" {
		t.Fatalf("get: %d %s", code, body)
	}
	if got.Index != second || hdr.Get("X-Nomad-Index") != strconv.FormatUint(second, 10) {
		t.Fatalf("index %d (header %s), want %d", got.Index, hdr.Get("X-Nomad-Index"), second)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/internal/allocs/get", `{"AllocIDs":`); code != 400 {
		t.Fatalf("malformed: %d %s", code, body)
	}

	// With an index, it waits until one of the allocs is past it.
	done := make(chan AllocsGetResponse, 1)
	go func() {
		_, bd, _ := do(t, "PUT", fmt.Sprintf("%s/v1/internal/allocs/get?index=%d&wait=20s", srv.URL, second), `{"AllocIDs":["a-1"]}`)
		var r AllocsGetResponse
		_ = json.Unmarshal([]byte(bd), &r)
		done <- r
	}()
	placeAlloc(t, b, "a-3", "n-1")
	select {
	case r := <-done:
		t.Fatalf("answered before a-1 changed: %+v", r)
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
		if len(r.Allocs) != 1 || r.Allocs[0].DesiredStatus != structs.AllocDesiredStatusStop || r.Index != stopIdx || stopIdx <= first {
			t.Fatalf("blocking answer %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the blocking get did not answer")
	}
}

// An alloc whose job the client holds comes without it, named in
// FromHeld; the stored alloc keeps its job.
func TestAllocsGetLeavesOutHeldJobs(t *testing.T) {
	b, srv := newClientTestAPI(t)
	placeAlloc(t, b, "a-1", "n-1")
	placeAlloc(t, b, "a-2", "n-1")
	get := func(body string) AllocsGetResponse {
		t.Helper()
		code, out, _ := do(t, "PUT", srv.URL+"/v1/internal/allocs/get", body)
		var r AllocsGetResponse
		if code != 200 || json.Unmarshal([]byte(out), &r) != nil || len(r.Allocs) != 2 {
			t.Fatalf("get %s: %d %s", body, code, out)
		}
		return r
	}
	full := get(`{"AllocIDs":["a-1","a-2"]}`)
	if full.FromHeld != nil || full.Allocs[0].Job == nil {
		t.Fatalf("without held jobs: %+v", full)
	}
	ref, err := json.Marshal(full.Allocs[0].Job.Ref())
	if err != nil {
		t.Fatal(err)
	}
	other := `{"Namespace":"default","ID":"web","Version":7,"JobModifyIndex":1}`
	r := get(`{"AllocIDs":["a-1","a-2"],"HeldJobs":[` + other + `,` + string(ref) + `]}`)
	if r.Allocs[0].Job != nil || r.Allocs[1].Job != nil || r.FromHeld["a-1"] != 1 || r.FromHeld["a-2"] != 1 || r.Index != full.Index {
		t.Fatalf("with the job held: %+v", r)
	}
	if r := get(`{"AllocIDs":["a-1","a-2"],"HeldJobs":[` + other + `]}`); r.FromHeld != nil || r.Allocs[1].Job == nil {
		t.Fatalf("with another version held: %+v", r)
	}
	if again := get(`{"AllocIDs":["a-1","a-2"]}`); again.Allocs[0].Job == nil || again.Allocs[1].Job == nil {
		t.Fatal("the stored allocs lost their job")
	}
}

// doTyped sends body with the given Content-Type.
func doTyped(t *testing.T, method, url, contentType string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	return roundTrip(t, req)
}

// Clients report in MessagePack; the server takes what a client may
// report from it, as from JSON, and answers a malformed or oversized body
// with a 4xx.
func TestAllocUpdateInMessagePack(t *testing.T) {
	b, srv := newClientTestAPI(t)
	placeAlloc(t, b, "a-1", "n-1")
	body, err := wire.Encode(&AllocUpdateRequest{Allocs: []*structs.Allocation{{
		ID: "a-1", ClientStatus: structs.AllocClientStatusRunning, NodeID: "elsewhere",
		TaskStates: map[string]*structs.TaskState{"t": {State: structs.TaskStateRunning,
			Events: []*structs.TaskEvent{{Type: structs.TaskStarted, Time: 7}}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	code, resp := doTyped(t, "PUT", srv.URL+"/v1/internal/allocs/update", wire.ContentType, body)
	var up AllocUpdateResponse
	if code != 200 || json.Unmarshal([]byte(resp), &up) != nil || up.Index == 0 {
		t.Fatalf("update: %d %s", code, resp)
	}
	if len(b.updates) != 1 || len(b.updates[0]) != 1 {
		t.Fatalf("updates %v", b.updates)
	}
	got := b.updates[0][0]
	if got.ID != "a-1" || got.ClientStatus != structs.AllocClientStatusRunning || got.NodeID != "" ||
		got.TaskStates["t"] == nil || len(got.TaskStates["t"].Events) != 1 || got.TaskStates["t"].Events[0].Time != 7 {
		t.Fatalf("applied %+v", got)
	}

	for _, c := range []struct {
		name string
		body []byte
		code int
	}{
		{"malformed", []byte{0xde, 0xad, 0xbe, 0xef}, http.StatusBadRequest},
		{"truncated", body[:len(body)/2], http.StatusBadRequest},
		{"a JSON body named MessagePack", []byte(`{"Allocs":[]}`), http.StatusBadRequest},
		{"oversized", bytes.Repeat([]byte{0xc0}, MaxBodyBytes+1), http.StatusRequestEntityTooLarge},
	} {
		if code, resp := doTyped(t, "PUT", srv.URL+"/v1/internal/allocs/update", wire.ContentType, c.body); code != c.code {
			t.Errorf("%s: %d %s, want %d", c.name, code, resp, c.code)
		}
	}
	if len(b.updates) != 1 {
		t.Fatalf("%d updates applied, want only the good one", len(b.updates))
	}
}

// readAccepting sends a request with the given Accept header and returns
// the status, the answer's Content-Type and its body.
func readAccepting(t *testing.T, method, url, accept, body string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	code, body, hdr := send(t, req)
	return code, hdr.Get("Content-Type"), []byte(body)
}

// A client's alloc reads are answered in MessagePack when it accepts
// that, with the content of the JSON answer; other routes answer JSON
// whatever the Accept header says.
func TestClientReadsInMessagePack(t *testing.T) {
	b, srv := newClientTestAPI(t)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/internal/node/register", nodeBody); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	placeAlloc(t, b, "a-1", "n-1")
	placeAlloc(t, b, "a-2", "n-1")
	const accept = wire.ContentType + ", application/json;q=0.9"

	get := srv.URL + "/v1/internal/allocs/get"
	code, ct, body := readAccepting(t, "PUT", get, accept, `{"AllocIDs":["a-2","a-1"]}`)
	var fromWire AllocsGetResponse
	if code != 200 || ct != wire.ContentType || wire.Decode(body, &fromWire) != nil {
		t.Fatalf("allocs/get accepting MessagePack: %d %q %q", code, ct, body)
	}
	code, ct, body = readAccepting(t, "PUT", get, "", `{"AllocIDs":["a-2","a-1"]}`)
	var fromJSON AllocsGetResponse
	if code != 200 || ct != "application/json" || json.Unmarshal(body, &fromJSON) != nil {
		t.Fatalf("allocs/get: %d %q %s", code, ct, body)
	}
	if len(fromWire.Allocs) != 2 || fromWire.Allocs[0].ID != "a-1" || fromWire.Allocs[1].Job == nil ||
		fromWire.Allocs[1].Job.ID != "web" || fromWire.Index != fromJSON.Index || fromWire.Index == 0 {
		t.Fatalf("MessagePack answer %+v, JSON answer %+v", fromWire, fromJSON)
	}
	wj, _ := json.Marshal(fromWire)
	jj, _ := json.Marshal(fromJSON)
	if !bytes.Equal(wj, jj) {
		t.Fatalf("the answers differ:\nMessagePack %s\nJSON        %s", wj, jj)
	}

	index := srv.URL + "/v1/internal/node/n-1/allocs-index"
	code, ct, body = readAccepting(t, "GET", index, wire.ContentType, "")
	var idxWire, idxJSON NodeAllocsIndexResponse
	if code != 200 || ct != wire.ContentType || wire.Decode(body, &idxWire) != nil {
		t.Fatalf("allocs-index accepting MessagePack: %d %q %q", code, ct, body)
	}
	code, _, body = readAccepting(t, "GET", index, "application/json", "")
	if code != 200 || json.Unmarshal(body, &idxJSON) != nil || len(idxWire.Allocs) != 2 ||
		idxWire.Index != idxJSON.Index || idxWire.Allocs["a-1"] != idxJSON.Allocs["a-1"] || idxWire.Allocs["a-2"] == 0 {
		t.Fatalf("allocs-index: MessagePack %+v, JSON %+v", idxWire, idxJSON)
	}

	// A node's own record is never MessagePack: it would carry the
	// node's secret hash, which JSON leaves out.
	code, ct, body = readAccepting(t, "GET", srv.URL+"/v1/node/n-1", wire.ContentType, "")
	if code != 200 || ct != "application/json" || bytes.Contains(body, []byte("SecretHash")) {
		t.Fatalf("node read accepting MessagePack: %d %q %s", code, ct, body)
	}
}
