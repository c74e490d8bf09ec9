package server

import (
	"testing"
	"time"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// startPolicyRollout runs v0 of a four-alloc job to a stable version,
// then registers a destructive v1 with the group's update block changed
// by upd, and returns v0.
func startPolicyRollout(t *testing.T, h *harness, upd func(u *structs.UpdateStrategy)) *structs.Job {
	t.Helper()
	for _, n := range []string{"a", "b"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 4000, 4096))
		must(t, err)
	}
	v0 := testJob("web", 4, 100)
	_, err := h.leader.RegisterJob(h.ctx, v0)
	must(t, err)
	h.waitFor("four v0 allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 4 })
	h.markHealthy(allocsOf(h.store().Snapshot(), "web"))
	h.waitFor("v0 stable", func(s *state.Snapshot) bool {
		j, _ := s.JobByIDAndVersion(structs.DefaultNamespace, "web", 0)
		return j != nil && j.Stable
	})
	v1 := v0.Copy()
	v1.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "2h"}
	upd(v1.TaskGroups[0].Update)
	_, err = h.leader.RegisterJob(h.ctx, v1)
	must(t, err)
	return v0
}

// waitV1 waits until n v1 allocs of the job "web" run, and the leader is
// idle.
func waitV1(h *harness, n int, what string) {
	h.t.Helper()
	h.waitFor(what, func(s *state.Snapshot) bool { return len(byVersion(allocsOf(s, "web"), 1)) == n })
	h.idle()
}

// markNewHealthy reports the v1 allocs whose health is unknown healthy.
func markNewHealthy(h *harness) {
	h.t.Helper()
	var pending []*structs.Allocation
	for _, a := range byVersion(allocsOf(h.store().Snapshot(), "web"), 1) {
		if a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil {
			pending = append(pending, a)
		}
	}
	h.markHealthy(pending)
}

// A checkpoint pauses the rollout with the leader's time in the log; its
// delay, kept in the deployment, resumes it under the next leader (the
// watcher's timer itself is tested in package deployment); an operator's
// pause during the next delay holds it until a resume, whatever the
// leader.
func TestCheckpointsOnTheLeader(t *testing.T) {
	h := newHarness(t)
	h.start()
	startPolicyRollout(t, h, func(u *structs.UpdateStrategy) {
		u.Checkpoints = []structs.Amount{{Value: 1}, {Value: 2}}
		u.CheckpointDelay = time.Hour
	})
	waitV1(h, 1, "the first v1 alloc")
	markNewHealthy(h)
	var d *structs.Deployment
	h.waitFor("a pause at the first checkpoint", func(s *state.Snapshot) bool {
		d = deploymentOf(s, "web", 1)
		return d != nil && d.Status == structs.DeploymentStatusPaused
	})
	if want := structs.CheckpointDescription("1", "web", 1, 4); d.StatusDescription != want {
		t.Fatalf("description %q, want %q", d.StatusDescription, want)
	}
	pausedAt := h.clock.Now()
	if !d.PausedAt.Equal(pausedAt) || !d.ResumeAt.Equal(pausedAt.Add(time.Hour)) || d.TaskGroups["web"].CheckpointsReached != 1 {
		t.Fatalf("pause bookkeeping: PausedAt %v ResumeAt %v reached %d", d.PausedAt, d.ResumeAt, d.TaskGroups["web"].CheckpointsReached)
	}

	// No leader until the delay is over: the next one resumes it at once.
	h.stop()
	h.clock.Advance(time.Hour)
	h.start()
	h.waitFor("the delay's resume", func(s *state.Snapshot) bool {
		d = deploymentOf(s, "web", 1)
		return d.Status == structs.DeploymentStatusRunning
	})
	if d.ModifyTime != pausedAt.Add(time.Hour).UnixNano() || !d.ResumeAt.IsZero() || !d.PausedAt.IsZero() {
		t.Fatalf("resumed at %v, ResumeAt %v PausedAt %v", time.Unix(0, d.ModifyTime), d.ResumeAt, d.PausedAt)
	}
	waitV1(h, 2, "the second v1 alloc")
	markNewHealthy(h)
	h.waitFor("a pause at the second checkpoint", func(s *state.Snapshot) bool {
		d = deploymentOf(s, "web", 1)
		return d.Status == structs.DeploymentStatusPaused && d.TaskGroups["web"].CheckpointsReached == 2
	})
	if d.ResumeAt.IsZero() {
		t.Fatal("second checkpoint without its delay")
	}

	// The operator holds it.
	_, err := h.leader.PauseDeployment(h.ctx, d.ID, true)
	must(t, err)
	d, _ = h.store().Snapshot().DeploymentByID(d.ID)
	if d.StatusDescription != structs.DeploymentStatusDescriptionPaused || !d.ResumeAt.IsZero() {
		t.Fatalf("held: %q ResumeAt %v", d.StatusDescription, d.ResumeAt)
	}
	h.stop()
	h.clock.Advance(2 * time.Hour)
	h.start()
	h.idle()
	if d, _ = h.store().Snapshot().DeploymentByID(d.ID); d.Status != structs.DeploymentStatusPaused {
		t.Fatalf("a held deployment resumed: %s %q", d.Status, d.StatusDescription)
	}
	_, err = h.leader.PauseDeployment(h.ctx, d.ID, false)
	must(t, err)
	h.waitFor("the third v1 alloc", func(s *state.Snapshot) bool { return len(byVersion(allocsOf(s, "web"), 1)) == 3 })
}

// on_failure = "revert" reverts on a failure like auto_revert, and so does
// deployment fail; the version registered is marked as a revert.
func TestOnFailureRevertOnTheLeader(t *testing.T) {
	h := newHarness(t)
	h.start()
	startPolicyRollout(t, h, func(u *structs.UpdateStrategy) { u.OnFailure = structs.OnFailureRevert })
	var d *structs.Deployment
	h.waitFor("the v1 deployment", func(s *state.Snapshot) bool { d = deploymentOf(s, "web", 1); return d != nil })
	resp, err := h.leader.FailDeployment(h.ctx, d.ID)
	must(t, err)
	if resp.RevertedJobVersion == nil || *resp.RevertedJobVersion != 0 {
		t.Fatalf("fail answer %+v", resp)
	}
	cur, _ := h.store().Snapshot().JobByID(structs.DefaultNamespace, "web")
	if cur.Version != 2 || cur.RevertOf == nil || *cur.RevertOf != 0 {
		t.Fatalf("current job v%d RevertOf %v", cur.Version, cur.RevertOf)
	}
}
