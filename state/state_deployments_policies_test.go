package state

import (
	"testing"
	"time"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func statusReq(id, status, desc string, at time.Time) *structs.DeploymentStatusUpdateRequest {
	return &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: id, Status: status, StatusDescription: desc},
		UpdatedAt:        at.UnixNano(),
	}
}

// The pause times come from the request alone: PausedAt from UpdatedAt when
// a deployment pauses, ResumeAt from the update while it stays paused (zero
// holds it), both cleared when it leaves the pause.
func TestDeploymentPauseTimes(t *testing.T) {
	s := newStore(t)
	dep, _ := deployed(t, s, 3, 0)
	read := func() *structs.Deployment { return get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID)) }
	t1, t2, t3 := statetest.T0.Add(time.Minute), statetest.T0.Add(2*time.Minute), statetest.T0.Add(3*time.Minute)

	req := statusReq(dep.ID, structs.DeploymentStatusPaused, "checkpoint", t1)
	req.DeploymentUpdate.ResumeAt = t1.Add(5 * time.Minute)
	must(t, s.UpdateDeploymentStatus(3, req))
	d := read()
	if !d.PausedAt.Equal(t1) || !d.ResumeAt.Equal(t1.Add(5*time.Minute)) {
		t.Fatalf("paused: PausedAt %v ResumeAt %v", d.PausedAt, d.ResumeAt)
	}

	// paused → paused without ResumeAt: held, the pause's start kept.
	must(t, s.UpdateDeploymentStatus(4, statusReq(dep.ID, structs.DeploymentStatusPaused, structs.DeploymentStatusDescriptionPaused, t2)))
	d = read()
	if !d.PausedAt.Equal(t1) || !d.ResumeAt.IsZero() {
		t.Fatalf("held: PausedAt %v ResumeAt %v", d.PausedAt, d.ResumeAt)
	}

	// → running: both cleared, the progress deadline restarts.
	must(t, s.UpdateDeploymentStatus(5, statusReq(dep.ID, structs.DeploymentStatusRunning, structs.DeploymentStatusDescriptionRunning, t3)))
	d = read()
	g := d.TaskGroups["web"]
	if !d.PausedAt.IsZero() || !d.ResumeAt.IsZero() {
		t.Fatalf("resumed: PausedAt %v ResumeAt %v", d.PausedAt, d.ResumeAt)
	}
	if !g.RequireProgressBy.Equal(t3.Add(g.ProgressDeadline)) {
		t.Fatalf("RequireProgressBy %v, want resume + deadline", g.RequireProgressBy)
	}

	// A ResumeAt on a status other than paused is not kept.
	req = statusReq(dep.ID, structs.DeploymentStatusRunning, "still running", t3)
	req.DeploymentUpdate.ResumeAt = t3.Add(time.Hour)
	must(t, s.UpdateDeploymentStatus(6, req))
	if d = read(); !d.ResumeAt.IsZero() {
		t.Fatalf("running with ResumeAt %v", d.ResumeAt)
	}

	// Paused again, then failed: terminal keeps no pause times.
	must(t, s.UpdateDeploymentStatus(7, statusReq(dep.ID, structs.DeploymentStatusPaused, "paused", t3)))
	if d = read(); !d.PausedAt.Equal(t3) {
		t.Fatalf("second pause at %v", d.PausedAt)
	}
	must(t, s.UpdateDeploymentStatus(8, statusReq(dep.ID, structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionFailedByUser, t3)))
	if d = read(); !d.PausedAt.IsZero() || !d.ResumeAt.IsZero() {
		t.Fatalf("failed: PausedAt %v ResumeAt %v", d.PausedAt, d.ResumeAt)
	}
}

// The bookkeeping of a status update is applied to the groups it names, and
// a plan made from an older snapshot does not undo it.
func TestDeploymentBookkeepingKeptAcrossPlans(t *testing.T) {
	s := newStore(t)
	dep, _ := deployed(t, s, 3, 0)
	stale := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID))

	req := statusReq(dep.ID, structs.DeploymentStatusPaused, structs.MaxFailedPauseDescription(3, 3, 2), statetest.T0.Add(time.Minute))
	req.DeploymentUpdate.CheckpointsReached = map[string]int{"web": 2, "nope": 1}
	req.DeploymentUpdate.FailuresAtPause = map[string]int{"web": 3}
	must(t, s.UpdateDeploymentStatus(3, req))
	d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID))
	if g := d.TaskGroups["web"]; g.CheckpointsReached != 2 || g.FailuresAtPause != 3 {
		t.Fatalf("marks not applied: %+v", g)
	}
	if _, ok := d.TaskGroups["nope"]; ok {
		t.Fatal("an unknown group was created")
	}

	// A status update without marks keeps them.
	must(t, s.UpdateDeploymentStatus(4, statusReq(dep.ID, structs.DeploymentStatusRunning, structs.DeploymentStatusDescriptionRunning, statetest.T0.Add(2*time.Minute))))

	// The plan's copy is older: no marks, no pause; its configuration
	// (on_failure) is taken.
	plan := stale.Copy()
	plan.TaskGroups["web"].OnFailure = structs.OnFailurePause
	plan.Status = structs.DeploymentStatusRunning
	must(t, s.ApplyPlanResults(5, &structs.ApplyPlanResultsRequest{Deployment: plan, UpdatedAt: statetest.T0.Add(3 * time.Minute).UnixNano()}))
	d = get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID))
	g := d.TaskGroups["web"]
	if g.CheckpointsReached != 2 || g.FailuresAtPause != 3 {
		t.Fatalf("plan undid the marks: %+v", g)
	}
	if g.OnFailure != structs.OnFailurePause {
		t.Fatalf("plan's on_failure not taken: %q", g.OnFailure)
	}

	// Pause times and RevertOf stay as stored too.
	must(t, s.UpdateDeploymentStatus(6, statusReq(dep.ID, structs.DeploymentStatusPaused, "paused", statetest.T0.Add(4*time.Minute))))
	plan.Status = structs.DeploymentStatusRunning
	v := uint64(7)
	plan.RevertOf = &v
	must(t, s.ApplyPlanResults(7, &structs.ApplyPlanResultsRequest{Deployment: plan, UpdatedAt: statetest.T0.Add(5 * time.Minute).UnixNano()}))
	d = get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID))
	if d.Status != structs.DeploymentStatusPaused || !d.PausedAt.Equal(statetest.T0.Add(4*time.Minute)) || d.RevertOf != nil {
		t.Fatalf("plan changed status %s, PausedAt %v or RevertOf %v", d.Status, d.PausedAt, d.RevertOf)
	}
}

