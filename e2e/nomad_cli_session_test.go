package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/loopback"
)

// TestNomadShellSession runs a shell session written for Nomad's CLI
// (testdata/nomad-session.sh: namespace apply, job run -namespace, job
// status -t and -json, alloc logs -task, -stderr and -job, node pool list,
// job stop, system gc) unchanged, with drover as `nomad` on PATH, against
// a dev agent: what a Nomad user types, drover takes.
func TestNomadShellSession(t *testing.T) {
	p := startDevAgent(t)
	runNomadSession(t, p.httpAddr)
}

// TestNomadShellSessionThreeServers runs the same session against three
// servers configured by files and a client agent given all three: the
// session's NOMAD_ADDR is the client agent's (as on a Nomad client node,
// where the CLI talks to the local agent), which forwards the API to the
// servers; then the read-only commands run again through a follower.
func TestNomadShellSessionThreeServers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four agent processes")
	}
	dir := t.TempDir()
	procs, addrs := startThreeServers(t, dir, "")
	clientHTTP := loopback.Addr(t)
	startAgentProc(t, "c1", clientHTTP, "-client", "-data-dir", filepath.Join(dir, "c1"),
		"-servers", strings.Join(addrs, ","), "-http-addr", clientHTTP, "-node", "c1")
	procs[0].waitNodeReady(1)
	follower := findFollower(t, procs)
	runNomadSession(t, clientHTTP)

	// Through a follower: the namespace the session applied, the pools,
	// the job's purge, as every server sees them.
	bin := nomadOnPath(t)
	for _, args := range [][]string{
		{"namespace", "list", "-json"},
		{"node", "pool", "list"},
		{"server", "members"},
		{"operator", "scheduler", "get-config"},
		{"agent-info"},
	} {
		cmd := exec.CommandContext(bounded(t, 30*time.Second), filepath.Join(bin, "nomad"), args...)
		cmd.Env = sessionEnv(bin, follower.httpAddr)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("nomad %s through a follower: %v\n%s", strings.Join(args, " "), err, out)
			continue
		}
		if args[0] == "namespace" && !strings.Contains(string(out), `"Name": "dev"`) {
			t.Errorf("nomad namespace list -json through a follower lacks the session's namespace:\n%s", out)
		}
	}
}

// runNomadSession runs testdata/nomad-session.sh with drover as nomad on
// PATH and NOMAD_ADDR=addr, and checks what it printed.
func runNomadSession(t *testing.T, addr string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	bin := nomadOnPath(t)
	script, err := filepath.Abs("testdata/nomad-session.sh")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, "bash", script)
	cmd.Dir = t.TempDir()
	cmd.Env = sessionEnv(bin, addr)
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

// nomadOnPath returns a directory holding drover named nomad.
func nomadOnPath(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	if err := os.Symlink(droverBin, filepath.Join(bin, "nomad")); err != nil {
		t.Fatal(err)
	}
	return bin
}

// sessionEnv is the environment of a session: drover as nomad first on
// PATH, NOMAD_ADDR=addr, and no address, namespace or token of the
// machine's own.
func sessionEnv(bin, addr string) []string {
	return append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "NOMAD_ADDR=http://"+addr,
		"DROVER_ADDR=", "NOMAD_NAMESPACE=", "DROVER_NAMESPACE=", "NOMAD_TOKEN=", "DROVER_TOKEN=")
}
