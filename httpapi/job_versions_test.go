package httpapi

import (
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

func TestJobVersionsRevertAndStable(t *testing.T) {
	b, srv := newOperatorTestAPI(t)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", webJob); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", strings.Replace(webJob, `"Count":1`, `"Count":2`, 1)); code != 200 {
		t.Fatalf("register v1: %d %s", code, body)
	}
	code, body, hdr := do(t, "GET", srv.URL+"/v1/job/web/versions", "")
	var vr struct {
		Versions []*structs.Job
		Diffs    []any
	}
	decode(t, body, &vr)
	if code != 200 || len(vr.Versions) != 2 || vr.Versions[0].Version != 1 || vr.Versions[1].Version != 0 ||
		!strings.Contains(body, `"Diffs":null`) || hdr.Get("X-Nomad-Index") == "" {
		t.Fatalf("versions: %d %s", code, body)
	}
	if code, _, _ = do(t, "GET", srv.URL+"/v1/job/nope/versions", ""); code != 404 {
		t.Fatalf("versions of an unknown job: %d", code)
	}

	revert := srv.URL + "/v1/job/web/revert"
	for _, c := range []struct {
		body string
		code int
		text string
	}{
		{`{"JobID":"web","JobVersion":0,"EnforcePriorVersion":0}`, 400, "current job has version 1; enforcing version 0"},
		{`{"JobID":"web","JobVersion":1}`, 400, "can't revert to current version 1"},
		{`{"JobID":"web","JobVersion":7}`, 404, "job version not found"},
		{`{"JobID":"web",`, 400, "malformed request body"},
	} {
		if code, out, _ := do(t, "PUT", revert, c.body); code != c.code || !strings.Contains(out, c.text) {
			t.Fatalf("revert %s: %d %q, want %d with %q", c.body, code, out, c.code, c.text)
		}
	}
	if code, out, _ := do(t, "PUT", srv.URL+"/v1/job/nope/revert", `{"JobVersion":0}`); code != 404 {
		t.Fatalf("revert of an unknown job: %d %s", code, out)
	}
	code, body, _ = do(t, "PUT", revert, `{"JobID":"web","JobVersion":0,"EnforcePriorVersion":1}`)
	var rr structs.JobRevertResponse
	decode(t, body, &rr)
	cur, _ := b.State().Snapshot().JobByID(structs.DefaultNamespace, "web")
	if code != 200 || rr.EvalID == "" || rr.JobVersion != 2 || cur.Version != 2 || cur.TaskGroups[0].Count != 1 ||
		rr.JobModifyIndex != cur.JobModifyIndex {
		t.Fatalf("revert: %d %s; job v%d count %d", code, body, cur.Version, cur.TaskGroups[0].Count)
	}

	code, body, _ = do(t, "PUT", srv.URL+"/v1/job/web/stable", `{"JobID":"web","JobVersion":1,"Stable":true}`)
	var sr structs.JobStabilityResponse
	decode(t, body, &sr)
	if code != 200 || sr.JobModifyIndex == 0 {
		t.Fatalf("stable: %d %s", code, body)
	}
	if v, _ := b.State().Snapshot().JobByIDAndVersion(structs.DefaultNamespace, "web", 1); !v.Stable {
		t.Fatal("version 1 not stable")
	}
	if code, body, _ = do(t, "PUT", srv.URL+"/v1/job/web/stable", `{"JobVersion":9,"Stable":true}`); code != 404 {
		t.Fatalf("stable of a missing version: %d %s", code, body)
	}
}
