package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// The rollout policy tests run each rollout policy of website/rollouts.md
// (surge, first batch, checkpoints, failure thresholds, unhealthy first,
// reverts) against a real `drover agent -dev` with raw_exec tasks, and
// look at the rollout as a user would: through the HTTP API and the CLI.
// Counts are small and min_healthy_time is 1s, so that each test takes a
// few seconds.

// TestRolloutPolicySurgeKeepsCapacity: max_surge = max_parallel = 2 on
// count = 4 places each batch beside the allocs it replaces. Sampled
// throughout, the allocs serving (old running, new healthy) never drop
// below count, and the allocs wanted running never exceed count + 2.
func TestRolloutPolicySurgeKeepsCapacity(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	const count, surge = 4, 2
	s := rolloutSpec{ID: "surge", Count: count, Version: "1", Update: policyUpdate("max_parallel = 2", "max_surge = 2")}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)

	minServing, maxWanted := count, 0
	w := watchAllocs(t, c, s.ID, func(allocs []*structs.AllocationListStub) {
		serving, wanted := 0, 0
		for _, a := range allocs {
			if a.DesiredStatus != structs.AllocDesiredStatusRun {
				continue
			}
			wanted++
			if a.JobVersion == 0 && running(a) || a.JobVersion == 1 && healthy(a) {
				serving++
			}
		}
		minServing, maxWanted = min(minServing, serving), max(maxWanted, wanted)
	})
	s.Version = "2"
	s.run(t, c)
	waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)
	n := w.stop(t)
	t.Logf("%d samples: at least %d allocs serving, at most %d wanted running", n, minServing, maxWanted)
	if minServing < count {
		t.Errorf("serving capacity fell to %d, below count %d", minServing, count)
	}
	if maxWanted > count+surge {
		t.Errorf("%d allocs wanted running at once, more than count + max_surge = %d", maxWanted, count+surge)
	}
	if maxWanted <= count {
		t.Errorf("never more than %d allocs wanted running: nothing was placed by surge", maxWanted)
	}
	eventually(t, 20*time.Second, "only the new version wanted", func() error {
		allocs := allocsOf(t, c, s.ID)
		if old, cur := countAllocs(allocs, 0, nil), countAllocs(allocs, 1, running); old != 0 || cur != count {
			return fmt.Errorf("%d old wanted, %d new running", old, cur)
		}
		return nil
	})
}

// TestRolloutPolicyFirstBatch: with first_batch = 1 and max_parallel = 3
// on count = 4, exactly one new alloc exists until it is healthy; then
// the three others are replaced together.
func TestRolloutPolicyFirstBatch(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	s := rolloutSpec{ID: "firstbatch", Count: 4, Version: "1", Update: policyUpdate("max_parallel = 3", "first_batch = 1")}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)

	// before: most new allocs while none is healthy; after: most new allocs
	// not yet healthy once one is.
	before, after := 0, 0
	w := watchAllocs(t, c, s.ID, func(allocs []*structs.AllocationListStub) {
		placed, good := 0, 0
		for _, a := range allocs {
			if a.JobVersion != 1 {
				continue
			}
			placed++
			if healthy(a) {
				good++
			}
		}
		if good == 0 {
			before = max(before, placed)
		} else {
			after = max(after, placed-good)
		}
	})
	s.Version = "2"
	s.run(t, c)
	waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)
	n := w.stop(t)
	t.Logf("%d samples: %d new allocs before the first was healthy, then at most %d in flight", n, before, after)
	if before != 1 {
		t.Errorf("%d new allocs existed before the first was healthy, want exactly 1", before)
	}
	if after != 3 {
		t.Errorf("after the first batch, at most %d new allocs in flight at once, want the 3 others together (max_parallel 3)", after)
	}
	if n := countAllocs(allocsOf(t, c, s.ID), 1, running); n != 4 {
		t.Errorf("%d allocs of version 1 running, want 4", n)
	}
}

