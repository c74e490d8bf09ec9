package fsm

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// The drain and eligibility entries are applied through the FSM, refused
// without effect when wrong, and carried by snapshots with the drain's
// deadline, LastDrain, the events and the allocs' migrate marks: what a new
// leader needs to continue a drain.
func TestNodeDrainEntriesAreAppliedAndSnapshotted(t *testing.T) {
	f := newTestFSM(t)
	node := statetest.Node("a")
	applyOK(t, f, 1, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: node})
	job := statetest.Job("web", 1)
	eval := statetest.Eval("register", job)
	applyOK(t, f, 2, JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: eval, SubmitTime: 1})
	stored, _ := snap(f).JobByID("default", "web")
	a := statetest.Alloc(stored, node, eval.ID, "", 0)
	applyOK(t, f, 3, ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{EvalID: eval.ID, Job: stored,
		AllocsPlaced: []*structs.Allocation{a}, UpdatedAt: 2})

	start := statetest.T0.Add(time.Minute)
	drain := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour, IgnoreSystemJobs: true},
		StartedAt: start, ForceDeadline: start.Add(time.Hour)}
	applyOK(t, f, 4, NodeUpdateDrainRequestType, &structs.NodeUpdateDrainRequest{NodeID: node.ID, DrainStrategy: drain,
		Meta: map[string]string{"message": "patch"}, UpdatedAt: start.UnixNano(),
		NodeEvents: []*structs.NodeEvent{{Message: structs.NodeDrainEventDrainSet, Subsystem: structs.NodeEventSubsystemDrain,
			Details: map[string]string{"deadline": "1h"}, Timestamp: start}}})
	applyOK(t, f, 5, AllocUpdateDesiredTransitionRequestType, &structs.AllocUpdateDesiredTransitionRequest{
		Allocs: map[string]*structs.DesiredTransition{a.ID: {Migrate: statetest.Bool(true)}}, UpdatedAt: start.UnixNano(),
		Evals: []*structs.Evaluation{statetest.Eval("drain", stored)}})

	for _, bad := range []struct {
		name string
		mt   MessageType
		req  any
		want error
	}{
		{"eligible while draining", NodeUpdateEligibilityRequestType, &structs.NodeUpdateEligibilityRequest{NodeID: node.ID, Eligibility: structs.NodeSchedulingEligible}, state.ErrInvalid},
		{"completion of another drain", NodeUpdateDrainRequestType, &structs.NodeUpdateDrainRequest{NodeID: node.ID, DrainComplete: true, DrainStartedAt: statetest.T0}, state.ErrConflict},
		{"drain of an unknown node", NodeUpdateDrainRequestType, &structs.NodeUpdateDrainRequest{NodeID: "nope", DrainStrategy: drain}, state.ErrNotFound},
	} {
		if err := applyErr(t, f, 6, bad.mt, bad.req); !errors.Is(err, bad.want) {
			t.Errorf("%s: %v, want %v", bad.name, err, bad.want)
		}
	}

	var buf bytes.Buffer
	fs, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.(*fsmSnapshot).write(&buf); err != nil {
		t.Fatal(err)
	}
	g := newTestFSM(t)
	if err := g.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	if x, y := dump(t, f), dump(t, g); x != y {
		t.Fatalf("restored state differs:\n%s", firstDiff(x, y))
	}
	n, _ := snap(g).NodeByID(node.ID)
	if n == nil || n.DrainStrategy == nil || !n.DrainStrategy.ForceDeadline.Equal(start.Add(time.Hour)) ||
		!n.DrainStrategy.IgnoreSystemJobs || !n.DrainStrategy.StartedAt.Equal(start) || n.DrainStrategy.Deadline != time.Hour {
		t.Fatalf("restored drain strategy: %+v", n)
	}
	if n.LastDrain == nil || n.LastDrain.Status != structs.DrainStatusDraining || n.LastDrain.Meta["message"] != "patch" {
		t.Fatalf("restored LastDrain: %+v", n.LastDrain)
	}
	if len(n.Events) != 2 || n.Events[1].Details["deadline"] != "1h" || n.Events[1].CreateIndex != 4 {
		t.Fatalf("restored events: %+v", n.Events)
	}
	if got, _ := snap(g).AllocByID(a.ID); got == nil || !got.DesiredTransition.ShouldMigrate() {
		t.Fatalf("restored alloc lost its migrate mark: %+v", got)
	}

	// The restored FSM goes on: the drainer completes the drain.
	applyOK(t, g, 7, NodeUpdateDrainRequestType, &structs.NodeUpdateDrainRequest{NodeID: node.ID, DrainComplete: true,
		DrainStartedAt: start, UpdatedAt: start.Add(time.Minute).UnixNano()})
	if n, _ := snap(g).NodeByID(node.ID); n.DrainStrategy != nil || n.LastDrain.Status != structs.DrainStatusComplete ||
		n.SchedulingEligibility != structs.NodeSchedulingIneligible {
		t.Fatalf("completed drain: %+v", n)
	}
}
