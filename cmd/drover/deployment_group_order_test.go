package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// orderedDeployment is a deployment of a job that rolls its groups one at
// a time: db done, api rolling, web waiting.
func orderedDeployment() *structs.Deployment {
	return &structs.Deployment{
		ID: depA, Namespace: structs.DefaultNamespace, JobID: "web", Status: structs.DeploymentStatusRunning,
		StatusDescription: structs.GroupWaitsDescription("web", "api"),
		TaskGroups: map[string]*structs.DeploymentState{
			"web": {DesiredTotal: 1, Order: 3, State: structs.GroupStateWaiting},
			"db":  {DesiredTotal: 2, HealthyAllocs: 2, PlacedAllocs: 2, Order: 1, State: structs.GroupStateDone},
			"api": {DesiredTotal: 3, PlacedAllocs: 1, Order: 2, State: structs.GroupStateRolling},
		},
	}
}

// deployment status and the live view list the groups of a job that
// rolls them in order by Order, with Order and State columns; without an
// order they keep Nomad's layout, by name.
func TestDeploymentStatusGroupOrder(t *testing.T) {
	d := orderedDeployment()
	var b bytes.Buffer
	(&opFlags{}).printDeploymentStatus(&b, d)
	want := `
Deployed
Task Group  Order  State    Auto Revert  Promoted  Desired  Canaries  Placed  Healthy  Unhealthy  Progress Deadline
db          1      done     false        N/A       2        0         2       2        0          N/A
api         2      rolling  false        N/A       3        0         1       0        0          N/A
web         3      waiting  false        N/A       1        0         0       0        0          N/A
`
	if out := b.String(); !strings.HasSuffix(out, want) {
		t.Fatalf("deployment status:\n%s\nwant it to end with:%s", out, want)
	}
	if !strings.Contains(b.String(), "Description = Deployment is running: group web waits for group api\n") {
		t.Fatalf("deployment status lacks the description:\n%s", b.String())
	}

	live := renderDeployment(d)
	for _, line := range []string{
		"    Task Group  Order  State    Auto Revert",
		"    db          1      done     false",
		"    api         2      rolling  false",
		"    web         3      waiting  false",
	} {
		if !strings.Contains(live, line) {
			t.Fatalf("live view lacks %q:\n%s", line, live)
		}
	}
	if strings.Index(live, "    db ") > strings.Index(live, "    api ") || strings.Index(live, "    api ") > strings.Index(live, "    web ") {
		t.Fatalf("live view not in Order:\n%s", live)
	}

	// Without an order: Nomad's layout, by name.
	for _, s := range d.TaskGroups {
		s.Order, s.State = 0, ""
	}
	b.Reset()
	(&opFlags{}).printDeploymentStatus(&b, d)
	if out := b.String(); strings.Contains(out, "Order") || !strings.Contains(out, "Task Group  Auto Revert") ||
		strings.Index(out, "\napi ") > strings.Index(out, "\ndb ") {
		t.Fatalf("deployment status without an order:\n%s", out)
	}
	if live := renderDeployment(d); strings.Contains(live, "Order") {
		t.Fatalf("live view without an order:\n%s", live)
	}
}
