package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// TestNodePoolCommands: node pool init, apply (HCL, JSON, stdin), info by
// prefix, list, nodes, jobs and delete against an in-process API, as a
// Nomad user types them.
func TestNodePoolCommands(t *testing.T) {
	b, addr, _ := newCLIServer(t)
	a := "-address=" + addr
	dir := t.TempDir()
	t.Chdir(dir)

	wantCLI(t, 0, []string{"Example node pool specification written to pool.nomad.hcl"}, "node", "pool", "init")
	wantCLI(t, 1, []string{`File "pool.nomad.hcl" already exists`}, "node", "pool", "init")
	if out := wantCLI(t, 0, nil, "node", "pool", "init", "-out", "json", "-quiet"); out != "" {
		t.Fatalf("-quiet printed %q", out)
	}
	wantCLI(t, 0, []string{`Successfully applied node pool "example"!`}, "node", "pool", "apply", a, "pool.nomad.hcl")
	wantCLI(t, 0, []string{"Name", "example", "Example node pool", "Node Identity TTL", "24h0m0s",
		"Metadata", "environment", "prod", "No scheduler configuration"}, "node", "pool", "info", a, "example")

	spec := writeFile(t, "gpu.hcl", `node_pool "gpu" {
  description       = "GPU nodes"
  node_identity_ttl = "12h"
  meta {
    cores = 8
  }
  scheduler_config {
    scheduler_algorithm             = "spread"
    memory_oversubscription_enabled = true
  }
}
`)
	wantCLI(t, 0, []string{`Successfully applied node pool "gpu"!`}, "node", "pool", "apply", a, spec)
	wantCLI(t, 0, []string{"GPU nodes", "12h0m0s", "cores", "8", "Scheduler Algorithm", "spread", "Memory Oversubscription Enabled", "true"},
		"node", "pool", "info", a, "gp")
	wantCLI(t, 0, []string{`"Name": "gpu"`, `"SchedulerAlgorithm": "spread"`}, "node", "pool", "info", "-json", a, "gpu")
	wantCLI(t, 0, []string{"GPU nodes\n"}, "node", "pool", "info", "-t", `{{.Description}}{{"\n"}}`, a, "gpu")
	wantCLI(t, 1, []string{`No node pool with prefix "nope" found`}, "node", "pool", "info", a, "nope")

	code, out, errOut := runCLI(t, `{"Name":"dev","Description":"from stdin"}`, "node", "pool", "apply", "-json", a, "-")
	if code != 0 || !strings.Contains(out, `Successfully applied node pool "dev"!`) {
		t.Fatalf("apply -json -: %d %q %q", code, out, errOut)
	}
	wantCLI(t, 1, []string{"Prefix matched multiple node pools", "default", "dev"}, "node", "pool", "info", a, "d")
	wantCLI(t, 1, []string{"Failed to parse input content", "unknown attribute \"colour\""}, "node", "pool", "apply", a, writeFile(t, "bad.hcl", `node_pool "x" { colour = "red" }`))
	wantCLI(t, 1, []string{"Error applying node pool", `modifying node pool "all" is not allowed`}, "node", "pool", "apply", a, writeFile(t, "all.hcl", `node_pool "all" {}`))
	wantCLI(t, 1, []string{"Error applying node pool", `invalid name "a.b"`}, "node", "pool", "apply", a, writeFile(t, "dot.hcl", `node_pool "a.b" {}`))

	out = wantCLI(t, 0, []string{"Name", "Description", "all", "default", "dev", "example", "gpu"}, "node", "pool", "list", a)
	if strings.Index(out, "example") > strings.Index(out, "gpu") {
		t.Fatalf("list not by name:\n%s", out)
	}
	if out := wantCLI(t, 0, []string{"gpu"}, "node", "pool", "list", "-filter", `Name == "gpu"`, a); strings.Contains(out, "example") {
		t.Fatalf("-filter: %s", out)
	}

	n := cliNode()
	n.NodePool = "gpu"
	b.must(t, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n})
	wantCLI(t, 0, []string{idShort(n.ID), "gpu"}, "node", "pool", "nodes", a, "gpu")
	wantCLI(t, 0, []string{n.ID}, "node", "pool", "nodes", "-verbose", a, "gp")
	wantCLI(t, 1, []string{`No node pool with prefix "nope" found`}, "node", "pool", "jobs", a, "nope")
	wantCLI(t, 0, []string{"No nodes"}, "node", "pool", "nodes", a, "default")
	b.registerWeb(t)
	wantCLI(t, 0, []string{"web"}, "node", "pool", "jobs", a, "default")
	wantCLI(t, 0, []string{"No jobs"}, "node", "pool", "jobs", a, "gpu")

	wantCLI(t, 1, []string{"Error deleting node pool", `node pool "gpu" has nodes in regions: [global]`}, "node", "pool", "delete", a, "gpu")
	wantCLI(t, 0, []string{`Successfully deleted node pool "dev"!`}, "node", "pool", "delete", a, "dev")
	wantCLI(t, 1, []string{"node pool dev not found"}, "node", "pool", "delete", a, "dev")

	// A revert to a version whose pool is gone is refused, as a
	// registration of it would be.
	wantCLI(t, 0, nil, "node", "pool", "apply", a, writeFile(t, "tmp.hcl", `node_pool "tmp" {}`))
	web := b.registerWeb(t)
	for _, pool := range []string{"tmp", "default"} {
		j := web.Copy()
		j.NodePool = pool
		if _, err := b.leader.RegisterJob(t.Context(), j); err != nil {
			t.Fatal(err)
		}
	}
	wantCLI(t, 0, []string{`Successfully deleted node pool "tmp"!`}, "node", "pool", "delete", a, "tmp")
	v, _ := b.State().Snapshot().JobByID(structs.DefaultNamespace, "web")
	wantCLI(t, 1, []string{`job "web" is in nonexistent node pool "tmp"`}, "job", "revert", a, "web", fmt.Sprint(v.Version-1))
}
