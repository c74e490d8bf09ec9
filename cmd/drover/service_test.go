package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// servicesCLIFixture stores two running allocs of job "web" whose group
// registers "db" on port "pg" (tags primary, v1) and returns the server's
// URL and the allocs' IDs.
func servicesCLIFixture(t *testing.T) (string, []string) {
	t.Helper()
	b, url, _ := newCLIServer(t)
	b.must(t, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: &structs.Node{
		ID: "node-0001-aaaa", Name: "n1", Datacenter: "dc1", Status: structs.NodeStatusReady,
		Attributes: map[string]string{"unique.network.ip-address": "10.0.0.5"},
	}})
	job := b.registerWeb(t)
	job = job.Copy()
	job.TaskGroups[0].Services = []*structs.Service{{Name: "db", PortLabel: "pg", Provider: structs.ServiceProviderNomad, Tags: []string{"v1", "primary"}}}
	ids := []string{"a1a1a1a1-0000-4000-8000-000000000001", "b2b2b2b2-0000-4000-8000-000000000002"}
	var placed []*structs.Allocation
	for i, id := range ids {
		placed = append(placed, &structs.Allocation{
			ID: id, Namespace: "default", Name: structs.AllocName("web", "web", i), NodeID: "node-0001-aaaa",
			JobID: "web", TaskGroup: "web", DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusRunning,
			AllocatedResources: &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{
				Ports: []structs.PortMapping{{Label: "pg", Value: 21000 + i}}}},
		})
	}
	b.must(t, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: "e1", Job: job, AllocsPlaced: placed})
	return url, ids
}

func TestServiceCommands(t *testing.T) {
	url, ids := servicesCLIFixture(t)
	code, out, errOut := runCLI(t, "", "service", "list", "-address", url)
	if code != 0 || !strings.Contains(out, "Service Name") || !strings.Contains(out, "db") || !strings.Contains(out, "[primary,v1]") {
		t.Fatalf("service list: %d %q %q", code, out, errOut)
	}
	code, out, _ = runCLI(t, "", "service", "list", "-address", url, "-namespace", "*")
	if code != 0 || !strings.Contains(out, "Namespace") || !strings.Contains(out, "default") {
		t.Fatalf("service list -namespace '*': %d %q", code, out)
	}

	code, out, _ = runCLI(t, "", "service", "info", "-address", url, "db")
	if code != 0 {
		t.Fatalf("service info: %d %q", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "Job ID") ||
		!strings.Contains(lines[1], "10.0.0.5:21000") || !strings.HasSuffix(lines[1], "node-000  a1a1a1a1") ||
		!strings.Contains(lines[2], "10.0.0.5:21001") {
		t.Fatalf("service info:\n%s", out)
	}
	id0 := "_nomad-task-" + ids[0] + "-group-web-db-pg"
	code, out, _ = runCLI(t, "", "service", "info", "-address", url, "-verbose", "db")
	if code != 0 || !strings.Contains(out, "ID           = "+id0) || !strings.Contains(out, "Alloc ID     = "+ids[0]) ||
		!strings.Contains(out, "Datacenter   = dc1") {
		t.Fatalf("service info -verbose:\n%s", out)
	}
	code, out, _ = runCLI(t, "", "service", "info", "-address", url, "-json", "db")
	var regs []*structs.ServiceRegistration
	if err := json.Unmarshal([]byte(out), &regs); code != 0 || err != nil || len(regs) != 2 {
		t.Fatalf("service info -json: %d %v %q", code, err, out)
	}
	code, out, _ = runCLI(t, "", "service", "info", "-address", url, "-t", "{{range .}}{{.Port}} {{end}}", "db")
	if code != 0 || out != "21000 21001 " {
		t.Fatalf("service info -t: %d %q", code, out)
	}
	code, out, _ = runCLI(t, "", "service", "info", "-address", url, "nope")
	if code != 0 || strings.TrimSpace(out) != "No service registrations found" {
		t.Fatalf("service info of an unknown service: %d %q", code, out)
	}

	code, out, _ = runCLI(t, "", "service", "delete", "-address", url, "db", id0)
	if code != 0 || strings.TrimSpace(out) != "Successfully deleted service registration" {
		t.Fatalf("service delete: %d %q", code, out)
	}
	code, out, _ = runCLI(t, "", "service", "info", "-address", url, "db")
	if code != 0 || strings.Contains(out, "a1a1a1a1") || !strings.Contains(out, "b2b2b2b2") {
		t.Fatalf("after delete:\n%s", out)
	}
	code, _, errOut = runCLI(t, "", "service", "delete", "-address", url, "db", id0)
	if code != 1 || !strings.HasPrefix(errOut, "Error deleting service registration:") {
		t.Fatalf("deleting again: %d %q", code, errOut)
	}
}
