package server

import (
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

func TestFailedAllocRescheduledAfterDelay(t *testing.T) {
	// Nodes must outlive the reschedule delay without heartbeating.
	h := newHarness(t, func(c *Config) { c.HeartbeatTTL = time.Hour })
	h.start()
	for _, n := range []string{"a", "b"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 4000, 4096))
		must(t, err)
	}
	job := testJob("web", 1, 100)
	job.TaskGroups[0].Update = nil // no deployment: plain rescheduling
	job.Update = nil
	_, err := h.leader.RegisterJob(h.ctx, job)
	must(t, err)
	h.waitFor("the alloc", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 1 })
	h.idle()
	failed := allocsOf(h.store().Snapshot(), "web")[0]

	_, err = h.leader.UpdateAllocsFromClient(h.ctx, []*structs.Allocation{{
		ID: failed.ID, ClientStatus: structs.AllocClientStatusFailed, ClientDescription: "exited 1",
		TaskStates: map[string]*structs.TaskState{"app": {State: structs.TaskStateDead, Failed: true, FinishedAt: h.clock.Now()}},
	}})
	must(t, err)
	// The retry-failed-alloc eval finds the reschedule delay not yet due
	// and leaves a delayed follow-up eval.
	var followup string
	h.waitFor("a follow-up eval linked to the failed alloc", func(s *state.Snapshot) bool {
		a, _ := s.AllocByID(failed.ID)
		followup = a.FollowupEvalID
		if followup == "" {
			return false
		}
		f, _ := s.EvalByID(followup)
		prev, _ := s.EvalByID(f.PreviousEval)
		return f.Status == structs.EvalStatusPending && prev != nil && prev.Status == structs.EvalStatusComplete
	})
	if n := len(allocsOf(h.store().Snapshot(), "web")); n != 0 {
		t.Fatalf("%d live allocs before the reschedule delay", n)
	}
	// The follow-up lands in the same entry as its evaluation's outcome;
	// the clock moves only once the broker holds it (its delay timer is
	// armed), or the timer would be armed after the move and never fire.
	deadline := time.Now().Add(testTimeout)
	for !slices.ContainsFunc(h.clock.pending(), func(d time.Duration) bool { return d > 0 && d <= 31*time.Second }) {
		if time.Now().After(deadline) {
			t.Fatalf("the broker armed no timer for the follow-up; pending %v", h.clock.pending())
		}
		time.Sleep(time.Millisecond)
	}
	h.clock.Advance(31 * time.Second)
	h.waitFor("the replacement", func(s *state.Snapshot) bool {
		e, _ := s.EvalByID(followup)
		return len(allocsOf(s, "web")) == 1 && e != nil && e.Status == structs.EvalStatusComplete
	})
	repl := allocsOf(h.store().Snapshot(), "web")[0]
	if repl.PreviousAllocation != failed.ID || repl.RescheduleTracker == nil || len(repl.RescheduleTracker.Events) != 1 {
		t.Fatalf("replacement: previous %q tracker %+v", repl.PreviousAllocation, repl.RescheduleTracker)
	}
}

func TestDeregisterStopsAllocs(t *testing.T) {
	h := newHarness(t)
	h.start()
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 4000, 4096))
	must(t, err)
	_, err = h.leader.RegisterJob(h.ctx, testJob("web", 2, 100))
	must(t, err)
	h.waitFor("two allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 2 })
	res, err := h.leader.DeregisterJob(h.ctx, "", "web", false)
	must(t, err)
	h.waitFor("every alloc stopped", func(s *state.Snapshot) bool {
		e, _ := s.EvalByID(res.EvalID)
		return len(allocsOf(s, "web")) == 0 && e != nil && e.Status == structs.EvalStatusComplete
	})
	e, _ := h.store().Snapshot().EvalByID(res.EvalID)
	if e.TriggeredBy != structs.EvalTriggerJobDeregister || e.CreateTime != h.clock.Now().UnixNano() {
		t.Fatalf("deregister eval: %+v", e)
	}
}

// TestSystemJobFollowsNodes: a system or sysbatch job gets an evaluation
// when a node registers, served by the workers' default scheduler types,
// and places its alloc on the new node.
func TestSystemJobFollowsNodes(t *testing.T) {
	for _, typ := range []string{structs.JobTypeSystem, structs.JobTypeSysBatch} {
		t.Run(typ, func(t *testing.T) {
			h := newHarness(t)
			h.start()
			_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 4000, 4096))
			must(t, err)
			job := testJob("agent", 1, 100)
			job.Type = typ
			for _, tg := range job.TaskGroups {
				tg.Update = nil
				tg.ReschedulePolicy = nil
			}
			_, err = h.leader.RegisterJob(h.ctx, job)
			must(t, err)
			h.waitFor("one alloc", func(s *state.Snapshot) bool { return len(allocsOf(s, "agent")) == 1 })

			res, err := h.leader.registerNode(h.ctx, testNode("b", 4000, 4096))
			must(t, err)
			if len(res.EvalIDs) != 1 {
				t.Fatalf("node registration created %d evals, want 1 for the %s job", len(res.EvalIDs), typ)
			}
			h.waitFor("an alloc on the new node", func(s *state.Snapshot) bool {
				on, _ := s.AllocsByNode("node-b")
				return len(allocsOf(s, "agent")) == 2 && len(on) == 1
			})
		})
	}
}

func TestBrokerCallbacksWriteEvalStatus(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.NumWorkers = 1 })
	h.start()
	tm, err := h.leader.term()
	must(t, err)
	ev := func(id string) *structs.Evaluation {
		return &structs.Evaluation{ID: id, Namespace: structs.DefaultNamespace, JobID: "j", Type: structs.JobTypeService,
			Priority: 50, Status: structs.EvalStatusPending, TriggeredBy: structs.EvalTriggerJobRegister}
	}
	// The broker's cancel callback writes the status through Raft.
	h.leader.markEvals(tm, []*structs.Evaluation{ev("e1")}, structs.EvalStatusCancelled, "test")
	h.waitFor("e1 cancelled", func(s *state.Snapshot) bool {
		e, _ := s.EvalByID("e1")
		return e != nil && e.Status == structs.EvalStatusCancelled && e.StatusDescription == "test"
	})
	// The failure callback marks the eval failed and adds a delayed
	// follow-up.
	h.leader.evalFailed(tm, ev("e2"))
	h.waitFor("e2 failed with a follow-up", func(s *state.Snapshot) bool {
		e, _ := s.EvalByID("e2")
		if e == nil || e.Status != structs.EvalStatusFailed || e.NextEval == "" {
			return false
		}
		f, _ := s.EvalByID(e.NextEval)
		return f != nil && f.TriggeredBy == structs.EvalTriggerFailedFollowUp &&
			f.WaitUntil.Equal(h.clock.Now().Add(FailedFollowupDelay))
	})
}
