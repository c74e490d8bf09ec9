package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// TestRolloutPolicyPausesSurviveFailover: on three real servers and a
// client, two deployments are paused — one at a checkpoint, one over
// max_failed — when the leader is SIGKILLed. The new leader keeps both
// pauses as they were (status, description, CheckpointsReached,
// UnhealthyAllocs, FailuresAtPause) and starts nothing; resumed, both
// go on from where they stopped and finish without pausing again.
func TestRolloutPolicyPausesSurviveFailover(t *testing.T) {
	chaosCheck(t)
	c := startChaosCluster(t)
	cp := rolloutSpec{ID: "cp-failover", Count: 4, Version: "1",
		Update: policyUpdate("max_parallel = 2", `checkpoints = ["50%"]`)}
	mf := rolloutSpec{ID: "mf-failover", Count: 4, Version: "1", Reschedule: rescheduleEvery,
		Update: policyUpdate("max_parallel = 1", "max_failed = 1", `on_failure = "pause"`)}
	for _, s := range []rolloutSpec{cp, mf} {
		s.run(t, c.api())
	}
	for _, s := range []rolloutSpec{cp, mf} {
		waitRollout(t, c.api(), s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	}
	cp.Version = "2"
	cp.run(t, c.api())
	// The first two starts of mf's new version fail; the later ones run.
	mf.Version, mf.Script = "2", failingStarts(t.TempDir(), 1, 2)
	mf.run(t, c.api())

	const (
		cpDesc = "Deployment paused at checkpoint 50% of group web (2/4 healthy)"
		mfDesc = "Deployment paused: 2 of 4 allocations of the new version failed, over max_failed 1"
	)
	cpDep := waitRollout(t, c.api(), cp.ID, 1, structs.DeploymentStatusPaused, 60*time.Second)
	mfDep := waitRollout(t, c.api(), mf.ID, 1, structs.DeploymentStatusPaused, 60*time.Second)
	checkCP := func(d *structs.Deployment) error {
		if d.Status != structs.DeploymentStatusPaused || d.StatusDescription != cpDesc {
			return fmt.Errorf("%s: %s %q, want paused %q", cp.ID, d.Status, d.StatusDescription, cpDesc)
		}
		if st := webState(t, d); st.CheckpointsReached != 1 || st.HealthyAllocs != 2 {
			return fmt.Errorf("%s: CheckpointsReached %d, HealthyAllocs %d; want 1 and 2", cp.ID, st.CheckpointsReached, st.HealthyAllocs)
		}
		return nil
	}
	checkMF := func(d *structs.Deployment) error {
		if d.Status != structs.DeploymentStatusPaused || d.StatusDescription != mfDesc {
			return fmt.Errorf("%s: %s %q, want paused %q", mf.ID, d.Status, d.StatusDescription, mfDesc)
		}
		if st := webState(t, d); st.UnhealthyAllocs != 2 || st.FailuresAtPause != 2 {
			return fmt.Errorf("%s: UnhealthyAllocs %d, FailuresAtPause %d; want 2 and 2", mf.ID, st.UnhealthyAllocs, st.FailuresAtPause)
		}
		return nil
	}
	for _, e := range []error{checkCP(cpDep), checkMF(mfDep)} {
		if e != nil {
			t.Fatal(e)
		}
	}
	// A failed alloc is rescheduled even while its deployment is paused
	// (Nomad's rule): mf's second failure is replaced by a third start,
	// which runs. Once it runs, nothing else may start until the resume.
	eventually(t, 30*time.Second, mf.ID+": the second failure replaced", func() error {
		if n := countAllocs(allocsOf(t, c.api(), mf.ID), 1, running); n != 1 {
			return fmt.Errorf("%d allocs of version 1 running", n)
		}
		return nil
	})
	placed := map[string]int{}
	for _, s := range []rolloutSpec{cp, mf} {
		placed[s.ID] = len(allocsOf(t, c.api(), s.ID))
	}

	killed := c.killLeader()
	leader := c.waitLeader(c.up())
	t.Logf("killed %s; %s leads", killed.name, leader.name)
	// The new leader's watcher and scheduler have had time to act on
	// both deployments: they hold still, as they were.
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		for _, e := range []error{checkCP(deploymentByID(t, c.api(), cpDep.ID)), checkMF(deploymentByID(t, c.api(), mfDep.ID))} {
			if e != nil {
				t.Fatalf("after the failover: %v", e)
			}
		}
		for _, s := range []rolloutSpec{cp, mf} {
			if n := len(allocsOf(t, c.api(), s.ID)); n != placed[s.ID] {
				t.Fatalf("after the failover %s has %d allocs, had %d while paused", s.ID, n, placed[s.ID])
			}
		}
	}

	// Resumed through the new leader, each goes on from its pause: a lost
	// CheckpointsReached or FailuresAtPause would pause it again at once.
	for _, d := range []*structs.Deployment{cpDep, mfDep} {
		if _, err := c.any().cli(t, "deployment", "resume", "-detach", d.ID); err != nil {
			t.Fatalf("resume %s: %v", d.ID, err)
		}
	}
	for _, s := range []rolloutSpec{cp, mf} {
		d := waitRollout(t, c.api(), s.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)
		if n := countAllocs(allocsOf(t, c.api(), s.ID), 1, running); n != 4 {
			t.Errorf("%s: %d allocs of version 1 running, want 4", s.ID, n)
		}
		t.Logf("%s: %s", s.ID, jsonString(webState(t, d)))
	}
	if st := webState(t, deploymentByID(t, c.api(), mfDep.ID)); st.UnhealthyAllocs != 2 {
		t.Errorf("%s: UnhealthyAllocs %d at the end, want the 2 before the failover", mf.ID, st.UnhealthyAllocs)
	}
	if st := webState(t, deploymentByID(t, c.api(), cpDep.ID)); st.CheckpointsReached != 1 {
		t.Errorf("%s: CheckpointsReached %d at the end, want 1", cp.ID, st.CheckpointsReached)
	}
}
