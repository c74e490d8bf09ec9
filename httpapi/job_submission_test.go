package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// oldServersBackend is a backend whose Raft configuration holds a server
// of build 1.
type oldServersBackend struct{ *fakeBackend }

func (oldServersBackend) MinServerBuild() int { return 1 }

// TestJobSubmissionWaitsForEveryServer: while a server of an earlier build
// is in the configuration, a registration is kept without its source,
// with a warning saying why.
func TestJobSubmissionWaitsForEveryServer(t *testing.T) {
	b := oldServersBackend{newFakeBackend()}
	srv := httptest.NewServer(New(b, nil).Handler())
	t.Cleanup(srv.Close)
	job := strings.TrimSuffix(webJob, "}") + `,"Submission":{"Source":"job {}","Format":"hcl2"}}`
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", job); code != 200 || !strings.Contains(body, "job source not kept: not every server runs a build that keeps job sources yet") {
		t.Fatalf("register: %d %s", code, body)
	}
	if sub, err := b.State().Snapshot().JobSubmission("default", "web", 0); err != nil || sub != nil {
		t.Fatalf("kept %+v %v", sub, err)
	}
}
