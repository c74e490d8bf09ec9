package state

import (
	"testing"
	"time"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// TestMultiregionStatusesActive: a multi-region deployment that is pending
// or blocked is active, as Nomad's: garbage collection keeps it, stopping
// the job cancels it, a pending one that starts running has its
// progress deadline run from the start, and a blocked one moves on to
// successful.
func TestMultiregionStatusesActive(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 1, statetest.Job("web", 1))
	put := func(index uint64, id, status string) {
		t.Helper()
		d := &structs.Deployment{ID: id, Namespace: job.Namespace, JobID: job.ID, JobVersion: job.Version,
			JobCreateIndex: job.CreateIndex, Status: status, IsMultiregion: true,
			TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1, ProgressDeadline: time.Minute}}}
		must(t, s.update(index, func(tx *WriteTxn) error { return s.UpsertDeploymentTxn(tx, d, 0) }))
	}
	put(2, "pending", structs.DeploymentStatusPending)
	put(3, "blocked", structs.DeploymentStatusBlocked)
	must(t, s.Reap(4, &structs.EvalReapRequest{Deployments: []string{"pending", "blocked"}}))
	for _, id := range []string{"pending", "blocked"} {
		if d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(id)); d == nil {
			t.Fatalf("garbage collection deleted the %s deployment", id)
		}
	}

	start := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	must(t, s.UpdateDeploymentStatus(5, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "pending", Status: structs.DeploymentStatusRunning,
			StatusDescription: structs.DeploymentStatusDescriptionRunning},
		UpdatedAt: start.UnixNano()}))
	d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID("pending"))
	if d.Status != structs.DeploymentStatusRunning || !d.TaskGroups["web"].RequireProgressBy.Equal(start.Add(time.Minute)) {
		t.Fatalf("started: %s, progress deadline %v, want %v", d.Status, d.TaskGroups["web"].RequireProgressBy, start.Add(time.Minute))
	}
	must(t, s.UpdateDeploymentStatus(6, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "blocked", Status: structs.DeploymentStatusSuccessful,
			StatusDescription: structs.DeploymentStatusDescriptionSuccessful}}))
	if d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID("blocked")); d.Status != structs.DeploymentStatusSuccessful {
		t.Fatalf("blocked → %s, want successful", d.Status)
	}

	// Stopping the job cancels a pending deployment.
	put(7, "pending2", structs.DeploymentStatusPending)
	_, err := s.DeregisterJob(8, &structs.JobDeregisterRequest{Namespace: job.Namespace, JobID: job.ID})
	must(t, err)
	if d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID("pending2")); d.Status != structs.DeploymentStatusCancelled {
		t.Fatalf("pending deployment of a stopped job: %s, want cancelled", d.Status)
	}
}
