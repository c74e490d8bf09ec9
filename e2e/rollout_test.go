package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// The rollout tests run each scenario of website/rollouts.md against a real
// `drover agent -dev` with raw_exec tasks. Each test has its own agent and
// runs in parallel with the others; every wait polls the HTTP API with a
// deadline.

const fastUpdate = `      health_check      = "task_states"
      min_healthy_time  = "1s"
      healthy_deadline  = "20s"
      progress_deadline = "1m"`

func rolloutAgent(t *testing.T) *agentProc {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a dev agent and real processes")
	}
	t.Parallel()
	return startDevAgent(t)
}

// TestRolloutRollingWithinMaxParallel: a destructive change to count=6,
// max_parallel=2 never has more than two slots out of service nor more
// than two new allocs of unknown health.
func TestRolloutRollingWithinMaxParallel(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	s := rolloutSpec{ID: "roll", Count: 6, Version: "1", Update: "      max_parallel = 2\n" + fastUpdate}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)

	av := sampleAvailability(t, c, s.ID, 6, 1)
	s.Version = "2"
	s.run(t, c)
	waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 90*time.Second)
	av.stop()
	t.Logf("%d samples: at most %d slots down, %d new allocs not yet healthy", av.samples, av.worstDown, av.worstIn)
	if av.samples == 0 {
		t.Fatal("no samples")
	}
	if av.worstDown > 2 || av.worstIn > 2 {
		t.Errorf("max_parallel 2 exceeded: %d slots down, %d new not healthy at once", av.worstDown, av.worstIn)
	}
	if n := countAllocs(allocsOf(t, c, s.ID), 1, running); n != 6 {
		t.Errorf("%d allocs of version 1 running, want 6", n)
	}
}

// TestRolloutCanaryManualPromote: promotion is refused until the canary is
// healthy ("0/1 healthy"); after it the old allocs are replaced.
func TestRolloutCanaryManualPromote(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	upd := `      max_parallel      = 1
      canary            = 1
      health_check      = "task_states"
      min_healthy_time  = "4s"
      healthy_deadline  = "30s"
      progress_deadline = "2m"`
	s := rolloutSpec{ID: "canary", Count: 3, Version: "1", Update: upd}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)

	s.Version = "2"
	s.run(t, c)
	d := waitRollout(t, c, s.ID, 1, structs.DeploymentStatusRunning, 30*time.Second)
	out, err := p.cli(t, "deployment", "promote", "-detach", d.ID)
	if err == nil || !strings.Contains(out, "0/1 healthy") {
		t.Fatalf("promote before the canary is healthy: err=%v, want an error naming 0/1 healthy", err)
	}
	eventually(t, 30*time.Second, "the canary healthy and the old allocs untouched", func() error {
		d := deploymentByID(t, c, d.ID)
		if st := d.TaskGroups["web"]; st == nil || st.HealthyAllocs < 1 {
			return fmt.Errorf("deployment %s", jsonString(d))
		}
		if d.StatusDescription != structs.DeploymentStatusDescriptionRunningNeedsPromotion {
			return fmt.Errorf("description %q", d.StatusDescription)
		}
		return nil
	})
	allocs := allocsOf(t, c, s.ID)
	if old, canaries := countAllocs(allocs, 0, running), countAllocs(allocs, 1, nil); old != 3 || canaries != 1 {
		t.Fatalf("before promotion: %d old running, %d new; want 3 and 1", old, canaries)
	}
	if _, err := p.cli(t, "deployment", "promote", "-detach", d.ID); err != nil {
		t.Fatalf("promote: %v", err)
	}
	waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 90*time.Second)
	eventually(t, 30*time.Second, "only version 1 running", func() error {
		allocs := allocsOf(t, c, s.ID)
		if old, cur := countAllocs(allocs, 0, nil), countAllocs(allocs, 1, running); old != 0 || cur != 3 {
			return fmt.Errorf("%d old wanted running, %d new running", old, cur)
		}
		return nil
	})
}

