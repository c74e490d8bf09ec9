package server

import (
	"testing"

	"github.com/droverhq/drover/structs"
)

// A registration and a deregistration that ask for an evaluation
// priority (Nomad's EvalPriority) get it on their evaluation; without,
// the evaluation has the job's priority.
func TestEvalPriorityOfRegistrationAndDeregistration(t *testing.T) {
	h := newHarness(t)
	h.start()
	job := testJob("web", 1, 100)
	job.Priority = 40
	reg, err := h.leader.RegisterJob(structs.WithEvalPriority(h.ctx, 99), job)
	must(t, err)
	plain, err := h.leader.RegisterJob(h.ctx, job)
	must(t, err)
	dereg, err := h.leader.DeregisterJob(structs.WithEvalPriority(h.ctx, 97), "", "web", false)
	must(t, err)
	snap := h.store().Snapshot()
	for id, want := range map[string]int{reg.EvalID: 99, plain.EvalID: 40, dereg.EvalID: 97} {
		e, err := snap.EvalByID(id)
		if err != nil || e == nil || e.Priority != want {
			t.Errorf("eval %s: %+v %v, want priority %d", id, e, err, want)
		}
	}
	if err := structs.CheckEvalPriority(101); err == nil {
		t.Error("eval priority 101 accepted")
	}
}
