package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func TestEvaluationsDeleteNeedsAPausedBroker(t *testing.T) {
	b, srv := newMemAPI(t)
	s := seedWeb(t, b)
	orphan := statetest.Eval("gone-1", &structs.Job{ID: "gone", Namespace: "default", Type: structs.JobTypeService, Priority: 50})
	mustApply(t, b, fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{orphan}})
	u := srv.URL + "/v1/evaluations"
	count := func(q string) int {
		t.Helper()
		code, body, _ := do(t, "GET", u+"/count"+q, "")
		var c EvalCountResponse
		if err := json.Unmarshal([]byte(body), &c); err != nil || code != 200 || c.Index == 0 {
			t.Fatalf("count%s: %d %s", q, code, body)
		}
		return c.Count
	}
	if n := count(""); n != 2 {
		t.Fatalf("count: %d", n)
	}
	if n := count(`?filter=` + strings.ReplaceAll(`JobID == "gone"`, " ", "%20")); n != 1 {
		t.Fatalf("count by filter: %d", n)
	}
	if n := count("?prefix=" + orphan.ID[:4]); n < 1 {
		t.Fatalf("count by prefix: %d", n)
	}
	if code, body, _ := do(t, "GET", u+"/count?filter=JobID%20%3D%3D", ""); code != 400 {
		t.Fatalf("bad filter: %d %s", code, body)
	}

	body := fmt.Sprintf(`{"EvalIDs":[%q]}`, orphan.ID)
	if code, got, _ := do(t, "DELETE", u, body); code != 400 || !strings.Contains(got, "eval broker is enabled; eval broker must be paused to delete evals") {
		t.Fatalf("delete with the broker running: %d %s", code, got)
	}
	cfg := structs.DefaultSchedulerConfiguration()
	cfg.PauseEvalBroker = true
	mustApply(t, b, fsm.SchedulerSetConfigRequestType, &structs.SchedulerSetConfigRequest{Config: cfg})

	for in, want := range map[string]string{
		`{}`: "evals must be deleted by either ID or filter",
		`{"EvalIDs":["x"],"Filter":"JobID == \"a\""}`: "evals cannot be deleted by both ID and filter",
		`{"Filter":"JobID =="}`:                       "failed to read filter expression",
	} {
		if code, got, _ := do(t, "DELETE", u, in); code != 400 || !strings.Contains(got, want) {
			t.Errorf("%s: %d %s", in, code, got)
		}
	}
	if code, got, _ := do(t, "DELETE", u, `{"EvalIDs":["8E231CF4-CA48-43FF-B694-5801E69E22FA"]}`); code != 404 || !strings.Contains(got, "eval not found") {
		t.Fatalf("unknown eval: %d %s", code, got)
	}
	// web's evaluation placed a running allocation of a live job.
	if code, got, _ := do(t, "DELETE", u, fmt.Sprintf(`{"EvalIDs":[%q]}`, s.eval.ID)); code != 400 || !strings.Contains(got, "is not safe to delete") {
		t.Fatalf("unsafe eval: %d %s", code, got)
	}
	code, got, hdr := do(t, "DELETE", u, body)
	var del EvalDeleteResponse
	if err := json.Unmarshal([]byte(got), &del); err != nil || code != 200 || del.Count != 1 || hdr.Get("X-Nomad-Index") != fmt.Sprint(del.Index) {
		t.Fatalf("delete: %d %s", code, got)
	}
	if e, _ := b.State().Snapshot().EvalByID(orphan.ID); e != nil {
		t.Fatal("evaluation still stored")
	}
	// By filter: only the safe ones that match go.
	code, got, _ = do(t, "DELETE", u, `{"Filter":"JobID == \"web\""}`)
	if err := json.Unmarshal([]byte(got), &del); err != nil || code != 200 || del.Count != 0 {
		t.Fatalf("delete by filter: %d %s", code, got)
	}
	if n := count(""); n != 1 {
		t.Fatalf("count after delete: %d", n)
	}
}

func TestCSIVolumesAreAbsent(t *testing.T) {
	_, srv := newTestAPI(t)
	for _, c := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"GET", "/v1/volumes?type=csi", "", 200, "[]"},
		{"GET", "/v1/volumes?type=host", "", 200, "[]"},
		{"GET", "/v1/volumes", "", 200, "[]"},
		{"GET", "/v1/volumes?type=nfs", "", 404, "resource not found"},
		{"GET", "/v1/volume/csi/vol1", "", 404, "volume not found"},
		{"PUT", "/v1/volume/csi/vol1", `{"Volumes":[{"ID":"vol1"}]}`, 400, "CSI volumes are not supported by drover"},
		{"PUT", "/v1/volume/csi/vol1/create", `{}`, 400, "CSI volumes are not supported by drover"},
		{"DELETE", "/v1/volume/csi/vol1", "", 404, "volume not found"},
		{"GET", "/v1/plugins?type=csi", "", 200, "[]"},
		{"GET", "/v1/plugin/csi/p1", "", 404, "plugin not found"},
	} {
		if code, body, _ := do(t, c.method, srv.URL+c.path, c.body); code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s", c.method, c.path, code, body)
		}
	}
}

