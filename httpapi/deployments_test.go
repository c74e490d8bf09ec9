package httpapi

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

func TestDeploymentReads(t *testing.T) {
	b, srv := newOperatorTestAPI(t)
	placeCanaryDeployment(t, b, srv.URL)

	code, body, hdr := do(t, "GET", srv.URL+"/v1/deployments", "")
	var deps []*structs.Deployment
	decode(t, body, &deps)
	if code != 200 || len(deps) != 1 || deps[0].ID != "dep-1" || hdr.Get("X-Nomad-Index") == "" {
		t.Fatalf("list: %d %s", code, body)
	}
	if code, body, _ = do(t, "GET", srv.URL+"/v1/deployments?prefix=zz", ""); code != 200 || strings.TrimSpace(body) != "[]" {
		t.Fatalf("list with another prefix: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/deployment/dep-1", "")
	var d structs.Deployment
	decode(t, body, &d)
	if code != 200 || d.TaskGroups["g"].DesiredCanaries != 1 || len(d.TaskGroups["g"].PlacedCanaries) != 1 {
		t.Fatalf("info: %d %s", code, body)
	}
	if code, body, _ = do(t, "GET", srv.URL+"/v1/deployment/nope", ""); code != 404 {
		t.Fatalf("unknown deployment: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/deployment/allocations/dep-1", "")
	var stubs []*structs.AllocationListStub
	decode(t, body, &stubs)
	if code != 200 || len(stubs) != 1 || stubs[0].ID != "alloc-1" || !stubs[0].DeploymentStatus.Canary {
		t.Fatalf("allocations: %d %s", code, body)
	}
	if code, _, _ = do(t, "GET", srv.URL+"/v1/deployment/allocations/nope", ""); code != 404 {
		t.Fatalf("allocations of an unknown deployment: %d", code)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/job/web/deployments", "")
	decode(t, body, &deps)
	if code != 200 || len(deps) != 1 {
		t.Fatalf("job deployments: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/job/web/deployment", "")
	decode(t, body, &d)
	if code != 200 || d.ID != "dep-1" {
		t.Fatalf("latest deployment: %d %s", code, body)
	}
	if code, body, _ = do(t, "GET", srv.URL+"/v1/job/other/deployment", ""); code != 200 || strings.TrimSpace(body) != "null" {
		t.Fatalf("latest deployment of a job without any: %d %s", code, body)
	}
}

func TestDeploymentBlockingQueryWakesOnPause(t *testing.T) {
	b, srv := newOperatorTestAPI(t)
	placeCanaryDeployment(t, b, srv.URL)
	_, _, hdr := do(t, "GET", srv.URL+"/v1/deployment/dep-1", "")
	index := hdr.Get("X-Nomad-Index")
	type answer struct {
		code        int
		body, index string
	}
	done := make(chan answer, 1)
	go func() {
		code, body, h := do(t, "GET", srv.URL+"/v1/deployment/dep-1?index="+index+"&wait=30s", "")
		done <- answer{code, body, h.Get("X-Nomad-Index")}
	}()
	select {
	case a := <-done:
		t.Fatalf("blocking query returned before any change: %+v", a)
	case <-time.After(100 * time.Millisecond):
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/deployment/pause/dep-1", `{"DeploymentID":"dep-1","Pause":true}`); code != 200 {
		t.Fatalf("pause: %d %s", code, body)
	}
	select {
	case a := <-done:
		old, _ := strconv.Atoi(index)
		got, _ := strconv.Atoi(a.index)
		if a.code != 200 || got <= old || !strings.Contains(a.body, `"Status":"paused"`) {
			t.Fatalf("blocking answer %+v (asked past %s)", a, index)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("blocking query did not wake on the pause")
	}
}

func TestDeploymentVerbs(t *testing.T) {
	b, srv := newOperatorTestAPI(t)
	placeCanaryDeployment(t, b, srv.URL)
	url := srv.URL + "/v1/deployment/"

	verb := func(path, body string, want int, text string) string {
		t.Helper()
		code, out, _ := do(t, "PUT", url+path, body)
		if code != want || !strings.Contains(out, text) {
			t.Fatalf("PUT %s %s: %d %q, want %d with %q", path, body, code, out, want, text)
		}
		return out
	}
	verb("promote/dep-1", `{"DeploymentID":"dep-1","All":true}`, 400, `task group "g" has 0/1 healthy allocations`)
	verb("promote/dep-1", `{"Groups":["x"]}`, 400, `deployment has no such task group: "x"`)
	verb("promote/nope", `{"All":true}`, 404, "deployment not found")
	verb("allocation-health/dep-1", `{}`, 400, "must specify at least one healthy or unhealthy allocation")
	verb("allocation-health/dep-1", `{"HealthyAllocationIDs":["zzz"]}`, 400, `allocation is not part of the deployment: "zzz"`)
	verb("promote/dep-1", `{"All":`, 400, "malformed request body")

	var resp structs.DeploymentUpdateResponse
	decode(t, verb("allocation-health/dep-1", `{"HealthyAllocationIDs":["alloc-1"]}`, 200, "EvalID"), &resp)
	if resp.EvalID == "" || resp.Index == 0 || resp.DeploymentModifyIndex != resp.Index {
		t.Fatalf("allocation-health answer %+v", resp)
	}
	snap := b.State().Snapshot()
	if a, _ := snap.AllocByID("alloc-1"); !a.IsHealthy() {
		t.Fatal("alloc not healthy after allocation-health")
	}
	if e, _ := snap.EvalByID(resp.EvalID); e == nil || e.TriggeredBy != structs.EvalTriggerDeploymentWatcher {
		t.Fatalf("allocation-health eval %+v", e)
	}
	decode(t, verb("promote/dep-1", `{"DeploymentID":"dep-1","All":true}`, 200, "EvalID"), &resp)
	if d, _ := b.State().Snapshot().DeploymentByID("dep-1"); !d.TaskGroups["g"].Promoted ||
		d.StatusDescription != structs.DeploymentStatusDescriptionRunning {
		t.Fatalf("after promote: %+v %q", d.TaskGroups["g"], d.StatusDescription)
	}
	verb("pause/dep-1", `{"Pause":true}`, 200, "DeploymentModifyIndex")
	verb("promote/dep-1", `{"All":true}`, 400, "can't promote paused deployment")
	if d, _ := b.State().Snapshot().DeploymentByID("dep-1"); d.Status != structs.DeploymentStatusPaused {
		t.Fatalf("after pause: %s", d.Status)
	}
	decode(t, verb("pause/dep-1", `{"Pause":false}`, 200, "EvalID"), &resp)
	if d, _ := b.State().Snapshot().DeploymentByID("dep-1"); d.Status != structs.DeploymentStatusRunning || resp.EvalID == "" {
		t.Fatalf("after resume: %s, answer %+v", d.Status, resp)
	}
	verb("promote/dep-1", `{"All":true}`, 400, "deployment has no canaries to promote")
	// POST works as PUT; an empty body is fine for fail.
	code, out, _ := do(t, "POST", url+"fail/dep-1", "")
	decode(t, out, &resp)
	if code != 200 || resp.RevertedJobVersion != nil {
		t.Fatalf("fail: %d %s", code, out)
	}
	if d, _ := b.State().Snapshot().DeploymentByID("dep-1"); d.Status != structs.DeploymentStatusFailed ||
		d.StatusDescription != structs.DeploymentStatusDescriptionFailedByUser {
		t.Fatalf("after fail: %s %q", d.Status, d.StatusDescription)
	}
	verb("fail/dep-1", ``, 400, "can't fail terminal deployment")
	verb("promote/dep-1", `{"All":true}`, 400, "can't promote terminal deployment")
	verb("pause/dep-1", `{"Pause":true}`, 400, "can't pause terminal deployment")
	verb("pause/dep-1", `{"Pause":false}`, 400, "can't resume terminal deployment")
	verb("allocation-health/dep-1", `{"HealthyAllocationIDs":["alloc-1"]}`, 400, "can't set health of allocations for a terminal deployment")
}

func TestOperatorVerbsNeedAServer(t *testing.T) {
	_, srv := newTestAPI(t)
	for _, path := range []string{"/v1/deployment/fail/x", "/v1/deployment/promote/x", "/v1/job/web/revert", "/v1/job/web/stable"} {
		if code, body, _ := do(t, "PUT", srv.URL+path, `{}`); code != 501 {
			t.Fatalf("%s without operator verbs: %d %s", path, code, body)
		}
	}
}