// TestRolloutPolicyCheckpoints: checkpoints = ["50%"] on count = 4 with
// max_parallel = 3 cuts the first batch to 2 and pauses the deployment
// with exactly 2 new allocs healthy; `drover deployment resume` finishes
// it. With checkpoint_delay = "2s" the same pause ends by itself after
// 2s.
func TestRolloutPolicyCheckpoints(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	const delay = 2 * time.Second
	manual := rolloutSpec{ID: "checkpoint", Count: 4, Version: "1",
		Update: policyUpdate("max_parallel = 3", `checkpoints = ["50%"]`)}
	delayed := rolloutSpec{ID: "cpdelay", Count: 4, Version: "1",
		Update: policyUpdate("max_parallel = 3", `checkpoints = ["50%"]`, `checkpoint_delay = "2s"`)}
	for _, s := range []rolloutSpec{manual, delayed} {
		stopJobProcs(t, c, s.ID)
		s.run(t, c)
	}
	for _, s := range []rolloutSpec{manual, delayed} {
		waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	}

	// Until the manual one is resumed, no more than the checkpoint's 2 new
	// allocs exist.
	mostNew := 0
	w := watchAllocs(t, c, manual.ID, func(allocs []*structs.AllocationListStub) {
		mostNew = max(mostNew, countAllocs(allocs, 1, nil))
	})
	for _, s := range []rolloutSpec{manual, delayed} {
		s.Version = "2"
		s.run(t, c)
	}
	const desc = "Deployment paused at checkpoint 50% of group web (2/4 healthy)"
	var dm, dd *structs.Deployment
	// The delayed one first: its pause lasts only 2s.
	for _, s := range []rolloutSpec{delayed, manual} {
		d := waitRollout(t, c, s.ID, 1, structs.DeploymentStatusPaused, 30*time.Second)
		if d.StatusDescription != desc {
			t.Errorf("%s: paused with %q, want %q", s.ID, d.StatusDescription, desc)
		}
		st := webState(t, d)
		if st.CheckpointsReached != 1 || st.HealthyAllocs != 2 {
			t.Errorf("%s at the checkpoint: CheckpointsReached %d, HealthyAllocs %d; want 1 and 2", s.ID, st.CheckpointsReached, st.HealthyAllocs)
		}
		if d.PausedAt.IsZero() {
			t.Errorf("%s: paused deployment has no PausedAt", s.ID)
		}
		if s.ID == manual.ID {
			dm = d
		} else {
			dd = d
		}
	}
	if !dm.ResumeAt.IsZero() {
		t.Errorf("without checkpoint_delay the pause resumes at %s", dm.ResumeAt)
	}
	if got := dd.ResumeAt.Sub(dd.PausedAt); got < delay-time.Second || got > delay+time.Second {
		t.Errorf("checkpoint_delay 2s: paused at %s, resumes at %s (%s later)", dd.PausedAt, dd.ResumeAt, got)
	}

	// The delayed one goes on by itself, placing nothing before ResumeAt.
	waitRollout(t, c, delayed.ID, 1, structs.DeploymentStatusSuccessful, 30*time.Second)
	var late []time.Time
	for _, a := range allocsOf(t, c, delayed.ID) {
		if a.JobVersion == 1 {
			late = append(late, time.Unix(0, a.CreateTime))
		}
	}
	sort.Slice(late, func(i, j int) bool { return late[i].Before(late[j]) })
	if len(late) != 4 {
		t.Fatalf("%s: %d allocs of version 1, want 4", delayed.ID, len(late))
	}
	for _, at := range late[2:] {
		if at.Before(dd.ResumeAt) {
			t.Errorf("%s: an alloc past the checkpoint was created at %s, before the delay ended at %s", delayed.ID, at, dd.ResumeAt)
		}
	}

	// The manual one holds until resumed.
	holdStill(t, c, manual.ID, 1, dm.ID, 1500*time.Millisecond)
	n := w.stop(t)
	t.Logf("%s: %d samples, at most %d new allocs before the resume", manual.ID, n, mostNew)
	if mostNew != 2 {
		t.Errorf("%s: %d new allocs before the resume, want the checkpoint's 2", manual.ID, mostNew)
	}
	if _, err := p.cli(t, "deployment", "resume", "-detach", dm.ID); err != nil {
		t.Fatalf("resume: %v", err)
	}
	waitRollout(t, c, manual.ID, 1, structs.DeploymentStatusSuccessful, 30*time.Second)
	if n := countAllocs(allocsOf(t, c, manual.ID), 1, running); n != 4 {
		t.Errorf("%s: %d allocs of version 1 running, want 4", manual.ID, n)
	}
	if got := webState(t, deploymentByID(t, c, dm.ID)).CheckpointsReached; got != 1 {
		t.Errorf("%s: CheckpointsReached %d after the rollout, want 1", manual.ID, got)
	}
}

