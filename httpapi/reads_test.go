package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// newMemAPI serves the API over a MemBackend.
func newMemAPI(t *testing.T) (*MemBackend, *httptest.Server) {
	t.Helper()
	b := NewMemBackend()
	b.Now = func() time.Time { return statetest.T0 }
	srv := httptest.NewServer(New(b, nil, WithClock(b.Now)).Handler())
	t.Cleanup(srv.Close)
	return b, srv
}

func mustApply(t *testing.T, b *MemBackend, mt fsm.MessageType, req any) uint64 {
	t.Helper()
	_, idx, err := b.Apply(context.Background(), mt, req)
	if err != nil {
		t.Fatalf("apply %v: %v", mt, err)
	}
	return idx
}

// seedWeb stores a node, job "web" (2 allocs wanted), its evaluation
// (one alloc queued), two allocs (one running) and a deployment.
type seeded struct {
	node   *structs.Node
	job    *structs.Job
	eval   *structs.Evaluation
	allocs []*structs.Allocation
	dep    *structs.Deployment
}

func seedWeb(t *testing.T, b *MemBackend) seeded {
	t.Helper()
	node := statetest.Node("n1")
	mustApply(t, b, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	job := statetest.Job("web", 3)
	eval := statetest.Eval("web-1", job)
	mustApply(t, b, fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval, SubmitTime: statetest.T0.UnixNano()})
	stored, _ := b.State().Snapshot().JobByID("default", "web")
	dep := statetest.Deployment(stored, 0)
	a0 := statetest.Alloc(stored, node, eval.ID, dep.ID, 0)
	a1 := statetest.Alloc(stored, node, eval.ID, dep.ID, 1)
	mustApply(t, b, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: eval.ID, Job: stored, AllocsPlaced: []*structs.Allocation{a0, a1}, Deployment: dep,
		UpdatedAt: statetest.T0.UnixNano(),
	})
	done := eval.Copy()
	done.Status = structs.EvalStatusComplete
	done.QueuedAllocations = map[string]int{"web": 1}
	done.FailedTGAllocs = map[string]*structs.AllocationMetric{"web": {
		NodesEvaluated: 1, NodesExhausted: 1, DimensionExhausted: map[string]int{"memory": 1}}}
	mustApply(t, b, fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done}})
	mustApply(t, b, fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
		Allocs:    []*structs.Allocation{{ID: a0.ID, ClientStatus: structs.AllocClientStatusRunning}},
		UpdatedAt: statetest.T0.UnixNano(),
	})
	return seeded{node: node, job: stored, eval: done, allocs: []*structs.Allocation{a0, a1}, dep: dep}
}

// droverUpdateFields are the fields drover adds to Nomad's update block
// (the rollout policies, website/rollouts.md part C); Nomad's client skips them.
var droverUpdateFields = []string{"StaggerSet", "MaxParallelPercent", "MaxSurge", "FirstBatch", "UnhealthyFirst",
	"MaxUnhealthy", "MaxFailed", "OnFailure", "Checkpoints", "CheckpointDelay"}

// withoutDroverFields drops drover's own fields from every update block
// and job (RevertOf) of a JSON document, and a node's empty SecretID, so
// that a strict decode checks the rest against Nomad's types.
func withoutDroverFields(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if u, ok := x["Update"].(map[string]any); ok {
			for _, f := range droverUpdateFields {
				delete(u, f)
			}
		}
		if _, job := x["TaskGroups"]; job {
			delete(x, "RevertOf")
		}
		// Nomad's servers answer a node's SecretID, empty, which its
		// client's Node type does not have.
		if _, node := x["NodeResources"]; node && x["SecretID"] == "" {
			delete(x, "SecretID")
		}
		for _, e := range x {
			withoutDroverFields(e)
		}
	case []any:
		for _, e := range x {
			withoutDroverFields(e)
		}
	}
	return v
}