// TestRolloutBlueGreenAutoPromote: canary = count places a full new set
// beside the old one, promotes it by itself and stops the old set.
func TestRolloutBlueGreenAutoPromote(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	upd := "      max_parallel = 2\n      canary = 2\n      auto_promote = true\n" + fastUpdate
	s := rolloutSpec{ID: "bluegreen", Count: 2, Version: "1", Update: upd}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)

	s.Version = "2"
	s.run(t, c)
	sawBoth := false
	eventually(t, 60*time.Second, "the blue/green deployment to succeed", func() error {
		allocs := allocsOf(t, c, s.ID)
		if countAllocs(allocs, 0, running) == 2 && countAllocs(allocs, 1, running) == 2 {
			sawBoth = true
		}
		d, err := latestDeployment(t, c, s.ID)
		if err != nil {
			return err
		}
		if d.JobVersion != 1 || d.Status != structs.DeploymentStatusSuccessful {
			return fmt.Errorf("v%d %s: %s", d.JobVersion, d.Status, d.StatusDescription)
		}
		if st := d.TaskGroups["web"]; st == nil || !st.Promoted {
			return fmt.Errorf("not promoted: %s", jsonString(d))
		}
		return nil
	})
	if !sawBoth {
		t.Error("never saw both colours running side by side")
	}
	eventually(t, 30*time.Second, "the old colour stopped", func() error {
		if n := countAllocs(allocsOf(t, c, s.ID), 0, nil); n != 0 {
			return fmt.Errorf("%d old allocs still wanted", n)
		}
		return nil
	})
}

// TestRolloutAutoRevert: a version whose task exits 1 fails its deployment,
// which registers the stable version again; that version's deployment
// succeeds.
func TestRolloutAutoRevert(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	upd := "      max_parallel = 1\n      auto_revert = true\n" + fastUpdate
	s := rolloutSpec{ID: "revert", Count: 2, Version: "1", Update: upd}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)

	bad := s
	bad.Version, bad.Script = "2", "exit 1"
	bad.run(t, c)
	d := versionDeployment(t, c, s.ID, 1, structs.DeploymentStatusFailed, 60*time.Second)
	if !strings.Contains(d.StatusDescription, " - rolling back to job version 0") {
		t.Errorf("failed deployment says %q", d.StatusDescription)
	}
	waitRollout(t, c, s.ID, 2, structs.DeploymentStatusSuccessful, 60*time.Second)
	job, _, err := c.Jobs().Info(ctx(t), s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if job.Version != 2 || job.TaskGroups[0].Tasks[0].Env["VERSION"] != "1" {
		t.Errorf("job after revert: version %d env %v, want version 2 with VERSION=1", job.Version, job.TaskGroups[0].Tasks[0].Env)
	}
	if n := countAllocs(allocsOf(t, c, s.ID), 2, running); n != 2 {
		t.Errorf("%d allocs of the reverted version running, want 2", n)
	}
}