// TestRolloutPolicyMaxFailedPauses: max_failed = 2 with on_failure =
// "pause" and a new version whose first three starts fail: the deployment
// pauses on the third failure, saying so. One such deployment is ended
// with `drover deployment fail`; another is resumed, keeps its count, and
// pauses again on the next failure (the fifth start; the fourth, which
// replaces the third failure while paused, runs).
func TestRolloutPolicyMaxFailedPauses(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	upd := policyUpdate("max_parallel = 1", "max_failed = 2", `on_failure = "pause"`)
	ended := rolloutSpec{ID: "maxfail-end", Count: 4, Version: "1", Update: upd, Reschedule: rescheduleEvery}
	resumed := rolloutSpec{ID: "maxfail-resume", Count: 4, Version: "1", Update: upd, Reschedule: rescheduleEvery}
	for _, s := range []rolloutSpec{ended, resumed} {
		stopJobProcs(t, c, s.ID)
		s.run(t, c)
	}
	for _, s := range []rolloutSpec{ended, resumed} {
		waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
		s.Version, s.Script = "2", failingStarts(t.TempDir(), 1, 2, 3, 5)
		s.run(t, c)
	}
	const desc = "Deployment paused: 3 of 4 allocations of the new version failed, over max_failed 2"
	deps := map[string]*structs.Deployment{}
	for _, s := range []rolloutSpec{ended, resumed} {
		d := waitRollout(t, c, s.ID, 1, structs.DeploymentStatusPaused, 60*time.Second)
		if d.StatusDescription != desc {
			t.Errorf("%s: paused with %q, want %q", s.ID, d.StatusDescription, desc)
		}
		if st := webState(t, d); st.UnhealthyAllocs != 3 || st.FailuresAtPause != 3 {
			t.Errorf("%s at the pause: UnhealthyAllocs %d, FailuresAtPause %d; want 3 and 3", s.ID, st.UnhealthyAllocs, st.FailuresAtPause)
		}
		deps[s.ID] = d
	}

	// Failed by the operator, it stays failed; nothing is reverted.
	if _, err := p.cli(t, "deployment", "fail", "-detach", deps[ended.ID].ID); err != nil {
		t.Fatalf("fail: %v", err)
	}
	d := waitDeploymentByID(t, c, deps[ended.ID].ID, "the ended deployment failed", 20*time.Second, func(d *structs.Deployment) error {
		if d.Status != structs.DeploymentStatusFailed {
			return fmt.Errorf("not failed")
		}
		return nil
	})
	if d.StatusDescription != structs.DeploymentStatusDescriptionFailedByUser {
		t.Errorf("failed by the operator: %q", d.StatusDescription)
	}
	if job, _, err := c.Jobs().Info(ctx(t), ended.ID, nil); err != nil || job.Version != 1 {
		t.Errorf("%s after the operator failed it: version %v (%v), want 1 (no revert)", ended.ID, job, err)
	}

	// The third failure is replaced even while paused (Nomad reschedules
	// in a paused deployment); that fourth start runs, and nothing more
	// starts until the resume.
	eventually(t, 20*time.Second, "the third failure replaced", func() error {
		if n := countAllocs(allocsOf(t, c, resumed.ID), 1, healthy); n != 1 {
			return fmt.Errorf("%d healthy allocs of version 1", n)
		}
		return nil
	})
	holdStill(t, c, resumed.ID, 1, deps[resumed.ID].ID, time.Second)
	if st := webState(t, deploymentByID(t, c, deps[resumed.ID].ID)); st.UnhealthyAllocs != 3 || st.FailuresAtPause != 3 {
		t.Fatalf("before the resume: UnhealthyAllocs %d, FailuresAtPause %d; want 3 and 3", st.UnhealthyAllocs, st.FailuresAtPause)
	}

	// Resumed, it goes on with its count: the next batch's failure (the
	// fourth) pauses it again.
	if _, err := p.cli(t, "deployment", "resume", "-detach", deps[resumed.ID].ID); err != nil {
		t.Fatalf("resume: %v", err)
	}
	// Every 20ms until it pauses again: a pause on the three failures it
	// was resumed past would mean the count was not kept.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		d = deploymentByID(t, c, deps[resumed.ID].ID)
		st := webState(t, d)
		if d.Status == structs.DeploymentStatusPaused && st.FailuresAtPause <= 3 {
			t.Fatalf("paused again on the failures it was resumed past: %q, FailuresAtPause %d", d.StatusDescription, st.FailuresAtPause)
		}
		if d.Status != structs.DeploymentStatusRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running 30s after the resume: %q", d.StatusDescription)
		}
	}
	const again = "Deployment paused: 4 of 4 allocations of the new version failed, over max_failed 2"
	if d.StatusDescription != again {
		t.Errorf("paused again with %q, want %q", d.StatusDescription, again)
	}
	if st := webState(t, d); st.UnhealthyAllocs != 4 || st.FailuresAtPause != 4 {
		t.Errorf("paused again with UnhealthyAllocs %d, FailuresAtPause %d; want 4 and 4", st.UnhealthyAllocs, st.FailuresAtPause)
	}
}

