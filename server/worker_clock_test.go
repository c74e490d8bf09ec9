package server

import (
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// TestWorkerKeepsEvalWhileClockJumps: the schedule's clock moving past
// the visibility timeout while a worker is in the middle of a pass (its
// plan held in Raft) does not take the evaluation back. Before the
// broker measured that timeout on the process's own time, the worker's
// ack was refused ("evaluation not outstanding"), the evaluation sat
// waiting for a redelivery the stopped clock never brought, and held its
// job's slot: the job's next evaluation was never scheduled.
func TestWorkerKeepsEvalWhileClockJumps(t *testing.T) {
	h := newHarness(t)
	h.start()
	_, _, err := h.leader.RegisterNode(h.ctx, testNode("a", 8000, 8192))
	must(t, err)

	entered, release := h.raft.holdFirst(fsm.ApplyPlanResultsRequestType)
	_, err = h.leader.RegisterJob(h.ctx, testJob("web", 2, 100))
	must(t, err)
	select {
	case <-entered:
	case <-time.After(testTimeout):
		t.Fatal("the first plan never reached Raft")
	}
	beatFor(t, h, 65*time.Second, "") // past the 60s visibility timeout, the node alive
	close(release)
	h.waitFor("two allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 2 })
	h.idle()

	_, err = h.leader.RegisterJob(h.ctx, testJob("web", 3, 100))
	must(t, err)
	h.waitFor("the job's next evaluation scheduled", func(s *state.Snapshot) bool {
		evals, _ := s.Evals()
		done := 0
		for _, e := range evals {
			if e.JobID == "web" && e.Status == structs.EvalStatusComplete {
				done++
			}
		}
		return len(allocsOf(s, "web")) == 3 && done == 2
	})
}
