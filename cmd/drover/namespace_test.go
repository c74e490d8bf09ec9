package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// TestNamespaceNodePoolSystemCommands runs the commands around
// namespaces, node pools, the scheduler and the system against an
// in-process API, as a Nomad user types them.
func TestNamespaceNodePoolSystemCommands(t *testing.T) {
	b, addr, _ := newCLIServer(t)
	b.registerWeb(t)
	a := "-address=" + addr

	wantCLI(t, 0, []string{`Successfully applied namespace "dev"!`}, "namespace", "apply", a, "dev")
	wantCLI(t, 0, []string{`Successfully applied namespace "dev"!`}, "namespace", "apply", "-description", "the dev team", a, "dev")
	wantCLI(t, 0, []string{"Name                   = dev", "Description            = the dev team", "Enabled Drivers        = *"},
		"namespace", "status", a, "dev")
	spec := filepath.Join(t.TempDir(), "qa.hcl")
	if err := os.WriteFile(spec, []byte(`name        = "qa"
description = "the QA team"
capabilities {
  enabled_task_drivers  = ["raw_exec", "exec"]
  disabled_network_modes = ["host"]
}
node_pool_config {
  default = "default"
  allowed = ["default", "gpu-*"]
}
meta {
  owner = "qa@example.com"
  tier  = 2
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	wantCLI(t, 0, []string{`Successfully applied namespace "qa"!`}, "namespace", "apply", a, spec)
	wantCLI(t, 0, []string{"Enabled Drivers        = raw_exec,exec", "Disabled Network Modes = host", "Metadata", "owner = qa@example.com", "tier  = 2",
		"Node Pool Configuration", "Allowed = default, gpu-*"}, "namespace", "status", a, "qa")
	bad := filepath.Join(t.TempDir(), "bad.hcl")
	if err := os.WriteFile(bad, []byte("name = \"x\"\nlimits = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantCLI(t, 1, []string{"Error parsing namespace specification", `unknown attribute "limits"`}, "namespace", "apply", a, bad)
	js := filepath.Join(t.TempDir(), "ops.json")
	if err := os.WriteFile(js, []byte(`{"Name":"ops","Meta":{"k":"v"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	wantCLI(t, 0, []string{`Successfully applied namespace "ops"!`}, "namespace", "apply", "-json", a, js)
	wantCLI(t, 0, []string{"Name", "default", "Default shared namespace", "dev", "the dev team", "ops", "qa"}, "namespace", "list", a)
	wantCLI(t, 0, []string{"default\ndev\nops\nqa\n"}, "namespace", "list", "-t", `{{range .}}{{.Name}}{{"\n"}}{{end}}`, a)
	wantCLI(t, 0, []string{`"Name": "ops"`, `"k": "v"`}, "namespace", "inspect", a, "op")
	wantCLI(t, 1, []string{"Prefix matched multiple namespaces", "dev", "default"}, "namespace", "status", a, "de")
	wantCLI(t, 0, []string{"Default shared namespace"}, "namespace", "status", a, "default")
	wantCLI(t, 1, []string{`Namespace "nope" matched no namespaces`}, "namespace", "status", a, "nope")
	wantCLI(t, 1, []string{"can not delete default namespace"}, "namespace", "delete", a, "default")
	wantCLI(t, 0, []string{`Successfully deleted namespace "ops"!`}, "namespace", "delete", a, "ops")
	wantCLI(t, 1, []string{"Error deleting namespace", "namespace not found"}, "namespace", "delete", a, "ops")
	wantCLI(t, 0, []string{"web"}, "job", "status", "-namespace", "default", "-short", a, "web")
	wantCLI(t, 1, []string{"No job(s) with prefix or id"}, "job", "status", "-namespace", "dev", a, "web")

	wantCLI(t, 0, []string{"all", "default", "Default node pool."}, "node", "pool", "list", a)
	wantCLI(t, 0, []string{"Default node pool."}, "node", "pool", "info", a, "default")
	wantCLI(t, 0, []string{"web"}, "node", "pool", "jobs", a, "default")
	wantCLI(t, 0, []string{"No nodes"}, "node", "pool", "nodes", a, "all")
	wantCLI(t, 1, []string{`deleting node pool "default" is not allowed`}, "node", "pool", "delete", a, "default")

	wantCLI(t, 0, []string{"Scheduler Algorithm", "binpack", "Memory Oversubscription", "true"}, "operator", "scheduler", "get-config", a)
	wantCLI(t, 0, []string{"Scheduler configuration updated!"}, "operator", "scheduler", "set-config", "-scheduler-algorithm", "binpack", a)
	wantCLI(t, 0, []string{"Scheduler configuration updated!"}, "operator", "scheduler", "set-config", "-scheduler-algorithm=spread", a)
	wantCLI(t, 0, []string{"Scheduler Algorithm", "spread"}, "operator", "scheduler", "get-config", a)
	wantCLI(t, 1, []string{"invalid scheduler algorithm: fastest"}, "operator", "scheduler", "set-config", "-scheduler-algorithm=fastest", a)
	wantCLI(t, 0, nil, "system", "reconcile", "summaries", a)
	wantCLI(t, 1, []string{"not a server: garbage collection unavailable"}, "system", "gc", a)

	wantCLI(t, 1, []string{"Error listing ACL roles", "ACL support disabled"}, "acl", "role", "list", "-json", a)
	wantCLI(t, 1, []string{"Error force-leaving server s1", "this agent runs no server that can force another out"}, "server", "force-leave", "-prune", a, "s1")
	wantCLI(t, 1, []string{"No path to region"}, "job", "status", "-region", "eu", a)
}

// TestNodeStatusNomadFlags: node status -quiet, -verbose, -short, -allocs
// and -os, as Nomad's.
func TestNodeStatusNomadFlags(t *testing.T) {
	b, addr, _ := newCLIServer(t)
	b.must(t, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: cliNode()})
	a := "-address=" + addr
	n := cliNode()
	wantCLI(t, 0, []string{idShort(n.ID) + "\n"}, "node", "status", "-quiet", a)
	wantCLI(t, 0, []string{n.ID, "Address", "Version"}, "node", "status", "-verbose", a)
	wantCLI(t, 0, []string{"Running Allocs", "OS"}, "node", "status", "-allocs", "-os", a)
	out := wantCLI(t, 0, []string{"ID", n.ID}, "node", "status", "-short", a, n.ID)
	if strings.Contains(out, "Allocated Resources") {
		t.Fatalf("-short printed the resources:\n%s", out)
	}
	wantCLI(t, 1, []string{"-self takes no node ID"}, "node", "status", "-self", a, n.ID)
}

// TestUIFlag: -ui opens the web UI at the page of what the command showed.
func TestUIFlag(t *testing.T) {
	b, addr, _ := newCLIServer(t)
	b.registerWeb(t)
	var opened []string
	old := openBrowser
	openBrowser = func(u string) error { opened = append(opened, u); return nil }
	t.Cleanup(func() { openBrowser = old })
	wantCLI(t, 0, []string{"Opening URL"}, "job", "status", "-ui", "-address="+addr, "web")
	wantCLI(t, 0, nil, "node", "status", "-ui", "-address="+addr)
	want := []string{addr + "/ui/jobs/web", addr + "/ui/nodes"}
	if strings.Join(opened, " ") != strings.Join(want, " ") {
		t.Fatalf("opened %q, want %q", opened, want)
	}
	wantCLI(t, 1, []string{"-ui is not supported by drover: the web UI has no page"}, "eval", "status", "-ui", "-address="+addr, "abc")
}

// TestPaging: -per-page and -page-token page a list by its sort key, the
// next page's token on stderr, as Nomad's.
func TestPaging(t *testing.T) {
	items := []string{"d", "a", "c", "b", "e"}
	id := func(s string) string { return s }
	page, next := pageOf(pageFlags{perPage: 2}, items, id)
	if strings.Join(page, "") != "ab" || next != "c" {
		t.Fatalf("first page %v, next %q", page, next)
	}
	page, next = pageOf(pageFlags{perPage: 2, token: next}, items, id)
	if strings.Join(page, "") != "cd" || next != "e" {
		t.Fatalf("second page %v, next %q", page, next)
	}
	page, next = pageOf(pageFlags{perPage: 2, token: next}, items, id)
	if strings.Join(page, "") != "e" || next != "" {
		t.Fatalf("last page %v, next %q", page, next)
	}
	_, addr, _ := newCLIServer(t)
	code, out, errOut := runCLI(t, "", "node", "pool", "list", "-per-page", "1", "-address="+addr)
	if code != 0 || !strings.Contains(out, "all") || strings.Contains(out, "default") || !strings.Contains(errOut, "Next page token: default") {
		t.Fatalf("node pool list -per-page 1: %d %q %q", code, out, errOut)
	}
	code, out, _ = runCLI(t, "", "node", "pool", "list", "-page-token", "default", "-address="+addr)
	if code != 0 || strings.Contains(out, "all") || !strings.Contains(out, "default") {
		t.Fatalf("node pool list -page-token default: %d %q", code, out)
	}
}