// TestRolloutPolicyFailuresUnderMaxFailed: with max_failed = 2 (and the
// default on_failure, fail), a new alloc that fails once does not stop the
// rollout: with progress_deadline = 0, where part A would fail the
// deployment on it, the next batch starts while the failed alloc waits to
// be rescheduled, the failed alloc is replaced, and the deployment
// succeeds.
func TestRolloutPolicyFailuresUnderMaxFailed(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	s := rolloutSpec{ID: "underfail", Count: 4, Version: "1",
		Update: `      max_parallel      = 2
      max_failed        = 2
      health_check      = "task_states"
      min_healthy_time  = "1s"
      healthy_deadline  = "20s"
      progress_deadline = "0s"`,
		// The failed alloc waits 3s to be rescheduled: longer than its
		// batch-mate takes to turn healthy.
		Reschedule: `      attempts       = 1
      interval       = "1m"
      delay          = "3s"
      delay_function = "constant"`}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)

	// The first start of the new version fails; every later one runs.
	s.Version, s.Script = "2", failingStarts(t.TempDir(), 1)
	s.run(t, c)
	d := waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)
	if st := webState(t, d); st.UnhealthyAllocs != 1 || st.HealthyAllocs < 4 {
		t.Errorf("deployment: %d unhealthy, %d healthy; want 1 and at least 4", st.UnhealthyAllocs, st.HealthyAllocs)
	}
	allocs := allocsOf(t, c, s.ID)
	var failed, replacement *structs.AllocationListStub
	for _, a := range allocs {
		if a.JobVersion == 1 && a.ClientStatus == structs.AllocClientStatusFailed {
			if failed != nil {
				t.Fatalf("more than one failed alloc of version 1: %s", jsonString(allocs))
			}
			failed = a
		}
	}
	if failed == nil {
		t.Fatalf("no failed alloc of version 1: %s", jsonString(allocs))
	}
	for _, a := range allocs {
		if a.RescheduleTracker != nil && len(a.RescheduleTracker.Events) > 0 && a.RescheduleTracker.Events[0].PrevAllocID == failed.ID {
			replacement = a
		}
	}
	if replacement == nil {
		t.Fatalf("failed alloc %s was not rescheduled: %s", failed.Name, jsonString(allocs))
	}
	// A batch placed after the failed alloc's and before its replacement:
	// the rollout went on past the failure.
	between := 0
	for _, a := range allocs {
		if a.JobVersion == 1 && a.CreateIndex > failed.CreateIndex && a.CreateIndex < replacement.CreateIndex {
			between++
		}
	}
	if between == 0 {
		t.Errorf("no alloc placed between the failed alloc and its replacement: the failure stopped the rollout: %s", jsonString(allocs))
	}
	if n := countAllocs(allocs, 1, running); n != 4 {
		t.Errorf("%d allocs of version 1 running, want 4", n)
	}
	if job, _, err := c.Jobs().Info(ctx(t), s.ID, nil); err != nil || job.Version != 1 || !job.Stable {
		t.Errorf("job after the rollout: %+v (%v), want version 1 stable", job, err)
	}
}

