package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// startFederatedPair runs a dev agent of east and one of west, joined
// with `drover server join`, each listing both regions.
func startFederatedPair(t *testing.T) (east, west *agentProc) {
	t.Helper()
	east = startRegionDevAgent(t, "east", "", "")
	west = startRegionDevAgent(t, "west", "", "")
	east.waitNodeReady(1)
	west.waitNodeReady(1)
	out, err := east.cli(t, "server", "join", west.httpAddr)
	if err != nil || !strings.Contains(out, "Joined 1 servers successfully") {
		t.Fatalf("server join: %v\n%s", err, out)
	}
	for _, p := range []*agentProc{east, west} {
		eventually(t, 15*time.Second, p.name+" listing both regions", func() error {
			got, err := regionsOf(t, p.client())
			if err != nil {
				return err
			}
			if !slices.Equal(got, []string{"east", "west"}) {
				return fmt.Errorf("regions %v", got)
			}
			return nil
		})
	}
	return east, west
}

// registerMultiregion registers spec as a multi-region job rolling east
// then west (max_parallel = 1, on_failure as given) through east, which
// registers it in both regions at one version; it waits for west to hold
// that version.
func registerMultiregion(t *testing.T, east, west *agentProc, spec rolloutSpec, onFailure string, version uint64) {
	t.Helper()
	job := spec.job(t)
	job.Multiregion = &structs.Multiregion{
		Strategy: &structs.MultiregionStrategy{MaxParallel: 1, OnFailure: onFailure},
		Regions: []*structs.MultiregionRegion{
			{Name: "east", Count: spec.Count, Datacenters: []string{"dc1"}},
			{Name: "west", Count: spec.Count, Datacenters: []string{"dc1"}},
		},
	}
	registerJob(t, east.client(), job)
	for _, p := range []*agentProc{east, west} {
		eventually(t, 10*time.Second, p.name+" holding version "+fmt.Sprint(version), func() error {
			j, _, err := p.client().Jobs().Info(ctx(t), job.ID, nil)
			if err != nil {
				return err
			}
			if j.Version != version || !j.IsMultiregion() {
				return fmt.Errorf("version %d, multiregion %v", j.Version, j.IsMultiregion())
			}
			return nil
		})
	}
}

// jobDeployment returns the job's deployment of version in the agent's
// region, or nil.
func jobDeployment(t *testing.T, c *apiclient.Client, jobID string, version uint64) (*structs.Deployment, error) {
	var deps []*structs.Deployment
	if _, err := c.Get(ctx(t), "/v1/job/"+jobID+"/deployments", nil, &deps); err != nil {
		return nil, err
	}
	for _, d := range deps {
		if d.JobVersion == version {
			return d, nil
		}
	}
	return nil, nil
}

func versionAllocs(allocs []*structs.AllocationListStub, version uint64) int {
	return countAllocs(allocs, version, func(*structs.AllocationListStub) bool { return true })
}

const mrUpdate = `      max_parallel      = 1
      min_healthy_time  = "3s"
      healthy_deadline  = "30s"
      progress_deadline = "45s"
      auto_revert       = true`

