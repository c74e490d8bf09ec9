package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// zonedDeployment is a deployment whose group web rolls out zone by zone:
// b done, a rolling, the zone "" (nodes without the attribute) waiting.
func zonedDeployment(id string, job *structs.Job) *structs.Deployment {
	return &structs.Deployment{
		ID: id, Namespace: structs.DefaultNamespace, JobID: "web", JobVersion: job.Version,
		JobCreateIndex: job.CreateIndex, Status: structs.DeploymentStatusRunning,
		StatusDescription: structs.DeploymentStatusDescriptionRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 6, Zones: []*structs.ZoneState{
			{Name: "b", Size: 1, Healthy: 1, State: structs.ZoneStateDone},
			{Name: "a", Size: 3, Healthy: 1, InFlight: 1, Failed: 1, State: structs.ZoneStateRolling},
			{Name: "", Size: 2, State: structs.ZoneStateWaiting},
		}}},
	}
}

// deployment status and the live view print each zoned group's zones in
// rollout order; the live view names the rolling zone.
func TestDeploymentStatusZones(t *testing.T) {
	d := zonedDeployment(depA, &structs.Job{})
	var b bytes.Buffer
	(&opFlags{}).printDeploymentStatus(&b, d)
	want := `
Zones of group web
Zone    Size  Healthy  In Flight  Failed  State
b       1     1        0          0       done
a       3     1        1          1       rolling
(none)  2     0        0          0       waiting
`
	if out := b.String(); !strings.HasSuffix(out, want) {
		t.Fatalf("deployment status:\n%s\nwant it to end with:%s", out, want)
	}

	live := renderDeployment(d)
	for _, line := range []string{"    Current zone = web: a\n", "    Zones of group web\n",
		"    (none)  2     0        0          0       waiting\n"} {
		if !strings.Contains(live, line) {
			t.Fatalf("live view lacks %q:\n%s", line, live)
		}
	}
	// Two zones rolling (a success threshold let the next one start).
	d.TaskGroups["web"].Zones[2].State = structs.ZoneStateRolling
	if live := renderDeployment(d); !strings.Contains(live, "Current zone = web: a, (none)\n") {
		t.Fatalf("live view with two rolling zones:\n%s", live)
	}
	// A group without zones shows neither.
	d.TaskGroups["web"].Zones = nil
	if live := renderDeployment(d); strings.Contains(live, "Zone") {
		t.Fatalf("live view without zones:\n%s", live)
	}
}

// Through the API: the zones the store keeps, with figures it counted.
func TestDeploymentStatusZonesThroughAPI(t *testing.T) {
	b, addr, _ := newCLIServer(t)
	job := b.registerWeb(t)
	b.must(t, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: "e", Job: job, Deployment: zonedDeployment(depA, job),
		AllocsPlaced: []*structs.Allocation{{
			ID: "alloc-a", Namespace: structs.DefaultNamespace, Name: structs.AllocName("web", "web", 0), NodeID: "n1",
			JobID: "web", TaskGroup: "web", Zone: "a", DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusRunning, DeploymentID: depA, DeploymentStatus: &structs.AllocDeploymentStatus{},
		}},
		UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(),
	})
	out := wantCLI(t, 0, []string{"Zones of group web"}, "deployment", "status", "-address", addr, "0b23")
	rows := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 6 {
			rows[f[0]] = strings.Join(f[1:], " ")
		}
	}
	// The plan's states and sizes; the figures are the store's.
	for zone, want := range map[string]string{"b": "1 0 0 0 done", "a": "3 0 1 0 rolling", "(none)": "2 0 0 0 waiting"} {
		if rows[zone] != want {
			t.Fatalf("zone %s: %q, want %q\n%s", zone, rows[zone], want, out)
		}
	}
	if strings.Index(out, "\nb ") > strings.Index(out, "\na ") {
		t.Fatalf("zones not in rollout order:\n%s", out)
	}
	wantCLI(t, 0, []string{`"Zones": [`, `"Name": "b"`, `"InFlight": 1`}, "deployment", "status", "-json", "-address", addr, depA)
}