// TestRolloutPolicyMaxUnhealthyRefusesBatch: with two of four old allocs
// failed and max_unhealthy = "25%" (1), a new version starts no batch
// and its deployment pauses (on_failure = "pause"), naming the figures.
func TestRolloutPolicyMaxUnhealthyRefusesBatch(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	s := rolloutSpec{ID: "maxunhealthy", Count: 4, Version: "1",
		Update: policyUpdate("max_parallel = 1", `max_unhealthy = "25%"`, `on_failure = "pause"`)}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	killOld(t, c, s.ID, 1, 2)

	s.Version = "2"
	s.run(t, c)
	d := waitRollout(t, c, s.ID, 1, structs.DeploymentStatusPaused, 30*time.Second)
	const desc = "Deployment paused: 2 of 4 allocations of group web are not serving, over max_unhealthy 1"
	if d.StatusDescription != desc {
		t.Errorf("paused with %q, want %q", d.StatusDescription, desc)
	}
	holdStill(t, c, s.ID, 1, d.ID, 2*time.Second)
	if n := countAllocs(allocsOf(t, c, s.ID), 1, nil); n != 0 {
		t.Errorf("%d allocs of the new version placed, want none", n)
	}
}

// TestRolloutPolicyUnhealthyFirst: with unhealthy_first and two broken
// old allocs (web[1] and web[3]), the first batch replaces exactly those
// two, beyond max_parallel = 1; the rest follow.
func TestRolloutPolicyUnhealthyFirst(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	s := rolloutSpec{ID: "unhealthyfirst", Count: 4, Version: "1",
		Update: policyUpdate("max_parallel = 1", "unhealthy_first = true")}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	killed := killOld(t, c, s.ID, 1, 3)

	s.Version = "2"
	s.run(t, c)
	waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)
	var news []*structs.AllocationListStub
	for _, a := range allocsOf(t, c, s.ID) {
		if a.JobVersion == 1 {
			news = append(news, a)
		}
	}
	if len(news) != 4 {
		t.Fatalf("%d allocs of version 1, want 4: %s", len(news), jsonString(news))
	}
	sort.Slice(news, func(i, j int) bool { return news[i].CreateIndex < news[j].CreateIndex })
	var first []string
	for _, a := range news {
		if a.CreateIndex != news[0].CreateIndex {
			continue
		}
		first = append(first, a.Name)
		full, _, err := c.Allocations().Info(ctx(t), a.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := killed[a.Name]; full.PreviousAllocation != want {
			t.Errorf("%s of the first batch replaces %q, want the broken %q", a.Name, full.PreviousAllocation, want)
		}
	}
	sort.Strings(first)
	if want := []string{s.ID + ".web[1]", s.ID + ".web[3]"}; strings.Join(first, ",") != strings.Join(want, ",") {
		t.Errorf("the first batch placed %v, want %v", first, want)
	}
}

