package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// A region's leader killed in the middle of a multi-region rollout: west
// (a dev agent) rolls first, east (three servers, no client: its copy has
// count 0) waits pending. East's leader is SIGKILLed while west rolls; the
// leader east elects next reads where the rollout stands from state, starts
// east's deployment when west's is done, and both regions end successful.
func TestMultiregionRolloutRegionLeaderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four agent processes")
	}
	east := startRegionServers(t, "east", 3)
	west := startRegionDevAgent(t, "west", "", "")
	west.waitNodeReady(1)
	leader := regionLeader(t, east)
	if out, err := west.cli(t, "server", "join", leader.httpAddr); err != nil || !strings.Contains(out, "Joined 1 servers successfully") {
		t.Fatalf("server join: %v\n%s", err, out)
	}
	for _, p := range append(slices.Clone(east), west) {
		eventually(t, 20*time.Second, p.name+" listing both regions", func() error {
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

	wc := west.client()
	spec := rolloutSpec{ID: "mr-leader", Count: 1, Version: "1", Update: `      max_parallel      = 1
      min_healthy_time  = "8s"
      healthy_deadline  = "30s"
      progress_deadline = "45s"`}
	stopJobProcs(t, wc, spec.ID)
	job := spec.job(t)
	job.Multiregion = &structs.Multiregion{
		Strategy: &structs.MultiregionStrategy{MaxParallel: 1, OnFailure: structs.MultiregionOnFailureFailAll},
		Regions: []*structs.MultiregionRegion{
			{Name: "west", Count: 1, Datacenters: []string{"dc1"}},
			{Name: "east", Count: 0, Datacenters: []string{"dc1"}},
		},
	}
	registerJob(t, wc, job)
	eventually(t, 20*time.Second, "east's deployment pending while west's runs", func() error {
		d, err := jobDeployment(t, leader.client(), spec.ID, 0)
		if err != nil || d == nil {
			return fmt.Errorf("east's deployment: %v", err)
		}
		if d.Status != structs.DeploymentStatusPending {
			return fmt.Errorf("east's deployment %s", d.Status)
		}
		return nil
	})
	if wd, err := jobDeployment(t, wc, spec.ID, 0); err != nil || wd == nil {
		t.Fatalf("west's deployment: %v", err)
	} else if wd.Status != structs.DeploymentStatusRunning {
		t.Logf("west's deployment was already %s when east's leader was killed", wd.Status)
	}

	_ = leader.cmd.Process.Kill()
	<-leader.done
	var rest []*agentProc
	for _, p := range east {
		if p != leader {
			rest = append(rest, p)
		}
	}
	next := regionLeader(t, rest)
	t.Logf("east's leader %s killed; %s leads", leader.name, next.name)
	for _, r := range []struct {
		name string
		p    *agentProc
	}{{"west", west}, {"east", next}} {
		d := versionDeployment(t, r.p.client(), spec.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
		if !d.IsMultiregion {
			t.Fatalf("%s's deployment is not multi-region", r.name)
		}
	}
	if run := countAllocs(allocsOf(t, wc, spec.ID), 0, running); run != 1 {
		t.Fatalf("west runs %d allocs after the rollout", run)
	}
}
