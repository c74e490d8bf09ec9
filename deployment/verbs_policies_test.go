package deployment

import (
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// pausedAtCheckpoint is a deployment paused at a checkpoint of group web
// at t0 with a delay until t0+5m, after a failure pause had counted 2.
func pausedAtCheckpoint() *structs.Deployment {
	return &structs.Deployment{
		ID: "d1", JobID: "web", JobVersion: 2, Status: structs.DeploymentStatusPaused,
		StatusDescription: structs.CheckpointDescription("10%", "web", 1, 10),
		PausedAt:          t0, ResumeAt: t0.Add(5 * time.Minute),
		TaskGroups: map[string]*structs.DeploymentState{"web": {
			DesiredTotal: 10, ProgressDeadline: 10 * time.Minute, UnhealthyAllocs: 2,
			FailuresAtPause: 2, CheckpointsReached: 1, OnFailure: structs.OnFailurePause,
		}},
	}
}

func TestPauseHoldsACheckpointDelay(t *testing.T) {
	d := pausedAtCheckpoint()
	now := t0.Add(2 * time.Minute)
	held, err := Pause(d, true, now)
	if err != nil {
		t.Fatal(err)
	}
	if held.Status != structs.DeploymentStatusPaused || held.StatusDescription != structs.DeploymentStatusDescriptionPaused {
		t.Errorf("held: %s %q", held.Status, held.StatusDescription)
	}
	if !held.ResumeAt.IsZero() {
		t.Errorf("ResumeAt = %v, want cleared (held)", held.ResumeAt)
	}
	if !held.PausedAt.Equal(t0) {
		t.Errorf("PausedAt = %v, want the pause's start kept", held.PausedAt)
	}
	if d.ResumeAt.IsZero() {
		t.Error("Pause modified its input")
	}
	// Held, the delay's end no longer resumes it.
	obs := Observation{Deployment: held, Job: &structs.Job{ID: "web", Version: 2}, Now: t0.Add(time.Hour)}
	obs.LatestJob = obs.Job
	dec := Decide(obs)
	if got, want := dec.WaitReasons["web"], "deployment paused by an operator: resume to continue"; got != want {
		t.Errorf("wait reason %q, want %q", got, want)
	}
	dec.WaitReasons = nil
	if dec.Changed() || !dec.WakeAt.IsZero() {
		t.Errorf("held deployment decided %s", dec)
	}
}

func TestPauseRunningRecordsPausedAt(t *testing.T) {
	d := &structs.Deployment{ID: "d1", Status: structs.DeploymentStatusRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1}}}
	now := t0.Add(time.Minute)
	p, err := Pause(d, true, now)
	if err != nil {
		t.Fatal(err)
	}
	if !p.PausedAt.Equal(now) || !p.ResumeAt.IsZero() {
		t.Errorf("PausedAt %v ResumeAt %v", p.PausedAt, p.ResumeAt)
	}
}

func TestResumeKeepsTheBookkeeping(t *testing.T) {
	d := pausedAtCheckpoint()
	now := t0.Add(2 * time.Minute)
	r, err := Pause(d, false, now)
	if err != nil {
		t.Fatal(err)
	}
	g := r.TaskGroups["web"]
	if r.Status != structs.DeploymentStatusRunning || r.StatusDescription != structs.DeploymentStatusDescriptionRunning {
		t.Errorf("resumed: %s %q", r.Status, r.StatusDescription)
	}
	if !r.PausedAt.IsZero() || !r.ResumeAt.IsZero() {
		t.Errorf("pause times kept: %v %v", r.PausedAt, r.ResumeAt)
	}
	if g.FailuresAtPause != 2 || g.CheckpointsReached != 1 {
		t.Errorf("failures at pause %d, checkpoints reached %d: want 2 and 1 kept", g.FailuresAtPause, g.CheckpointsReached)
	}
	if !g.RequireProgressBy.Equal(now.Add(10 * time.Minute)) {
		t.Errorf("deadline not restarted: %v", g.RequireProgressBy)
	}
	// A revert deployment resumes with its own description.
	v := uint64(1)
	d.RevertOf = &v
	if r, _ = Pause(d, false, now); r.StatusDescription != structs.RollbackDescription(1) {
		t.Errorf("revert resumed with %q", r.StatusDescription)
	}
}

func TestFailEndsAPause(t *testing.T) {
	d := pausedAtCheckpoint()
	job := &structs.Job{ID: "web", Version: 2, Meta: map[string]string{"v": "2"}}
	stable := &structs.Job{ID: "web", Version: 1, Stable: true, Meta: map[string]string{"v": "1"}}
	got, revert, err := Fail(d, job, stable, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != structs.DeploymentStatusFailed || got.StatusDescription != structs.DeploymentStatusDescriptionFailedByUser || revert != nil {
		t.Errorf("on_failure pause: %s %q revert %v", got.Status, got.StatusDescription, revert)
	}
	if !got.PausedAt.IsZero() || !got.ResumeAt.IsZero() {
		t.Error("a failed deployment kept its pause times")
	}

	// on_failure = "revert" reverts like auto_revert, the job marked.
	d.TaskGroups["web"].OnFailure = structs.OnFailureRevert
	got, revert, err = Fail(d, job, stable, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if revert == nil || revert.Version != 1 || revert.RevertOf == nil || *revert.RevertOf != 1 {
		t.Fatalf("revert = %+v", revert)
	}
	if want := structs.DeploymentStatusDescriptionRollback(structs.DeploymentStatusDescriptionFailedByUser, 1); got.StatusDescription != want {
		t.Errorf("description %q, want %q", got.StatusDescription, want)
	}
	if stable.RevertOf != nil {
		t.Error("Fail marked the stored stable job")
	}

	// A deployment stored before OnFailure: the job's on_failure counts.
	d.TaskGroups["web"].OnFailure = ""
	job.TaskGroups = []*structs.TaskGroup{{Name: "web", Update: &structs.UpdateStrategy{OnFailure: structs.OnFailureRevert}}}
	if _, revert, _ = Fail(d, job, stable, t0); revert == nil {
		t.Error("job's on_failure revert ignored")
	}
}

func TestRevertMarksTheJob(t *testing.T) {
	job := &structs.Job{ID: "web", Version: 3, Meta: map[string]string{"v": "3"},
		TaskGroups: []*structs.TaskGroup{{Name: "web", Count: 2}}}
	stable := &structs.Job{ID: "web", Version: 1, Stable: true, Meta: map[string]string{"v": "1"}}
	d := &structs.Deployment{ID: "d1", JobID: "web", JobVersion: 3, Status: structs.DeploymentStatusRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 2, OnFailure: structs.OnFailureRevert,
			ProgressDeadline: time.Minute, RequireProgressBy: t0}}}
	dec := Decide(Observation{Deployment: d, Job: job, LatestJob: job, StableJob: stable, Now: t0})
	if dec.RevertTo == nil || dec.RevertTo.RevertOf == nil || *dec.RevertTo.RevertOf != 1 {
		t.Fatalf("decision's revert not marked: %+v", dec.RevertTo)
	}
	if stable.RevertOf != nil {
		t.Error("Decide marked its input")
	}
}
