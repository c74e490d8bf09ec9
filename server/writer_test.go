package server

import (
	"context"
	"testing"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

func TestRaftWriterDesiredTransitionAndEvals(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	s := h.store()
	must(t, s.UpsertNode(1, testNode("a", 1000, 4096)))
	job := testJob("web", 1, 100)
	_, err := s.RegisterJob(2, &structs.JobRegisterRequest{Job: job})
	must(t, err)
	must(t, s.UpsertAllocs(3, []*structs.Allocation{placedAlloc("a1", job, "node-a", 100)}, 1))
	h.raft.index = 3

	w := raftWriter{h.leader}
	yes := true
	eval := &structs.Evaluation{ID: "e1", Namespace: structs.DefaultNamespace, JobID: "web", Type: structs.JobTypeService, Status: structs.EvalStatusPending}
	must(t, w.UpdateAllocDesiredTransition(ctx, &structs.AllocUpdateDesiredTransitionRequest{
		Allocs: map[string]*structs.DesiredTransition{"a1": {Reschedule: &yes}},
		Evals:  []*structs.Evaluation{eval},
	}))
	snap := s.Snapshot()
	if a, _ := snap.AllocByID("a1"); !a.DesiredTransition.ShouldReschedule() {
		t.Fatal("transition not written")
	}
	if e, _ := snap.EvalByID("e1"); e == nil {
		t.Fatal("eval not written with the transition")
	}
	e2 := eval.Copy()
	e2.ID = "e2"
	must(t, w.UpsertEvals(ctx, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{e2}}))
	if e, _ := s.Snapshot().EvalByID("e2"); e == nil {
		t.Fatal("UpsertEvals wrote nothing")
	}
	must(t, w.UpdateJobStability(ctx, &structs.JobStabilityRequest{Namespace: structs.DefaultNamespace, JobID: "web", JobVersion: 0, Stable: true}))
	if j, _ := s.Snapshot().JobByID(structs.DefaultNamespace, "web"); !j.Stable {
		t.Fatal("stability not written")
	}
}

func TestNodeRegisteredElsewhereGetsHeartbeatTimer(t *testing.T) {
	h := newHarness(t)
	h.start()
	// Written straight through Raft, as a path that bypasses RegisterNode
	// would.
	_, _, err := h.raft.Apply(h.ctx, fsmNodeRegisterType, &structs.NodeRegisterRequest{Node: testNode("x", 1000, 1024)})
	must(t, err)
	h.waitFor("the node", func(s *state.Snapshot) bool { n, _ := s.NodeByID("node-x"); return n != nil })
	tm, err := h.leader.term()
	must(t, err)
	// The feeder arms the timer after it sees the change; wait for its
	// next pass through a later write it must also see.
	_, err = h.leader.RegisterJob(h.ctx, testJob("web", 1, 100))
	must(t, err)
	h.idle()
	if tm.beats.armed() != 1 {
		t.Fatalf("%d timers armed, want 1", tm.beats.armed())
	}
}
