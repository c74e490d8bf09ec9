package fsm

import (
	"errors"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// A job restart writes its deployment and evaluation in one entry; a
// second restart while the first is active, or one of a version no longer
// current, is refused with nothing written.
func TestJobRestartEntry(t *testing.T) {
	f := newTestFSM(t)
	job := statetest.Job("web", 2)
	applyOK(t, f, 1, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored, _ := snap(f).JobByID("default", "web")
	restart := func(id string, version uint64) *structs.JobRestartRequest {
		return &structs.JobRestartRequest{
			Deployment: &structs.Deployment{
				ID: id, Namespace: "default", JobID: "web", JobVersion: version, JobCreateIndex: stored.CreateIndex,
				Status: structs.DeploymentStatusRunning, StatusDescription: structs.RestartDescription(false),
				Restart: &structs.RestartSpec{Groups: []string{"web"}}, CreateTime: 5,
			},
			Eval:      &structs.Evaluation{ID: "e-" + id, Namespace: "default", JobID: "web", DeploymentID: id, Status: structs.EvalStatusPending, Type: structs.JobTypeService},
			UpdatedAt: 5,
		}
	}
	applyOK(t, f, 2, JobRestartRequestType, restart("r1", stored.Version))
	d, _ := snap(f).DeploymentByID("r1")
	if d == nil || !d.IsRestart() || d.CreateIndex != 2 || d.Restart.Groups[0] != "web" {
		t.Fatalf("deployment %+v", d)
	}
	if e, _ := snap(f).EvalByID("e-r1"); e == nil {
		t.Fatal("no evaluation")
	}
	for i, req := range []*structs.JobRestartRequest{restart("r2", stored.Version), restart("r3", stored.Version+1)} {
		if i == 1 {
			// r1 over: only the version is wrong now.
			applyOK(t, f, 3, DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
				DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "r1", Status: structs.DeploymentStatusSuccessful}})
		}
		resp := f.Apply(&raft.Log{Index: uint64(10 + i), Type: raft.LogCommand, Data: entry(t, JobRestartRequestType, req)})
		err, _ := resp.(error)
		if !errors.Is(err, state.ErrConflict) {
			t.Fatalf("restart %d: %v, want a conflict", i, resp)
		}
		if d, _ := snap(f).DeploymentByID(req.Deployment.ID); d != nil {
			t.Fatalf("refused restart %d was written", i)
		}
	}
	if JobRestartRequestType.String() != "JobRestart" {
		t.Fatal(JobRestartRequestType.String())
	}
}
