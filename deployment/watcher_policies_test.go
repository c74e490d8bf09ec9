package deployment

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/structs"
)

// setUpdate gives group web of the deployment's job version (1) the
// update block u.
func setUpdate(f *fakeStore, u *structs.UpdateStrategy) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jobs["web"][1].TaskGroups[0].Update = u
}

// A checkpoint pause with checkpoint_delay is decided on while paused and
// resumes at exactly its ResumeAt, on the watcher's timer.
func TestWatcherResumesAfterCheckpointDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 3, rpb: 10 * time.Minute})
		setUpdate(f, &structs.UpdateStrategy{MaxParallel: 1, Checkpoints: []structs.Amount{{Value: 1}}, CheckpointDelay: 5 * time.Minute})
		stop := startWatcher(t, f)
		defer stop()

		synctest.Wait()
		wantWrites(t, f, "status paused: Deployment paused at checkpoint 1 of group web (1/3 healthy)")
		req := f.requests[0].(*structs.DeploymentStatusUpdateRequest)
		resumeAt := start.Add(5 * time.Minute)
		if u := req.DeploymentUpdate; !u.ResumeAt.Equal(resumeAt) || u.CheckpointsReached["web"] != 1 || req.Eval != nil {
			t.Fatalf("pause update %+v, eval %v", u, req.Eval)
		}
		if d := f.deployment("d1"); !d.PausedAt.Equal(start) || !d.ResumeAt.Equal(resumeAt) {
			t.Fatalf("stored pause times %v %v", d.PausedAt, d.ResumeAt)
		}

		time.Sleep(5*time.Minute - time.Nanosecond)
		synctest.Wait()
		if n := len(f.writes()); n != 1 {
			t.Fatalf("resumed early: %q", f.writes())
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		wantWrites(t, f, "status paused: Deployment paused at checkpoint 1 of group web (1/3 healthy)",
			"status running: Deployment is running")
		req = f.requests[1].(*structs.DeploymentStatusUpdateRequest)
		if req.UpdatedAt != resumeAt.UnixNano() || req.Eval == nil {
			t.Errorf("resume stamped %v with eval %v, want at ResumeAt with an eval", time.Unix(0, req.UpdatedAt), req.Eval)
		}
		d := f.deployment("d1")
		if !d.PausedAt.IsZero() || !d.ResumeAt.IsZero() || d.TaskGroups["web"].CheckpointsReached != 1 {
			t.Errorf("after resume: %+v", d)
		}
	})
}

// An operator's pause during the delay holds the deployment: the watcher
// arms no timer for it any more.
func TestWatcherHoldsAPausedDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 3, rpb: 10 * time.Minute})
		setUpdate(f, &structs.UpdateStrategy{MaxParallel: 1, Checkpoints: []structs.Amount{{Value: 1}}, CheckpointDelay: 5 * time.Minute})
		stop := startWatcher(t, f)
		defer stop()
		synctest.Wait()

		time.Sleep(time.Minute)
		held, err := Pause(f.deployment("d1"), true, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := f.UpdateDeploymentStatus(t.Context(), &structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "d1", Status: held.Status, StatusDescription: held.StatusDescription},
			UpdatedAt:        time.Now().UnixNano(),
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		wantWrites(t, f, "status paused: Deployment paused at checkpoint 1 of group web (1/3 healthy)",
			"status paused: Deployment is paused")
	})
}

// The watcher reads the job's allocations, of every version, only when a
// group sets max_unhealthy, and acts on those not serving.
func TestWatcherCountsNotServing(t *testing.T) {
	f := seed(time.Now(), seedOpts{total: 3, rpb: 10 * time.Minute})
	// An alloc of the old version that failed.
	f.allocs["old"] = &structs.Allocation{ID: "old", JobID: "web", Job: f.jobs["web"][0], TaskGroup: "web",
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusFailed}
	w, err := NewWatcher(Config{State: f, Writer: f, NewID: func() string { return "e" }})
	if err != nil {
		t.Fatal(err)
	}
	w.RunOnce(t.Context())
	if f.jobAllocReads != 0 {
		t.Fatalf("read the job's allocs %d times without max_unhealthy", f.jobAllocReads)
	}
	wantWrites(t, f)

	setUpdate(f, &structs.UpdateStrategy{MaxParallel: 1, MaxUnhealthy: structs.Count(0), OnFailure: structs.OnFailurePause})
	w.RunOnce(t.Context())
	if f.jobAllocReads != 1 {
		t.Fatalf("job's allocs read %d times, want 1", f.jobAllocReads)
	}
	wantWrites(t, f, "status paused: "+structs.MaxUnhealthyPauseDescription(1, 3, "web", 0))
}