// TestRolloutPauseResumeAndFail: a paused deployment places nothing more;
// resumed, it finishes. A later deployment failed by the operator says so.
func TestRolloutPauseResumeAndFail(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	upd := `      max_parallel      = 1
      health_check      = "task_states"
      min_healthy_time  = "2s"
      healthy_deadline  = "20s"
      progress_deadline = "1m"`
	s := rolloutSpec{ID: "pause", Count: 3, Version: "1", Update: upd}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)

	s.Version = "2"
	s.run(t, c)
	d := waitRollout(t, c, s.ID, 1, structs.DeploymentStatusRunning, 30*time.Second)
	if _, err := p.cli(t, "deployment", "pause", "-detach", d.ID); err != nil {
		t.Fatalf("pause: %v", err)
	}
	placed := countAllocs(allocsOf(t, c, s.ID), 1, nil)
	// The first new alloc turns healthy within min_healthy_time; without the
	// pause the next would follow at once. Watch for three times that.
	watchUntil := time.Now().Add(6 * time.Second)
	for time.Now().Before(watchUntil) {
		if n := countAllocs(allocsOf(t, c, s.ID), 1, nil); n != placed {
			t.Fatalf("paused deployment placed more: %d new allocs, had %d", n, placed)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := deploymentByID(t, c, d.ID); got.Status != structs.DeploymentStatusPaused {
		t.Fatalf("deployment %s: %s", got.Status, got.StatusDescription)
	}
	if _, err := p.cli(t, "deployment", "resume", "-detach", d.ID); err != nil {
		t.Fatalf("resume: %v", err)
	}
	waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)

	s.Version = "3"
	s.run(t, c)
	d = waitRollout(t, c, s.ID, 2, structs.DeploymentStatusRunning, 30*time.Second)
	if _, err := p.cli(t, "deployment", "fail", "-detach", d.ID); err != nil {
		t.Fatalf("fail: %v", err)
	}
	d = waitRollout(t, c, s.ID, 2, structs.DeploymentStatusFailed, 30*time.Second)
	if d.StatusDescription != structs.DeploymentStatusDescriptionFailedByUser {
		t.Errorf("failed by the operator: %q", d.StatusDescription)
	}
	if _, err := p.cli(t, "deployment", "resume", "-detach", d.ID); err == nil {
		t.Error("resuming a failed deployment was accepted")
	}
}

// TestRolloutDeadlines: a task that never passes its check is unhealthy at
// healthy_deadline (progress_deadline 0 fails the deployment on it), and
// with a progress_deadline the deployment fails when it passes.
func TestRolloutDeadlines(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	// The check probes a port nothing listens on.
	unready := `    network {
      port "http" {}
    }
    service {
      name     = "never"
      port     = "http"
      provider = "nomad"
      check {
        type     = "tcp"
        interval = "500ms"
        timeout  = "200ms"
      }
    }`
	hd := rolloutSpec{ID: "healthydl", Count: 1, Version: "1", Group: unready, Update: `      max_parallel      = 1
      min_healthy_time  = "500ms"
      healthy_deadline  = "2s"
      progress_deadline = "0s"`}
	pd := rolloutSpec{ID: "progressdl", Count: 1, Version: "1", Group: unready, Update: `      max_parallel      = 1
      min_healthy_time  = "500ms"
      healthy_deadline  = "3s"
      progress_deadline = "4s"`,
		// Attempts left: the unhealthy alloc waits to be rescheduled while
		// the progress deadline runs.
		Reschedule: "      unlimited = true\n      delay = \"1m\"\n      delay_function = \"constant\""}
	for _, s := range []rolloutSpec{hd, pd} {
		stopJobProcs(t, c, s.ID)
		s.run(t, c)
	}
	d := waitRollout(t, c, hd.ID, 0, structs.DeploymentStatusFailed, 30*time.Second)
	if !strings.HasPrefix(d.StatusDescription, structs.DeploymentStatusDescriptionFailedAllocations) {
		t.Errorf("healthy_deadline: %q", d.StatusDescription)
	}
	allocs := allocsOf(t, c, hd.ID)
	if len(allocs) == 0 || allocs[0].DeploymentStatus == nil || allocs[0].DeploymentStatus.Healthy == nil || *allocs[0].DeploymentStatus.Healthy {
		t.Errorf("the alloc past healthy_deadline is not marked unhealthy: %s", jsonString(allocs))
	}
	d = waitRollout(t, c, pd.ID, 0, structs.DeploymentStatusFailed, 30*time.Second)
	if d.StatusDescription != structs.DeploymentStatusDescriptionProgressDeadline {
		t.Errorf("progress_deadline: %q", d.StatusDescription)
	}
}

