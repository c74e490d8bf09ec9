package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNomadShellSession runs a shell session written for Nomad's CLI
// (testdata/nomad-session.sh: namespace apply, job run -namespace, job
// status -t and -json, alloc logs -task, -stderr and -job, node pool list,
// job stop, system gc) unchanged, with drover as `nomad` on PATH, against
// a dev agent: what a Nomad user types, drover takes.
func TestNomadShellSession(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	p := startDevAgent(t)
	bin := t.TempDir()
	if err := os.Symlink(droverBin, filepath.Join(bin, "nomad")); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("testdata/nomad-session.sh")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, "bash", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "NOMAD_ADDR=http://"+p.httpAddr,
		"DROVER_ADDR=", "NOMAD_NAMESPACE=", "DROVER_NAMESPACE=", "NOMAD_TOKEN=", "DROVER_TOKEN=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "session-ok") {
		t.Fatalf("the session failed: %v\n%s", err, out)
	}
	for _, want := range []string{`Successfully applied namespace "dev"!`, "resources.disk is not supported by drover and is ignored (Nomad parses it and ignores it too"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the session's output lacks %q:\n%s", want, out)
		}
	}
}