// TestRolloutPolicyRevertSkipsCanaries: a revert's deployment restores a
// stable version without its canaries. auto_revert: a version that fails
// after its canary was promoted is reverted, and the revert replaces the
// new allocs at once, no canary first. `drover job revert` to a version
// whose update block asks for a manual canary rolls it out without one.
func TestRolloutPolicyRevertSkipsCanaries(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	auto := rolloutSpec{ID: "autorevert", Count: 3, Version: "1",
		Update: policyUpdate("max_parallel = 1", "canary = 1", "auto_promote = true", "auto_revert = true")}
	byHand := rolloutSpec{ID: "jobrevert", Count: 2, Version: "1",
		Update: policyUpdate("max_parallel = 1", "canary = 1")}
	for _, s := range []rolloutSpec{auto, byHand} {
		stopJobProcs(t, c, s.ID)
		s.run(t, c)
	}
	for _, s := range []rolloutSpec{auto, byHand} {
		waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	}

	// auto: the canary and the next alloc run; the third start fails.
	bad := auto
	bad.Version, bad.Script = "2", failingStarts(t.TempDir(), 3, 4, 5, 6, 7, 8)
	bad.run(t, c)
	// byHand: version 1 drops the canary and rolls out.
	good := byHand
	good.Version, good.Update = "2", policyUpdate("max_parallel = 1")
	good.run(t, c)

	failed := versionDeployment(t, c, auto.ID, 1, structs.DeploymentStatusFailed, 60*time.Second)
	if want := structs.DeploymentStatusDescriptionFailedAllocations + " - rolling back to job version 0"; failed.StatusDescription != want {
		t.Errorf("%s: failed with %q, want %q", auto.ID, failed.StatusDescription, want)
	}
	if st := webState(t, failed); !st.Promoted || st.HealthyAllocs < 2 {
		t.Errorf("%s: the failed version did not get past its canary: %s", auto.ID, jsonString(st))
	}
	checkRevertRollout(t, c, auto.ID)

	waitRollout(t, c, byHand.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)
	if out, err := p.cli(t, "job", "revert", "-detach", byHand.ID, "0"); err != nil {
		t.Fatalf("job revert: %v\n%s", err, out)
	}
	checkRevertRollout(t, c, byHand.ID)
}

// checkRevertRollout follows the deployment of a job's version 2, a
// revert to version 0: while running it says it skips canaries and
// checkpoints, it places no canary, and it succeeds.
func checkRevertRollout(t *testing.T, c *apiclient.Client, id string) {
	t.Helper()
	const desc = "Rollback to version 0: canaries and checkpoints skipped"
	var live *structs.Deployment
	eventually(t, 30*time.Second, id+": the revert's deployment running", func() error {
		d, err := latestDeployment(t, c, id)
		if err != nil {
			return err
		}
		if d.JobVersion != 2 || d.Status != structs.DeploymentStatusRunning {
			return fmt.Errorf("v%d %s %q", d.JobVersion, d.Status, d.StatusDescription)
		}
		live = d
		return nil
	})
	if live.StatusDescription != desc {
		t.Errorf("%s: the revert's deployment says %q, want %q", id, live.StatusDescription, desc)
	}
	if live.RevertOf == nil || *live.RevertOf != 0 {
		t.Errorf("%s: the revert's deployment has RevertOf %v, want 0", id, live.RevertOf)
	}
	d := waitRollout(t, c, id, 2, structs.DeploymentStatusSuccessful, 60*time.Second)
	if st := webState(t, d); st.DesiredCanaries != 0 || len(st.PlacedCanaries) != 0 {
		t.Errorf("%s: the revert placed canaries: %s", id, jsonString(st))
	}
	for _, a := range allocsOf(t, c, id) {
		if a.JobVersion == 2 && a.DeploymentStatus != nil && a.DeploymentStatus.Canary {
			t.Errorf("%s: %s of the revert is a canary", id, a.Name)
		}
	}
	job, _, err := c.Jobs().Info(ctx(t), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if job.Version != 2 || job.RevertOf == nil || *job.RevertOf != 0 || job.TaskGroups[0].Tasks[0].Env["VERSION"] != "1" {
		t.Errorf("%s after the revert: version %d, RevertOf %v, env %v", id, job.Version, job.RevertOf, job.TaskGroups[0].Tasks[0].Env)
	}
	if n := countAllocs(allocsOf(t, c, id), 2, running); n != job.TaskGroups[0].Count {
		t.Errorf("%s: %d allocs of the revert running, want %d", id, n, job.TaskGroups[0].Count)
	}
}
