package httpapi

import (
	"strconv"
	"strings"
	"testing"
)

// A registration with PreserveCounts keeps the count of each group the
// stored job has, and one with PreserveResources the resources of each
// of its tasks, as Nomad's; a new group or task keeps what it says.
func TestRegisterPreserveCountsAndResources(t *testing.T) {
	b, srv := newTestAPI(t)
	job := func(count1, count2, cpu int) string {
		r := strings.NewReplacer("@C1", strconv.Itoa(count1), "@C2", strconv.Itoa(count2), "@CPU", strconv.Itoa(cpu))
		return r.Replace(`{"ID":"web","TaskGroups":[` +
			`{"Name":"a","Count":@C1,"Tasks":[{"Name":"t","Driver":"mock","Resources":{"CPU":@CPU,"MemoryMB":64}}]},` +
			`{"Name":"b","Count":@C2,"Tasks":[{"Name":"t","Driver":"mock","Resources":{"CPU":@CPU,"MemoryMB":64}}]}]}`)
	}
	first := strings.Replace(job(3, 2, 100), `,{"Name":"b"`, `,{"Name":"x"`, 1) // b is new below
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", `{"Job":`+first+`}`); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", `{"Job":`+job(1, 5, 50)+`,"PreserveCounts":true,"PreserveResources":true}`); code != 200 {
		t.Fatalf("register with preserve: %d %s", code, body)
	}
	stored, _ := b.State().Snapshot().JobByID("default", "web")
	a, bg := stored.LookupTaskGroup("a"), stored.LookupTaskGroup("b")
	if a.Count != 3 || a.Tasks[0].Resources.CPU != 100 || bg.Count != 5 || bg.Tasks[0].Resources.CPU != 50 {
		t.Fatalf("preserved: a %d/%d, b %d/%d", a.Count, a.Tasks[0].Resources.CPU, bg.Count, bg.Tasks[0].Resources.CPU)
	}
	// Without, the submitted values win.
	if code, body, _ := do(t, "PUT", srv.URL+"/v1/jobs", `{"Job":`+job(1, 5, 50)+`}`); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	stored, _ = b.State().Snapshot().JobByID("default", "web")
	if a := stored.LookupTaskGroup("a"); a.Count != 1 || a.Tasks[0].Resources.CPU != 50 {
		t.Fatalf("not preserved: %d/%d", a.Count, a.Tasks[0].Resources.CPU)
	}
}
