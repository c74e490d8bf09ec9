package state

import (
	"testing"
	"time"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func TestPlanResultsStopUpdatePlace(t *testing.T) {
	s := newStore(t)
	n := statetest.Node("a")
	v0 := registerJob(t, s, 1, statetest.Job("web", 2))
	old0, old1 := statetest.Alloc(v0, n, "e0", "", 0), statetest.Alloc(v0, n, "e0", "", 1)
	must(t, s.UpsertAllocs(2, []*structs.Allocation{old0, old1}, 1))
	c := v0.Copy()
	c.TaskGroups[0].Tasks[0].Env = map[string]string{"X": "2"}
	v1 := registerJob(t, s, 3, c)
	dep := statetest.Deployment(v1, 0)
	repl := statetest.Alloc(v1, n, "e1", dep.ID, 0)
	repl.PreviousAllocation = old0.ID
	repl.Job = nil // carried once in the request
	inplace := get[*structs.Allocation](t)(s.Snapshot().AllocByID(old1.ID)).Copy()
	inplace.Job = v1
	inplace.DeploymentID = dep.ID
	placedAt := statetest.T0.Add(time.Minute)
	must(t, s.ApplyPlanResults(4, &structs.ApplyPlanResultsRequest{
		EvalID: "e1", Job: v1, Deployment: dep,
		AllocsStopped: []*structs.AllocStopUpdate{{AllocID: old0.ID, DesiredDescription: structs.AllocUpdating}},
		AllocsUpdated: []*structs.Allocation{inplace},
		AllocsPlaced:  []*structs.Allocation{repl},
		FollowupEvals: []*structs.Evaluation{statetest.Eval("followup", v1)},
		UpdatedAt:     placedAt.UnixNano(),
	}))
	snap := s.Snapshot()
	stopped := get[*structs.Allocation](t)(snap.AllocByID(old0.ID))
	if stopped.DesiredStatus != structs.AllocDesiredStatusStop || stopped.DesiredDescription != structs.AllocUpdating {
		t.Fatalf("stopped alloc = %s %q", stopped.DesiredStatus, stopped.DesiredDescription)
	}
	placed := get[*structs.Allocation](t)(snap.AllocByID(repl.ID))
	if placed == nil || placed.Job == nil || placed.Job.Version != 1 {
		t.Fatalf("placed alloc missing or without job: %+v", placed)
	}
	upd := get[*structs.Allocation](t)(snap.AllocByID(old1.ID))
	if upd.Job.Version != 1 || upd.DeploymentID != dep.ID {
		t.Fatalf("in-place alloc = v%d dep %q", upd.Job.Version, upd.DeploymentID)
	}
	d := get[*structs.Deployment](t)(snap.DeploymentByID(dep.ID))
	g := d.TaskGroups["web"]
	if g.PlacedAllocs != 2 {
		t.Fatalf("PlacedAllocs = %d, want 2 (one placed, one moved in place)", g.PlacedAllocs)
	}
	if want := placedAt.Add(g.ProgressDeadline); !g.RequireProgressBy.Equal(want) {
		t.Fatalf("RequireProgressBy = %v, want %v", g.RequireProgressBy, want)
	}
	if e := get[*structs.Evaluation](t)(snap.EvalByID(statetest.ID("eval/followup"))); e == nil {
		t.Fatal("follow-up eval not stored")
	}
}