// opsBackend is a MemBackend that records the leader operations asked
// of it.
type opsBackend struct {
	*MemBackend
	calls []string
}

func (b *opsBackend) EvaluateNode(_ context.Context, id string) (*NodeUpdateResponse, error) {
	b.calls = append(b.calls, "evaluate "+id)
	return &NodeUpdateResponse{NodeModifyIndex: 7}, nil
}

func (b *opsBackend) PurgeNode(_ context.Context, id string) (*NodeUpdateResponse, error) {
	b.calls = append(b.calls, "purge "+id)
	return &NodeUpdateResponse{NodeModifyIndex: 9, EvalIDs: []string{"e1"}, EvalCreateIndex: 10}, nil
}

func (b *opsBackend) EvaluateJob(_ context.Context, ns, id string, force bool) (*JobRegisterResponse, error) {
	b.calls = append(b.calls, fmt.Sprintf("evaluate job %s/%s force=%v", ns, id, force))
	return &JobRegisterResponse{EvalID: "e2", EvalCreateIndex: 11, Index: 11}, nil
}

func TestJobAndNodeOperations(t *testing.T) {
	mb := NewMemBackend()
	mb.Now = func() time.Time { return statetest.T0 }
	b := &opsBackend{MemBackend: mb}
	srv := httptest.NewServer(New(b, nil, WithClock(mb.Now)).Handler())
	t.Cleanup(srv.Close)
	s := seedWeb(t, mb)
	u := srv.URL
	for _, c := range []struct {
		method, path, body string
		code               int
		want, index        string
	}{
		{"PUT", "/v1/job/web/evaluate", "", 200, `"EvalID":"e2"`, "11"},
		{"POST", "/v1/job/web/evaluate", `{"JobID":"web","EvalOptions":{"ForceReschedule":true}}`, 200, `"EvalID":"e2"`, "11"},
		{"PUT", "/v1/job/web/evaluate", `{"JobID":"other"}`, 400, "JobID not same as job name", ""},
		{"PUT", "/v1/job/web/evaluate", `{"EvalOptions":{}}`, 400, "Job ID must be specified", ""},
		{"PUT", "/v1/job/nope/evaluate", "", 404, "job not found", ""},
		{"PUT", "/v1/node/" + s.node.ID + "/evaluate", "", 200, `"EvalIDs":[]`, "0"},
		{"POST", "/v1/node/" + s.node.ID + "/purge", "", 200, `"EvalIDs":["e1"]`, "10"},
		{"PUT", "/v1/node/12345678-abcd-efab-cdef-123456789abc/evaluate", "", 404, "node not found", ""},
		{"PUT", "/v1/node/12345678-abcd-efab-cdef-123456789abc/purge", "", 404, "node not found", ""},
	} {
		code, body, hdr := do(t, c.method, u+c.path, c.body)
		if code != c.code || !strings.Contains(body, c.want) || (c.index != "" && hdr.Get("X-Nomad-Index") != c.index) {
			t.Errorf("%s %s %s: %d %s (index %s)", c.method, c.path, c.body, code, body, hdr.Get("X-Nomad-Index"))
		}
	}
	want := []string{"evaluate job default/web force=false", "evaluate job default/web force=true", "evaluate " + s.node.ID, "purge " + s.node.ID}
	if fmt.Sprint(b.calls) != fmt.Sprint(want) {
		t.Fatalf("calls %v, want %v", b.calls, want)
	}
}

func TestDeregisterOfAnUnknownJobSucceeds(t *testing.T) {
	_, srv := newMemAPI(t)
	code, body, hdr := do(t, "DELETE", srv.URL+"/v1/job/nope", "")
	if code != 200 || !strings.Contains(body, `"EvalID":""`) || hdr.Get("X-Nomad-Index") != "0" {
		t.Fatalf("deregister unknown: %d %s %v", code, body, hdr)
	}
}

func TestAllocationsListWithResources(t *testing.T) {
	b, srv := newMemAPI(t)
	s := seedWeb(t, b)
	var stubs []*structs.AllocationListStub
	_, body, _ := do(t, "GET", srv.URL+"/v1/allocations?resources=true", "")
	if err := json.Unmarshal([]byte(body), &stubs); err != nil || len(stubs) != len(s.allocs) {
		t.Fatalf("list: %s", body)
	}
	for _, st := range stubs {
		if st.AllocatedResources == nil || len(st.AllocatedResources.Tasks) == 0 {
			t.Fatalf("no resources: %s", body)
		}
	}
	if _, body, _ = do(t, "GET", srv.URL+"/v1/allocations", ""); strings.Contains(body, "AllocatedResources") {
		t.Fatalf("resources without asking: %s", body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/allocations?resources=maybe", ""); code != 400 {
		t.Fatalf("bad resources: %d %s", code, body)
	}
}
