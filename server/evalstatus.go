package server

import (
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// markEvals writes the evaluations with a new status, in the background
// (the broker's callbacks must not block).
func (l *Leader) markEvals(t *term, evals []*structs.Evaluation, status, desc string) {
	if len(evals) == 0 {
		return
	}
	now := l.clock.Now().UnixNano()
	out := make([]*structs.Evaluation, 0, len(evals))
	for _, e := range evals {
		c := e.Copy()
		c.Status, c.StatusDescription, c.ModifyTime = status, desc, now
		out = append(out, c)
	}
	t.spawn(func() {
		if _, _, err := l.apply(t.ctx, fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: out}); err != nil && t.ctx.Err() == nil {
			l.logger.Error("writing evaluation status", "status", status, "error", err)
		}
	})
}

// evalFailed marks an evaluation that exhausted its deliveries failed and
// creates a delayed follow-up, as Nomad does.
func (l *Leader) evalFailed(t *term, e *structs.Evaluation) {
	now := l.clock.Now()
	failed := e.Copy()
	failed.Status = structs.EvalStatusFailed
	failed.StatusDescription = "evaluation reached delivery limit"
	failed.ModifyTime = now.UnixNano()
	follow := l.followupEval(e, structs.EvalTriggerFailedFollowUp, now.Add(FailedFollowupDelay))
	failed.NextEval = follow.ID
	t.spawn(func() {
		req := &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{failed, follow}}
		if _, _, err := l.apply(t.ctx, fsm.EvalUpdateRequestType, req); err != nil && t.ctx.Err() == nil {
			l.logger.Error("writing failed evaluation", "eval_id", e.ID, "error", err)
		}
	})
}

// followupEval returns a pending evaluation continuing prev at waitUntil.
func (l *Leader) followupEval(prev *structs.Evaluation, trigger string, waitUntil time.Time) *structs.Evaluation {
	now := l.clock.Now().UnixNano()
	return &structs.Evaluation{
		ID: l.newID(), Namespace: prev.Namespace, Priority: prev.Priority, Type: prev.Type,
		TriggeredBy: trigger, JobID: prev.JobID, JobModifyIndex: prev.JobModifyIndex,
		Status: structs.EvalStatusPending, WaitUntil: waitUntil, PreviousEval: prev.ID,
		CreateTime: now, ModifyTime: now,
	}
}
