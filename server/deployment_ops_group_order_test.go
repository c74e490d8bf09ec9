package server

import (
	"context"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// Resuming a deployment paused because an earlier group, done, no longer
// served fully sends, in the same entry, that group back to "done" (the
// watcher checks it again), a group that failed mid-way back to
// "rolling", and the description of the group that waits.
func TestResumeAfterGroupFailure(t *testing.T) {
	h := newHarness(t) // not started: no scheduler or watcher acts meanwhile
	ctx := context.Background()
	job := testJob("web", 2, 100)
	_, _, err := h.raft.Apply(ctx, fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	must(t, err)
	stored, _ := h.store().Snapshot().JobByID(structs.DefaultNamespace, "web")
	doneAt := h.clock.Now()
	d := &structs.Deployment{ID: "dg", Namespace: structs.DefaultNamespace, JobID: "web", JobVersion: stored.Version,
		Status: structs.DeploymentStatusRunning, StatusDescription: structs.DeploymentStatusDescriptionRunning,
		TaskGroups: map[string]*structs.DeploymentState{
			"db":  {DesiredTotal: 1, Order: 1, State: structs.GroupStateDone, DoneAt: doneAt},
			"api": {DesiredTotal: 2, Order: 2, State: structs.GroupStateRolling},
			"web": {DesiredTotal: 2, Order: 3, State: structs.GroupStateWaiting},
		}}
	_, _, err = h.raft.Apply(ctx, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		Job: stored, Deployment: d, UpdatedAt: h.clock.Now().UnixNano()})
	must(t, err)
	_, _, err = h.raft.Apply(ctx, fsm.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "dg", Status: structs.DeploymentStatusPaused,
			StatusDescription: structs.GroupServingPauseDescription("db", 0, 1, "api"),
			GroupStates:       map[string]string{"db": structs.GroupStateFailed, "api": structs.GroupStateFailed}},
		UpdatedAt: h.clock.Now().UnixNano()})
	must(t, err)

	_, err = h.leader.PauseDeployment(ctx, "dg", false)
	must(t, err)
	got, _ := h.store().Snapshot().DeploymentByID("dg")
	if got.Status != structs.DeploymentStatusRunning ||
		got.StatusDescription != structs.GroupWaitsDescription("web", "api") {
		t.Fatalf("after the resume: %s %q", got.Status, got.StatusDescription)
	}
	for name, want := range map[string]string{"db": structs.GroupStateDone, "api": structs.GroupStateRolling, "web": structs.GroupStateWaiting} {
		if s := got.TaskGroups[name]; s.State != want {
			t.Fatalf("group %s %q after the resume, want %q", name, s.State, want)
		}
	}
	if !got.TaskGroups["db"].DoneAt.Equal(doneAt) {
		t.Fatalf("db's DoneAt %v, want %v", got.TaskGroups["db"].DoneAt, doneAt)
	}
}