// TestRolloutHTTPCheckGatesHealth: with health_check = "checks", an alloc
// is healthy once its http check passes (python3 -m http.server), and the
// deployment succeeds.
func TestRolloutHTTPCheckGatesHealth(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	group := `    network {
      port "http" {}
    }
    service {
      name     = "web"
      port     = "http"
      provider = "nomad"
      check {
        type     = "http"
        path     = "/"
        interval = "500ms"
        timeout  = "1s"
      }
    }`
	s := rolloutSpec{ID: "httpcheck", Count: 2, Version: "1", Group: group,
		Script: `exec python3 -m http.server "$NOMAD_PORT_http" --bind 127.0.0.1`,
		Update: `      max_parallel      = 1
      health_check      = "checks"
      min_healthy_time  = "1s"
      healthy_deadline  = "30s"
      progress_deadline = "1m"`}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	s.Version = "2"
	s.run(t, c)
	waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 60*time.Second)
	if n := countAllocs(allocsOf(t, c, s.ID), 1, healthy); n != 2 {
		t.Errorf("%d healthy allocs of version 1, want 2", n)
	}
}

// TestRolloutNewerVersionSupersedes: a new version registered during a
// deployment cancels it, and the new one runs to success.
func TestRolloutNewerVersionSupersedes(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	slow := `      max_parallel      = 1
      health_check      = "task_states"
      min_healthy_time  = "20s"
      healthy_deadline  = "40s"
      progress_deadline = "2m"`
	s := rolloutSpec{ID: "supersede", Count: 2, Version: "1", Update: "      max_parallel = 2\n" + fastUpdate}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	s.Version, s.Update = "2", slow
	s.run(t, c)
	d1 := waitRollout(t, c, s.ID, 1, structs.DeploymentStatusRunning, 30*time.Second)
	s.Version, s.Update = "3", "      max_parallel = 2\n"+fastUpdate
	s.run(t, c)
	waitRollout(t, c, s.ID, 2, structs.DeploymentStatusSuccessful, 60*time.Second)
	d1 = deploymentByID(t, c, d1.ID)
	if d1.Status != structs.DeploymentStatusCancelled || d1.StatusDescription != structs.DeploymentStatusDescriptionNewerJob {
		t.Errorf("superseded deployment: %s %q", d1.Status, d1.StatusDescription)
	}
}

// TestRolloutStaggerSpacesBatches: with stagger = 2s and max_parallel = 1,
// each replacement is placed no sooner than 2s after the previous one
// became healthy.
func TestRolloutStaggerSpacesBatches(t *testing.T) {
	p := rolloutAgent(t)
	c := p.client()
	const stagger = 2 * time.Second
	upd := "      max_parallel = 1\n      stagger = \"2s\"\n" + fastUpdate
	s := rolloutSpec{ID: "stagger", Count: 3, Version: "1", Update: upd}
	stopJobProcs(t, c, s.ID)
	s.run(t, c)
	waitRollout(t, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
	s.Version = "2"
	s.run(t, c)
	waitRollout(t, c, s.ID, 1, structs.DeploymentStatusSuccessful, 90*time.Second)

	type placed struct{ created, healthy time.Time }
	var news []placed
	for _, a := range allocsOf(t, c, s.ID) {
		if a.JobVersion != 1 || !healthy(a) {
			continue
		}
		news = append(news, placed{time.Unix(0, a.CreateTime), a.DeploymentStatus.Timestamp})
	}
	if len(news) != 3 {
		t.Fatalf("%d healthy new allocs, want 3", len(news))
	}
	sort.Slice(news, func(i, j int) bool { return news[i].created.Before(news[j].created) })
	for i := 1; i < len(news); i++ {
		gap := news[i].created.Sub(news[i-1].healthy)
		t.Logf("batch %d placed %s after batch %d became healthy", i, gap, i-1)
		if gap < stagger {
			t.Errorf("batch %d placed %s after the previous batch became healthy, stagger is %s", i, gap, stagger)
		}
	}
}
