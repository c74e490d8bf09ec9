package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// A region cut off in the middle of a multi-region rollout, then back: west
// is frozen (SIGSTOP) while its deployment waits its turn; east rolls, its
// deployment turns blocked and waits naming west as unreachable; once west
// answers again (SIGCONT) it starts, rolls, and both regions end successful.
func TestMultiregionRolloutPartitionHealed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agent processes")
	}
	east, west := startFederatedPair(t)
	ec, wc := east.client(), west.client()
	spec := rolloutSpec{ID: "mr-heal", Count: 1, Update: mrUpdate, Version: "1"}
	stopJobProcs(t, ec, spec.ID)
	stopJobProcs(t, wc, spec.ID)
	registerMultiregion(t, east, west, spec, structs.MultiregionOnFailureFailAll, 0)
	eventually(t, 20*time.Second, "west's deployment pending", func() error {
		d, err := jobDeployment(t, wc, spec.ID, 0)
		if err != nil || d == nil {
			return fmt.Errorf("west's deployment: %v", err)
		}
		if d.Status != structs.DeploymentStatusPending {
			t.Fatalf("west's deployment %s while east's runs", d.Status)
		}
		return nil
	})

	if err := west.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := true
	t.Cleanup(func() {
		if frozen {
			_ = west.cmd.Process.Signal(syscall.SIGCONT)
		}
	})
	eventually(t, 45*time.Second, "east blocked, waiting for west", func() error {
		d, err := jobDeployment(t, ec, spec.ID, 0)
		if err != nil || d == nil {
			return fmt.Errorf("east's deployment: %v", err)
		}
		if d.Status == structs.DeploymentStatusFailed || d.Status == structs.DeploymentStatusSuccessful {
			t.Fatalf("east's deployment %s while west is cut off: %s", d.Status, d.StatusDescription)
		}
		if d.Status != structs.DeploymentStatusBlocked || !strings.HasPrefix(d.StatusDescription, `waiting for region "west" (unreachable since `) {
			return fmt.Errorf("%s: %q", d.Status, d.StatusDescription)
		}
		return nil
	})
	// East keeps serving its own jobs while its cross-region step waits.
	if n := countAllocs(allocsOf(t, ec, spec.ID), 0, running); n != 1 {
		t.Fatalf("east runs %d allocs of the version while west is cut off", n)
	}

	if err := west.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	frozen = false
	for _, r := range []struct {
		name string
		p    *agentProc
	}{{"west", west}, {"east", east}} {
		d := versionDeployment(t, r.p.client(), spec.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
		if !d.IsMultiregion {
			t.Fatalf("%s's deployment is not multi-region", r.name)
		}
		if run := countAllocs(allocsOf(t, r.p.client(), spec.ID), 0, running); run != 1 {
			t.Fatalf("%s runs %d allocs after the rollout", r.name, run)
		}
	}
}
