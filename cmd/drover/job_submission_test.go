package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJobRunSendsSubmission: job run sends the file it read, its -var
// flags and its -var-file contents, which the servers keep for the
// version registered (-check-index too); job inspect -hcl prints it.
func TestJobRunSendsSubmission(t *testing.T) {
	c := newCLICluster(t)
	dir := t.TempDir()
	src := `variable "cmd" {}
variable "n" { default = 1 }
job "web" {
  group "g" {
    count = var.n
    task "t" {
      driver = "raw_exec"
      config { command = var.cmd }
    }
  }
}
`
	path, vars := filepath.Join(dir, "web.hcl"), filepath.Join(dir, "vars.hcl")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vars, []byte(`n = 2`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runBounded(t, "", "job", "run", "-detach", "-address", c.addr, "-var", "cmd=/bin/sleep", "-var-file", vars, path); code != 0 {
		t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
	}
	sub, err := c.b.State().Snapshot().JobSubmission("default", "web", 0)
	if err != nil || sub == nil || sub.Source != src || sub.Format != "hcl2" || sub.VariableFlags["cmd"] != "/bin/sleep" || sub.Variables != "n = 2\n" {
		t.Fatalf("submission of version 0: %+v %v", sub, err)
	}
	idx := c.job("web").JobModifyIndex
	if code, out, errOut := runBounded(t, "", "job", "run", "-detach", "-check-index", itoa(idx), "-address", c.addr, "-var", "cmd=/bin/true", "-var-file", vars, path); code != 0 {
		t.Fatalf("run -check-index: %d\n%s\n%s", code, out, errOut)
	}
	sub, err = c.b.State().Snapshot().JobSubmission("default", "web", 1)
	if err != nil || sub == nil || sub.VariableFlags["cmd"] != "/bin/true" || !strings.Contains(sub.Source, `variable "cmd"`) {
		t.Fatalf("submission of version 1: %+v %v", sub, err)
	}

	// job inspect -hcl prints it back; -with-vars says how to run it again.
	code, out, errOut := runBounded(t, "", "job", "inspect", "-hcl", "-version", "0", "-address", c.addr, "web")
	if code != 0 || out != src+"\n" {
		t.Fatalf("inspect -hcl -version 0: %d %q %s", code, out, errOut)
	}
	code, out, errOut = runBounded(t, "", "job", "inspect", "-hcl", "-with-vars", "-address", c.addr, "web")
	if code != 0 || out != src+"\n" || !strings.Contains(errOut, "drover job run -namespace default -var cmd=/bin/true -var n = 2 -") {
		t.Fatalf("inspect -hcl -with-vars: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runBounded(t, "", "job", "inspect", "-with-vars", "-address", c.addr, "web"); code != 1 || !strings.Contains(errOut, "can only use -with-vars with -hcl") {
		t.Fatalf("-with-vars alone: %d %q", code, errOut)
	}
}