// A multi-region job with max_parallel = 1 rolls east, then west: west's
// deployment is pending and west places nothing while east's runs; once
// east's is blocked west's runs; then both are successful, their job
// version stable. deployment status shows both regions' deployments.
func TestMultiregionRolloutEastThenWest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agent processes")
	}
	east, west := startFederatedPair(t)
	ec, wc := east.client(), west.client()
	spec := rolloutSpec{ID: "mr-roll", Count: 1, Update: mrUpdate, Version: "1"}
	stopJobProcs(t, ec, spec.ID)
	stopJobProcs(t, wc, spec.ID)
	registerMultiregion(t, east, west, spec, structs.MultiregionOnFailureFailAll, 0)

	sawPending := false
	eventually(t, 45*time.Second, "east's deployment done", func() error {
		// West first, then east: a running east read after west's
		// allocations means west's turn had not come when they were read.
		wallocs, err := jobAllocs(t, wc, spec.ID)
		if err != nil {
			return err
		}
		wd, err := jobDeployment(t, wc, spec.ID, 0)
		if err != nil {
			return err
		}
		ed, err := jobDeployment(t, ec, spec.ID, 0)
		if err != nil || ed == nil {
			return fmt.Errorf("east's deployment: %v", err)
		}
		if !ed.IsMultiregion {
			t.Fatalf("east's deployment is not marked multi-region: %s", jsonString(ed))
		}
		switch ed.Status {
		case structs.DeploymentStatusRunning, structs.DeploymentStatusPending:
			if len(wallocs) > 0 {
				t.Fatalf("west placed %d allocs while east's deployment was %s", len(wallocs), ed.Status)
			}
			if wd != nil && wd.Status != structs.DeploymentStatusPending {
				t.Fatalf("west's deployment %s while east's was %s", wd.Status, ed.Status)
			}
			if wd != nil {
				sawPending = true
			}
			return fmt.Errorf("east %s", ed.Status)
		case structs.DeploymentStatusFailed, structs.DeploymentStatusCancelled:
			t.Fatalf("east's deployment %s: %s", ed.Status, ed.StatusDescription)
		}
		return nil
	})
	if !sawPending {
		t.Log("west's deployment was created after east's was done (its pending state was not observed)")
	}
	for _, r := range []struct {
		name string
		c    *apiclient.Client
	}{{"east", ec}, {"west", wc}} {
		d := versionDeployment(t, r.c, spec.ID, 0, structs.DeploymentStatusSuccessful, 45*time.Second)
		if !d.IsMultiregion {
			t.Fatalf("%s's deployment is not multi-region", r.name)
		}
		j, _, err := r.c.Jobs().Info(ctx(t), spec.ID, nil)
		if err != nil || !j.Stable {
			t.Fatalf("%s: job not stable after the rollout: %v %s", r.name, err, jsonString(j))
		}
		if run := countAllocs(allocsOf(t, r.c, spec.ID), 0, running); run != 1 {
			t.Fatalf("%s runs %d allocs", r.name, run)
		}
	}
	wd, _ := jobDeployment(t, wc, spec.ID, 0)
	out, err := west.cli(t, "deployment", "status", wd.ID)
	if err != nil || !strings.Contains(out, "Multiregion Deployment") || !regionRow(out, "east", "successful") || !regionRow(out, "west", "successful") {
		t.Fatalf("deployment status of west's deployment: %v\n%s", err, out)
	}
}

// regionRow reports whether out has a row of the Multiregion Deployment
// table for region with status.
func regionRow(out, region, status string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == region && f[2] == status {
			return true
		}
	}
	return false
}

