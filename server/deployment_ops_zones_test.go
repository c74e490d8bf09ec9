package server

import (
	"context"
	"reflect"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// Resuming a deployment paused on a zone's disruption budget sends, in the
// same entry, the zone's state back to "rolling" and the reset of its
// failures; max_failed's count (the group's failures) is kept. Pausing
// sends no zone change.
func TestResumeAfterZoneBudget(t *testing.T) {
	h := newHarness(t) // not started: no scheduler or watcher acts meanwhile
	ctx := context.Background()
	job := testJob("web", 4, 100)
	_, _, err := h.raft.Apply(ctx, fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	must(t, err)
	stored, _ := h.store().Snapshot().JobByID(structs.DefaultNamespace, "web")
	d := &structs.Deployment{ID: "dz", Namespace: structs.DefaultNamespace, JobID: "web", JobVersion: stored.Version,
		Status: structs.DeploymentStatusRunning, StatusDescription: structs.DeploymentStatusDescriptionRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 4, Zones: []*structs.ZoneState{
			{Name: "a", Size: 2, State: structs.ZoneStateRolling},
			{Name: "b", Size: 2, State: structs.ZoneStateWaiting},
		}}}}
	var placed []*structs.Allocation
	for i, id := range []string{"za1", "za2"} {
		placed = append(placed, &structs.Allocation{ID: id, Namespace: structs.DefaultNamespace, EvalID: "e",
			Name: structs.AllocName("web", "web", i), JobID: "web", TaskGroup: "web", NodeID: "n", Zone: "a",
			DeploymentID: "dz", DesiredStatus: structs.AllocDesiredStatusRun, DeploymentStatus: &structs.AllocDeploymentStatus{}})
	}
	_, _, err = h.raft.Apply(ctx, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		Job: stored, Deployment: d, AllocsPlaced: placed, UpdatedAt: h.clock.Now().UnixNano()})
	must(t, err)
	no := false
	_, _, err = h.raft.Apply(ctx, fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{
		{ID: "za1", ClientStatus: structs.AllocClientStatusFailed, DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &no}},
		{ID: "za2", ClientStatus: structs.AllocClientStatusFailed, DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &no}},
	}, UpdatedAt: h.clock.Now().UnixNano()})
	must(t, err)
	_, _, err = h.raft.Apply(ctx, fsm.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "dz", Status: structs.DeploymentStatusPaused,
			StatusDescription: structs.ZoneBudgetPauseDescription(2, "a", 2),
			FailuresAtPause:   map[string]int{"web": 2},
			ZoneStates:        map[string]map[string]string{"web": {"a": structs.ZoneStateFailed}}},
		UpdatedAt: h.clock.Now().UnixNano()})
	must(t, err)

	zones := func() []structs.ZoneState {
		got, _ := h.store().Snapshot().DeploymentByID("dz")
		var out []structs.ZoneState
		for _, z := range got.TaskGroups["web"].Zones {
			out = append(out, *z)
		}
		return out
	}
	paused := zones()
	if paused[0].State != structs.ZoneStateFailed || paused[0].Failed != 2 {
		t.Fatalf("before the resume: %+v", paused)
	}
	// An operator's pause on top changes no zone.
	_, err = h.leader.PauseDeployment(ctx, "dz", true)
	must(t, err)
	if got := zones(); !reflect.DeepEqual(got, paused) {
		t.Fatalf("pause changed the zones: %+v", got)
	}

	_, err = h.leader.PauseDeployment(ctx, "dz", false)
	must(t, err)
	got, _ := h.store().Snapshot().DeploymentByID("dz")
	want := []structs.ZoneState{
		{Name: "a", Size: 2, State: structs.ZoneStateRolling},
		{Name: "b", Size: 2, State: structs.ZoneStateWaiting},
	}
	if z := zones(); got.Status != structs.DeploymentStatusRunning || !reflect.DeepEqual(z, want) {
		t.Fatalf("after the resume: %s, zones %+v", got.Status, z)
	}
	if g := got.TaskGroups["web"]; g.UnhealthyAllocs != 2 || g.FailuresAtPause != 2 {
		t.Fatalf("max_failed's count: %+v", g)
	}
}
