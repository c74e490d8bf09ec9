package client

import (
	"testing"
	"time"

	"github.com/droverhq/drover/client/health"
	"github.com/droverhq/drover/structs"
)

// A check's latest result as Nomad's AllocCheckStatus: a pass is success,
// a warning or a failure is failure, an on_update = "ignore" check is a
// readiness check; the ID is stable and differs between checks.
func TestCheckStatus(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := health.CheckResult{Name: "api/ready", CheckName: "ready", Service: "api", Task: "web",
		Provider: structs.ServiceProviderNomad, Status: structs.CheckPassing, Output: "ok", At: at}
	s := checkStatus("a1", "g", r)
	if s.Status != "success" || s.Mode != "healthiness" || s.Check != "ready" || s.Service != "api" ||
		s.Task != "web" || s.Group != "g" || s.Timestamp != at.Unix() || s.ID == "" {
		t.Fatalf("status = %+v", s)
	}
	if again := checkStatus("a1", "g", r); again.ID != s.ID {
		t.Fatalf("the ID is not stable: %s, %s", s.ID, again.ID)
	}
	r.Status, r.OnUpdate = structs.CheckWarning, structs.OnUpdateIgnore
	w := checkStatus("a1", "g", r)
	if w.Status != "failure" || w.Mode != "readiness" || w.ID != s.ID {
		t.Fatalf("warning of an ignored check = %+v", w)
	}
	r.CheckName = "other"
	if o := checkStatus("a1", "g", r); o.ID == s.ID {
		t.Fatal("two checks share an ID")
	}
}