// With on_failure = "fail_all", a version failing in east fails west's
// deployment of it before west places anything, and east, whose update
// block sets auto_revert, reverts to the stable version.
func TestMultiregionRolloutFailAll(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agent processes")
	}
	east, west := startFederatedPair(t)
	ec, wc := east.client(), west.client()
	good := rolloutSpec{ID: "mr-fail", Count: 1, Update: mrUpdate, Version: "1"}
	stopJobProcs(t, ec, good.ID)
	stopJobProcs(t, wc, good.ID)
	registerMultiregion(t, east, west, good, structs.MultiregionOnFailureFailAll, 0)
	versionDeployment(t, ec, good.ID, 0, structs.DeploymentStatusSuccessful, 45*time.Second)
	versionDeployment(t, wc, good.ID, 0, structs.DeploymentStatusSuccessful, 30*time.Second)

	bad := good
	bad.Version, bad.Script = "2", "exit 1"
	registerMultiregion(t, east, west, bad, structs.MultiregionOnFailureFailAll, 1)

	ed := versionDeployment(t, ec, good.ID, 1, structs.DeploymentStatusFailed, 45*time.Second)
	if !strings.Contains(ed.StatusDescription, "rolling back to job version 0") {
		t.Fatalf("east's failed deployment: %q", ed.StatusDescription)
	}
	wd := versionDeployment(t, wc, good.ID, 1, structs.DeploymentStatusFailed, 30*time.Second)
	if wd.StatusDescription != structs.DeploymentStatusDescriptionFailedByPeer {
		t.Fatalf("west's deployment: %q, want %q", wd.StatusDescription, structs.DeploymentStatusDescriptionFailedByPeer)
	}
	if n := versionAllocs(allocsOf(t, wc, good.ID), 1); n != 0 {
		t.Fatalf("west placed %d allocs of the failing version", n)
	}
	if run := countAllocs(allocsOf(t, wc, good.ID), 0, running); run != 1 {
		t.Fatalf("west runs %d allocs of version 0 after the failure", run)
	}
	// East reverted: version 2 restores version 0 and runs.
	eventually(t, 45*time.Second, "east running the revert", func() error {
		j, _, err := ec.Jobs().Info(ctx(t), good.ID, nil)
		if err != nil {
			return err
		}
		if j.Version != 2 || j.RevertOf == nil || *j.RevertOf != 0 {
			return fmt.Errorf("east's job: version %d revert of %v", j.Version, j.RevertOf)
		}
		if run := countAllocs(allocsOf(t, ec, good.ID), 2, running); run != 1 {
			return fmt.Errorf("east runs %d allocs of version 2", run)
		}
		return nil
	})
}

// With east gone while west's deployment waits for it, west keeps serving
// its job and its pending deployment names the wait: waiting for region
// "east" (unreachable since …).
func TestMultiregionRolloutRegionUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agent processes")
	}
	east, west := startFederatedPair(t)
	ec, wc := east.client(), west.client()
	spec := rolloutSpec{ID: "mr-cut", Count: 1, Version: "1",
		Update: `      max_parallel      = 1
      min_healthy_time  = "60s"
      healthy_deadline  = "90s"
      progress_deadline = "120s"`}
	stopJobProcs(t, ec, spec.ID)
	registerMultiregion(t, east, west, spec, structs.MultiregionOnFailureFailAll, 0)
	eventually(t, 20*time.Second, "west's deployment pending", func() error {
		d, err := jobDeployment(t, wc, spec.ID, 0)
		if err != nil || d == nil {
			return fmt.Errorf("west's deployment: %v", err)
		}
		if d.Status != structs.DeploymentStatusPending {
			t.Fatalf("west's deployment %s while east's runs (min_healthy_time 60s)", d.Status)
		}
		return nil
	})

	// East's allocation outlives its agent: killed at the end by its ID.
	eventually(t, 20*time.Second, "east's allocation placed", func() error {
		allocs, err := jobAllocs(t, ec, spec.ID)
		if err != nil || len(allocs) == 0 {
			return fmt.Errorf("east's allocs: %v", err)
		}
		for _, a := range allocs {
			id := a.ID
			t.Cleanup(func() { killAllocProcs(id) })
		}
		return nil
	})
	east.interrupt()
	var wd *structs.Deployment
	eventually(t, 30*time.Second, "west naming the unreachable region", func() error {
		d, err := jobDeployment(t, wc, spec.ID, 0)
		if err != nil || d == nil {
			return fmt.Errorf("west's deployment: %v", err)
		}
		if !strings.HasPrefix(d.StatusDescription, `waiting for region "east" (unreachable since `) {
			return fmt.Errorf("%s: %q", d.Status, d.StatusDescription)
		}
		wd = d
		return nil
	})
	if wd.Status != structs.DeploymentStatusPending {
		t.Fatalf("west's deployment %s", wd.Status)
	}
	if n := len(allocsOf(t, wc, spec.ID)); n != 0 {
		t.Fatalf("west placed %d allocs while east is unreachable", n)
	}
	out, err := west.cli(t, "deployment", "status", wd.ID)
	if err != nil || !strings.Contains(out, `waiting for region "east" (unreachable since`) || !strings.Contains(out, "east (error)") {
		t.Fatalf("deployment status in west: %v\n%s", err, out)
	}
}