// decodeStrict decodes body into the official client's type v, refusing
// fields that type does not have (drover's documented additions to the
// update block aside).
func decodeStrict(t *testing.T, body string, v any) {
	t.Helper()
	var doc any
	pre := json.NewDecoder(strings.NewReader(body))
	pre.UseNumber()
	if err := pre.Decode(&doc); err == nil {
		if b, err := json.Marshal(withoutDroverFields(doc)); err == nil {
			body = string(b)
		}
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding into %T: %v\n%s", v, err, body)
	}
}

// decodeWrite decodes a write's answer into the official client's type v:
// strictly, but for "Index", which Nomad's servers send and the client
// reads from the X-Nomad-Index header instead.
func decodeWrite(t *testing.T, body string, v any) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil || m["Index"] == nil {
		t.Fatalf("write answer without Index: %v %s", err, body)
	}
	delete(m, "Index")
	b, _ := json.Marshal(m)
	decodeStrict(t, string(b), v)
}

func get(t *testing.T, url string) string {
	t.Helper()
	code, body, _ := do(t, "GET", url, "")
	if code != 200 {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	return body
}

func TestJobReadsDecodeAsNomad(t *testing.T) {
	b, srv := newMemAPI(t)
	s := seedWeb(t, b)

	var stubs []*nomad.AllocationListStub
	decodeStrict(t, get(t, srv.URL+"/v1/job/web/allocations"), &stubs)
	if len(stubs) != 2 || stubs[0].JobID != "web" || stubs[0].TaskGroup != "web" || stubs[0].JobType != "service" {
		t.Fatalf("job allocations %+v", stubs)
	}
	var evals []*nomad.Evaluation
	decodeStrict(t, get(t, srv.URL+"/v1/job/web/evaluations"), &evals)
	if len(evals) != 1 || evals[0].ID != s.eval.ID || evals[0].Status != "complete" ||
		evals[0].FailedTGAllocs["web"].DimensionExhausted["memory"] != 1 {
		t.Fatalf("job evaluations %+v", evals)
	}
	var sum nomad.JobSummary
	decodeStrict(t, get(t, srv.URL+"/v1/job/web/summary"), &sum)
	want := nomad.TaskGroupSummary{Queued: 1, Running: 1, Starting: 1}
	if sum.JobID != "web" || sum.Summary["web"] != want {
		t.Fatalf("summary %+v", sum)
	}
	// As Nomad's: an unknown job's allocations and evaluations are empty
	// lists, its summary a 404.
	for _, p := range []string{"allocations", "evaluations"} {
		code, body, _ := do(t, "GET", srv.URL+"/v1/job/nope/"+p, "")
		if code != 200 || strings.TrimSpace(body) != "[]" {
			t.Fatalf("%s of an unknown job: %d %s", p, code, body)
		}
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/job/nope/summary", ""); code != 404 || !strings.Contains(body, "job not found") {
		t.Fatalf("summary of an unknown job: %d %s", code, body)
	}
}

func TestAllocNodeEvalReadsDecodeAsNomad(t *testing.T) {
	b, srv := newMemAPI(t)
	s := seedWeb(t, b)
	a0 := s.allocs[0]

	var stubs []*nomad.AllocationListStub
	decodeStrict(t, get(t, srv.URL+"/v1/allocations"), &stubs)
	if len(stubs) != 2 {
		t.Fatalf("allocations %+v", stubs)
	}
	decodeStrict(t, get(t, srv.URL+"/v1/allocations?prefix="+a0.ID[:6]), &stubs)
	if len(stubs) != 1 || stubs[0].ID != a0.ID || stubs[0].ClientStatus != "running" {
		t.Fatalf("allocations by prefix %+v", stubs)
	}
	var alloc nomad.Allocation
	decodeStrict(t, get(t, srv.URL+"/v1/allocation/"+a0.ID), &alloc)
	if alloc.ID != a0.ID || alloc.Job == nil || *alloc.Job.ID != "web" || alloc.DeploymentID != s.dep.ID ||
		alloc.NodeID != s.node.ID {
		t.Fatalf("allocation %+v", alloc)
	}

	var nodes []*nomad.NodeListStub
	decodeStrict(t, get(t, srv.URL+"/v1/nodes?prefix="+s.node.ID[:4]), &nodes)
	if len(nodes) != 1 || nodes[0].ID != s.node.ID || nodes[0].Status != "ready" || nodes[0].Address != "127.0.0.1" {
		t.Fatalf("nodes %+v", nodes)
	}
	var node nomad.Node
	decodeStrict(t, get(t, srv.URL+"/v1/node/"+s.node.ID), &node)
	if node.ID != s.node.ID || node.HTTPAddr != "127.0.0.1:4646" || node.Drivers["raw_exec"] == nil {
		t.Fatalf("node %+v", node)
	}

	var evals []*nomad.Evaluation
	decodeStrict(t, get(t, srv.URL+"/v1/evaluations?prefix="+s.eval.ID[:5]), &evals)
	if len(evals) != 1 || evals[0].ID != s.eval.ID {
		t.Fatalf("evaluations %+v", evals)
	}
	var eval nomad.Evaluation
	decodeStrict(t, get(t, srv.URL+"/v1/evaluation/"+s.eval.ID), &eval)
	if eval.JobID != "web" || eval.QueuedAllocations["web"] != 1 || eval.TriggeredBy != "job-register" {
		t.Fatalf("evaluation %+v", eval)
	}
	decodeStrict(t, get(t, srv.URL+"/v1/evaluation/"+s.eval.ID+"/allocations"), &stubs)
	if len(stubs) != 2 {
		t.Fatalf("eval allocations %+v", stubs)
	}

	for path, msg := range map[string]string{
		"/v1/allocation/nope": "alloc not found",
		"/v1/node/nope":       "node not found",
		"/v1/evaluation/nope": "eval not found",
	} {
		code, body, _ := do(t, "GET", srv.URL+path, "")
		if code != 404 || !strings.Contains(body, msg) {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
	}
	// As Nomad's: an unknown evaluation has no allocations.
	if code, body, _ := do(t, "GET", srv.URL+"/v1/evaluation/nope/allocations", ""); code != 200 || strings.TrimSpace(body) != "[]" {
		t.Fatalf("allocations of an unknown evaluation: %d %s", code, body)
	}
	code, body, _ := do(t, "GET", srv.URL+"/v1/allocations?prefix=zzzz", "")
	if code != 200 || strings.TrimSpace(body) != "[]" {
		t.Fatalf("no match: %d %s", code, body)
	}
}

func TestAllocBlockingQueryWakesOnItsChange(t *testing.T) {
	b, srv := newMemAPI(t)
	s := seedWeb(t, b)
	a1 := s.allocs[1]
	_, _, hdr := do(t, "GET", srv.URL+"/v1/allocation/"+a1.ID, "")
	idx := hdr.Get("X-Nomad-Index")
	done := make(chan string, 1)
	go func() {
		_, body, _ := do(t, "GET", srv.URL+"/v1/allocation/"+a1.ID+"?index="+idx+"&wait=30s", "")
		done <- body
	}()
	mustApply(t, b, fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{
		Allocs:    []*structs.Allocation{{ID: a1.ID, ClientStatus: structs.AllocClientStatusFailed}},
		UpdatedAt: statetest.T0.UnixNano(),
	})
	select {
	case body := <-done:
		if !strings.Contains(body, `"ClientStatus":"failed"`) {
			t.Fatalf("woken answer %s", body)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("blocking query on the alloc did not wake")
	}
}

func TestJobDeregisterStopsThenPurges(t *testing.T) {
	b, srv := newMemAPI(t)
	seedWeb(t, b)
	code, body, hdr := do(t, "DELETE", srv.URL+"/v1/job/web", "")
	if code != 200 {
		t.Fatalf("stop: %d %s", code, body)
	}
	var resp nomad.JobDeregisterResponse
	decodeWrite(t, body, &resp)
	if resp.EvalID == "" || resp.EvalCreateIndex == 0 || resp.JobModifyIndex == 0 || hdr.Get("X-Nomad-Index") == "" {
		t.Fatalf("stop response %s", body)
	}
	snap := b.State().Snapshot()
	job, _ := snap.JobByID("default", "web")
	eval, _ := snap.EvalByID(resp.EvalID)
	if job == nil || !job.Stop || eval == nil || eval.TriggeredBy != structs.EvalTriggerJobDeregister {
		t.Fatalf("after stop: job %+v eval %+v", job, eval)
	}
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/job/web?purge=true", ""); code != 200 {
		t.Fatalf("purge: %d %s", code, body)
	}
	if job, _ := b.State().Snapshot().JobByID("default", "web"); job != nil {
		t.Fatalf("purged job still stored: %+v", job)
	}
	// As Nomad's, a job that is gone is deregistered without a word.
	code, body, _ = do(t, "DELETE", srv.URL+"/v1/job/web", "")
	if code != 200 || !strings.Contains(body, `"EvalID":""`) {
		t.Fatalf("delete unknown: %d %s", code, body)
	}
	if code, _, _ := do(t, "DELETE", srv.URL+"/v1/job/web?purge=maybe", ""); code != 400 {
		t.Fatalf("bad purge: %d", code)
	}
}

func TestJobDeregisterWithoutLeaderServicesIs501(t *testing.T) {
	_, srv := newTestAPI(t) // fakeBackend: no DeregisterJob
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", webJob); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	code, body, _ := do(t, "DELETE", srv.URL+"/v1/job/web", "")
	if code != 501 || !strings.Contains(body, "not a server") {
		t.Fatalf("delete: %d %s", code, body)
	}
}

func TestBadJobInputStatuses(t *testing.T) {
	_, srv := newMemAPI(t)
	big := `{"Job": {"ID": "x", "Meta": {"k": "` + strings.Repeat("x", MaxBodyBytes) + `"}}}`
	cases := []struct {
		name, method, path, body string
		code                     int
		says                     []string
	}{
		{"malformed", "PUT", "/v1/jobs", "{\"Job\": {\n  \"ID\": \"web\",\n  \"Name\" \"web\"\n}}", 400, []string{"invalid"}},
		{"malformed by id", "PUT", "/v1/job/web", "{\"Job\": {\n  \"ID\": \"web\",\n  \"Name\" \"web\"\n}}", 400, []string{"line 3, column"}},
		{"unsupported set", "PUT", "/v1/jobs", strings.Replace(webJob, `"Type"`, `"Periodic":{"Spec":"* * * * *"},"Type"`, 1), 400, []string{"Periodic"}},
		{"unknown field", "PUT", "/v1/jobs", strings.Replace(webJob, `"Type"`, `"Flavour":"mint","Type"`, 1), 400, []string{"Flavour"}},
		{"unknown envelope field", "PUT", "/v1/job/web", `{"Job":{"ID":"web"},"Hurry":true}`, 400, []string{"Hurry"}},
		{"unsupported envelope field", "PUT", "/v1/job/web", strings.Replace(webJob, `{"Job"`, `{"PolicyOverride":true,"Job"`, 1), 400, []string{"PolicyOverride"}},
		{"ID mismatch", "PUT", "/v1/job/api", webJob, 400, []string{"does not match"}},
		{"oversized", "PUT", "/v1/jobs", big, 413, []string{"too large"}},
		{"oversized by id", "PUT", "/v1/job/x", big, 413, []string{"too large"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body, _ := do(t, c.method, srv.URL+c.path, c.body)
			if code != c.code {
				t.Fatalf("status %d (%s), want %d", code, body, c.code)
			}
			for _, s := range c.says {
				if !strings.Contains(body, s) {
					t.Fatalf("answer %q does not say %q", body, s)
				}
			}
		})
	}
	// Unsupported fields left empty, and envelope fields left empty, pass.
	ok := strings.Replace(webJob, `{"Job"`, `{"PolicyOverride":false,"Submission":null,"Job"`, 1)
	ok = strings.Replace(ok, `"Type"`, `"Periodic":null,"Type"`, 1)
	for _, path := range []string{"/v1/job/web", "/v1/jobs"} {
		body := ok
		if path == "/v1/jobs" {
			body = strings.Replace(webJob, `"Type"`, `"Periodic":null,"Type"`, 1)
		}
		if code, resp, _ := do(t, "PUT", srv.URL+path, body); code != 200 {
			t.Fatalf("PUT %s with empty unsupported fields: %d %s", path, code, resp)
		}
	}
}

func TestJobRegisterEnforceIndex(t *testing.T) {
	b, srv := newMemAPI(t)
	enforce := func(idx uint64, cmd string) (int, string) {
		env := strings.Replace(webJob, `{"Job"`, `{"EnforceIndex":true,"JobModifyIndex":`+jsonNum(idx)+`,"Job"`, 1)
		env = strings.Replace(env, "/bin/true", cmd, 1)
		code, body, _ := do(t, "PUT", srv.URL+"/v1/job/web", env)
		return code, body
	}
	// Nomad's words, which its Go client recognises by their prefix.
	if code, body := enforce(7, "/bin/true"); code != 409 || !strings.HasPrefix(body, `Enforcing job modify index 7: job "web" does not exist`) || strings.Contains(body, ": conflict") {
		t.Fatalf("index 7 for a new job: %d %s", code, body)
	}
	code, body := enforce(0, "/bin/true")
	var resp nomad.JobRegisterResponse
	if code != 200 {
		t.Fatalf("index 0 for a new job: %d %s", code, body)
	}
	decodeWrite(t, body, &resp)
	if code, body := enforce(resp.JobModifyIndex+5, "/bin/false"); code != 409 ||
		!strings.Contains(body, "conflicting job modify index "+jsonNum(resp.JobModifyIndex)) {
		t.Fatalf("stale index: %d %s", code, body)
	}
	if code, body := enforce(resp.JobModifyIndex, "/bin/false"); code != 200 {
		t.Fatalf("current index: %d %s", code, body)
	}
	job, _ := b.State().Snapshot().JobByID("default", "web")
	if job.Version != 1 {
		t.Fatalf("version %d after one checked update", job.Version)
	}
}

func TestOfficialClientRegisterEnvelopeIsAccepted(t *testing.T) {
	_, srv := newMemAPI(t)
	name, typ, drv := "web", "service", "raw_exec"
	count := 1
	req := nomad.JobRegisterRequest{
		Job: &nomad.Job{ID: &name, Name: &name, Type: &typ, Datacenters: []string{"dc1"},
			TaskGroups: []*nomad.TaskGroup{{Name: &name, Count: &count,
				Tasks: []*nomad.Task{{Name: "t", Driver: drv, Config: map[string]any{"command": "/bin/true"}}}}}},
		EnforceIndex: true,
		WriteRequest: nomad.WriteRequest{Region: "global", Namespace: "default"},
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	code, resp, _ := do(t, "PUT", srv.URL+"/v1/job/web", string(body))
	if code != 200 {
		t.Fatalf("official envelope: %d %s\n%s", code, resp, body)
	}
	// PreserveCounts is taken (preserve_test.go); PolicyOverride, for
	// Sentinel policies drover does not have, is refused when set.
	req.EnforceIndex, req.PreserveCounts = false, true
	body, _ = json.Marshal(req)
	if code, resp, _ := do(t, "PUT", srv.URL+"/v1/job/web", string(body)); code != 200 {
		t.Fatalf("PreserveCounts set: %d %s", code, resp)
	}
	req.PolicyOverride = true
	body, _ = json.Marshal(req)
	if code, resp, _ := do(t, "PUT", srv.URL+"/v1/job/web", string(body)); code != 400 || !strings.Contains(resp, "PolicyOverride") {
		t.Fatalf("PolicyOverride set: %d %s", code, resp)
	}
}

func jsonNum(n uint64) string {
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(n)
	return strings.TrimSpace(buf.String())
}