// A new deployment keeps the RevertOf its plan gives it (the scheduler
// copies it from a version a revert registered), and a revert's job
// version keeps its mark in the history.
func TestRevertMarkStored(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 1, statetest.Job("web", 2))
	revert := job.Copy()
	revert.Meta = map[string]string{"rev": "2"}
	v := job.Version
	revert.RevertOf = &v
	stored := registerJob(t, s, 2, revert)
	if stored.Version != 1 || stored.RevertOf == nil || *stored.RevertOf != 0 {
		t.Fatalf("stored revert version %d RevertOf %v", stored.Version, stored.RevertOf)
	}
	h := get[*structs.Job](t)(s.Snapshot().JobByIDAndVersion(job.Namespace, job.ID, 1))
	if h.RevertOf == nil {
		t.Fatal("history lost the mark")
	}
	dep := statetest.Deployment(stored, 0)
	dep.RevertOf = stored.RevertOf
	must(t, s.ApplyPlanResults(3, &structs.ApplyPlanResultsRequest{Deployment: dep, UpdatedAt: statetest.T0.UnixNano()}))
	d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID))
	if d.RevertOf == nil || *d.RevertOf != 0 {
		t.Fatalf("deployment RevertOf %v", d.RevertOf)
	}
	// The mark is not part of the spec: the same spec unmarked is no new
	// version.
	again := stored.Copy()
	again.RevertOf = nil
	if j := registerJob(t, s, 4, again); j.Version != 1 {
		t.Fatalf("same spec registered as version %d", j.Version)
	}
}

// The pause bookkeeping survives a snapshot restore as it was.
func TestDeploymentBookkeepingRestored(t *testing.T) {
	s := newStore(t)
	dep, _ := deployed(t, s, 3, 0)
	req := statusReq(dep.ID, structs.DeploymentStatusPaused, "checkpoint", statetest.T0.Add(time.Minute))
	req.DeploymentUpdate.ResumeAt = statetest.T0.Add(6 * time.Minute)
	req.DeploymentUpdate.CheckpointsReached = map[string]int{"web": 1}
	req.DeploymentUpdate.FailuresAtPause = map[string]int{"web": 1}
	must(t, s.UpdateDeploymentStatus(3, req))
	want := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID))
	got := get[*structs.Deployment](t)(restoredCopy(t, s).Snapshot().DeploymentByID(dep.ID))
	if !got.PausedAt.Equal(want.PausedAt) || !got.ResumeAt.Equal(want.ResumeAt) ||
		got.TaskGroups["web"].CheckpointsReached != 1 || got.TaskGroups["web"].FailuresAtPause != 1 {
		t.Fatalf("restored %+v, want %+v", got, want)
	}
}

// A resume accepts the failures counted so far, those that came during
// the pause included (FailuresAtPause catches up with UnhealthyAllocs), so
// that only a newer failure pauses the deployment again.
func TestResumeAcceptsFailuresSoFar(t *testing.T) {
	s := newStore(t)
	dep, allocs := deployed(t, s, 3, 0)
	t1, t2 := statetest.T0.Add(time.Minute), statetest.T0.Add(2*time.Minute)
	req := statusReq(dep.ID, structs.DeploymentStatusPaused, "Deployment paused: 1 of 3 allocations of the new version failed, over max_failed 0", t1)
	req.DeploymentUpdate.FailuresAtPause = map[string]int{"web": 1}
	must(t, s.UpdateDeploymentStatus(3, req))
	// Two more fail while the deployment is paused.
	must(t, s.UpdateAllocsFromClient(4, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{health(allocs[1].ID, false, t1), health(allocs[2].ID, false, t1)},
	}))
	must(t, s.UpdateDeploymentStatus(5, statusReq(dep.ID, structs.DeploymentStatusRunning, structs.DeploymentStatusDescriptionRunning, t2)))
	g := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID)).TaskGroups["web"]
	if g.UnhealthyAllocs != 2 || g.FailuresAtPause != 2 {
		t.Fatalf("after resume: failures %d, accepted %d; want 2 and 2", g.UnhealthyAllocs, g.FailuresAtPause)
	}
}
