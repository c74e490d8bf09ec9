package state

import (
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// A status update sets the WaitReason of the groups it names ("" clears
// it; unknown groups are ignored) and leaves the others' alone; a status
// update that names none keeps every group's.
func TestWaitReasonStatusUpdates(t *testing.T) {
	s := newStore(t)
	dep := ordered(t, s)
	read := func(name string) string {
		return get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID)).TaskGroups[name].WaitReason
	}
	req := statusReq(dep.ID, structs.DeploymentStatusRunning, structs.GroupWaitsDescription("api", "db"), statetest.T0)
	req.DeploymentUpdate.WaitReasons = map[string]string{"db": "first batch: 1 of 2 healthy",
		"api": "group_order: waits for group db to be done", "nogroup": "x"}
	must(t, s.UpdateDeploymentStatus(3, req))
	if got := read("db"); got != "first batch: 1 of 2 healthy" {
		t.Fatalf("db: %q", got)
	}
	if got := read("api"); got != "group_order: waits for group db to be done" {
		t.Fatalf("api: %q", got)
	}

	req = statusReq(dep.ID, structs.DeploymentStatusRunning, structs.GroupWaitsDescription("api", "db"), statetest.T0)
	req.DeploymentUpdate.WaitReasons = map[string]string{"db": ""}
	must(t, s.UpdateDeploymentStatus(4, req))
	if got := read("db"); got != "" {
		t.Fatalf("db not cleared: %q", got)
	}
	if got := read("api"); got != "group_order: waits for group db to be done" {
		t.Fatalf("api moved: %q", got)
	}

	req = statusReq(dep.ID, structs.DeploymentStatusPaused, structs.DeploymentStatusDescriptionPaused, statetest.T0)
	must(t, s.UpdateDeploymentStatus(5, req))
	if got := read("api"); got != "group_order: waits for group db to be done" {
		t.Fatalf("an update without reasons moved api's: %q", got)
	}
}
