package httpapi

import (
	"strings"
	"testing"
)

// TestJobIDWithSlash: a job whose ID has a slash (a dispatched or periodic
// child's) is routed in every /v1/job/<id>/… path, its slashes written as
// they are or escaped, as Nomad routes it; the suffix of a job route wins
// over a longer ID, as in Nomad.
func TestJobIDWithSlash(t *testing.T) {
	_, srv := newTestAPI(t)
	job := strings.NewReplacer(`"ID":"web","Name":"web"`, `"ID":"disp/dispatch-1-abc","Name":"disp/dispatch-1-abc"`).Replace(webJob)
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", job); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	for _, id := range []string{"disp/dispatch-1-abc", "disp%2Fdispatch-1-abc", "disp%2fdispatch-1-abc"} {
		for _, suffix := range []string{"", "/allocations", "/evaluations", "/summary", "/versions", "/deployments", "/deployment", "/scale"} {
			code, body, _ := do(t, "GET", srv.URL+"/v1/job/"+id+suffix, "")
			if code != 200 {
				t.Errorf("GET /v1/job/%s%s: %d %s", id, suffix, code, body)
			}
		}
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/job/disp/dispatch-1-abc", ""); !strings.Contains(body, `"ID":"disp/dispatch-1-abc"`) {
		t.Errorf("GET the job: %d %s", code, body)
	}
	// An unknown child's allocations are an empty list, as Nomad's; its
	// summary is a 404 naming it.
	if code, body, _ := do(t, "GET", srv.URL+"/v1/job/disp/nothing/allocations", ""); code != 200 || strings.TrimSpace(body) != "[]" {
		t.Errorf("unknown child's allocations: %d %s", code, body)
	}
	if code, body, _ := do(t, "GET", srv.URL+"/v1/job/disp/nothing/summary", ""); code != 404 || !strings.Contains(body, "job not found: disp/nothing") {
		t.Errorf("unknown child's summary: %d %s", code, body)
	}
	// The test backend cannot deregister (501): the request reached the
	// handler, not a 404 or 405 of the router.
	if code, body, _ := do(t, "DELETE", srv.URL+"/v1/job/disp/dispatch-1-abc?purge=true", ""); code != 200 && code != 501 {
		t.Errorf("DELETE: %d %s", code, body)
	}
}

// TestRegionChecked: a request for another region is refused (drover has
// no federation); this cluster's region, or none, is served.
func TestRegionChecked(t *testing.T) {
	_, srv := newTestAPI(t)
	if code, body, _ := do(t, "GET", srv.URL+"/v1/jobs?region=eu-west", ""); code != 400 || !strings.Contains(body, `No path to region "eu-west"`) {
		t.Errorf("another region: %d %s", code, body)
	}
	for _, q := range []string{"", "?region=global"} {
		if code, body, _ := do(t, "GET", srv.URL+"/v1/jobs"+q, ""); code != 200 {
			t.Errorf("GET /v1/jobs%s: %d %s", q, code, body)
		}
	}
}
