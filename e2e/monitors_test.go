package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// TestMonitorsFollowWhatTheyStart runs the CLI's monitors against a dev
// agent with real raw_exec tasks: job run stops at a canary that waits for
// promotion and says what to run; deployment promote follows the rollout
// to its end; deployment status -monitor follows one; deployment fail of
// an auto_revert version follows the rollback; job revert follows the
// reverted version's rollout.
func TestMonitorsFollowWhatTheyStart(t *testing.T) {
	p := startDevAgent(t)
	c := p.client()
	dir := t.TempDir()
	write := func(version string, canary int) string {
		s := rolloutSpec{ID: "mon", Count: 2, Version: version, Update: "      max_parallel     = 1\n" +
			"      canary           = " + strconv.Itoa(canary) + "\n      auto_revert      = true\n" +
			"      min_healthy_time = \"200ms\"\n      healthy_deadline = \"1m\"\n      progress_deadline = \"2m\""}
		path := filepath.Join(dir, "mon-"+version+".hcl")
		if err := os.WriteFile(path, []byte(s.hcl()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}

	// v0: no canary, job run follows to success.
	out, err := p.cli(t, "job", "run", write("1", 0))
	if err != nil || !strings.Contains(out, "successful") {
		t.Fatalf("job run v0: %v\n%s", err, out)
	}

	// v1 with a canary: job run returns 0 once the canary is healthy,
	// saying what to run.
	out, err = p.cli(t, "job", "run", write("2", 1))
	if err != nil || !strings.Contains(out, "waiting to be promoted: drover deployment promote ") {
		t.Fatalf("job run of a canary: %v\n%s", err, out)
	}
	d1 := versionDeployment(t, c, "mon", 1, structs.DeploymentStatusRunning, 30*time.Second)

	// deployment status -monitor stops at the same wait.
	out, err = p.cli(t, "deployment", "status", "-monitor", d1.ID[:8])
	if err != nil || !strings.Contains(out, "waiting to be promoted") {
		t.Fatalf("deployment status -monitor: %v\n%s", err, out)
	}

	// deployment promote follows the rest of the rollout.
	out, err = p.cli(t, "deployment", "promote", d1.ID[:8])
	if err != nil || !strings.Contains(out, `Deployment "`+d1.ID[:8]+`" promoted`) ||
		!strings.Contains(out, `✓ Deployment "`+d1.ID[:8]+`" successful`) {
		t.Fatalf("deployment promote: %v\n%s", err, out)
	}

	// v2 with a canary, failed by hand: auto_revert rolls back to v1 and
	// the command follows the rollback to its success.
	if out, err := p.cli(t, "job", "run", "-detach", write("3", 1)); err != nil {
		t.Fatalf("job run v2: %v\n%s", err, out)
	}
	d2 := versionDeployment(t, c, "mon", 2, structs.DeploymentStatusRunning, 30*time.Second)
	out, err = p.cli(t, "deployment", "fail", d2.ID[:8])
	if err != nil || !strings.Contains(out, "Auto-reverted to job version 1") || !strings.Contains(out, "Monitoring the rollback") ||
		!strings.Contains(out, "successful") {
		t.Fatalf("deployment fail: %v\n%s", err, out)
	}
	waitRollout(t, c, "mon", 3, structs.DeploymentStatusSuccessful, 30*time.Second)

	// job revert to v0 follows that version's rollout.
	out, err = p.cli(t, "job", "revert", "mon", "0")
	if err != nil || !strings.Contains(out, `Job "mon" reverted to version 0 (now version 4)`) ||
		!strings.Contains(out, "Monitoring evaluation") || !strings.Contains(out, "successful") {
		t.Fatalf("job revert: %v\n%s", err, out)
	}
}
