package scheduler

import (
	"testing"

	"github.com/droverhq/drover/structs"
)

// Odd but possible inputs must give a plan, not a panic.
func TestReconcileOddInputs(t *testing.T) {
	noUpdate := baseJob()
	noUpdate.TaskGroups[0].Update = nil
	negative := baseJob()
	negative.TaskGroups[0].Count = -3
	nilGroup := baseJob()
	nilGroup.TaskGroups = append(nilGroup.TaskGroups, nil)
	orphan := &structs.Allocation{ID: "x", Name: "garbage", TaskGroup: "web", DesiredStatus: "run", ClientStatus: "running", NodeID: "n0"}
	noJob := &structs.Allocation{ID: "y", Name: "example.web[0]", TaskGroup: "web", DesiredStatus: "run", ClientStatus: "failed"}
	inputs := []Input{
		{},
		{JobID: "gone", Allocs: []*structs.Allocation{orphan, nil}},
		{Job: noUpdate, Allocs: []*structs.Allocation{orphan, noJob}, Nodes: []*structs.Node{nil, testNode("n0", "ready")}},
		{Job: negative, Allocs: []*structs.Allocation{orphan}},
		{Job: nilGroup, Deployment: &structs.Deployment{ID: "d", JobVersion: 0, JobCreateIndex: 1, Status: "running"}},
	}
	for i, in := range inputs {
		p := Reconcile(in)
		if p == nil {
			t.Fatalf("input %d: nil plan", i)
		}
		t.Logf("input %d:\n%s", i, p)
		res := NewPlacer(in.Nodes, in.Allocs, 1).Place(in.Job, p, baseTime)
		if res == nil {
			t.Fatalf("input %d: nil placement result", i)
		}
	}
	// An alloc named without an index is stopped as surplus rather than kept
	// beside a proper one.
	p := Reconcile(Input{Job: baseJob(), Allocs: []*structs.Allocation{orphan}, Nodes: []*structs.Node{testNode("n0", "ready")}})
	if len(p.Stop) != 1 || p.Stop[0].Alloc.ID != "x" || len(p.Place) != 2 {
		t.Fatalf("want the orphan stopped, got:\n%s", p)
	}
}
