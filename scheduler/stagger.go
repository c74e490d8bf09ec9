package scheduler

import (
	"time"

	"github.com/droverhq/drover/structs"
)

// StaggerEvalDescription is the status description of the evaluation that
// starts a rollout's next batch once its stagger has passed.
const StaggerEvalDescription = "created to start the next batch after the update stagger"

// wakeForStagger notes that a group's next batch may start at wake (zero:
// the group does not wait for a stagger).
func (r *reconciler) wakeForStagger(wake time.Time) {
	if wake.IsZero() {
		return
	}
	if r.staggerWake.IsZero() || wake.Before(r.staggerWake) {
		r.staggerWake = wake
	}
}

// flushStagger adds the evaluation that wakes the job when the earliest
// waiting group's stagger has passed: the next batch starts exactly then,
// with no polling. A later group's wait is taken up by the pass that
// evaluation runs.
func (r *reconciler) flushStagger() {
	if r.staggerWake.IsZero() {
		return
	}
	r.plan.FollowupEvals = append(r.plan.FollowupEvals, &structs.Evaluation{
		ID:                r.in.IDs(),
		Namespace:         r.job.Namespace,
		Priority:          r.in.EvalPriority,
		Type:              r.job.Type,
		TriggeredBy:       structs.EvalTriggerRollingUpdate,
		JobID:             r.job.ID,
		JobModifyIndex:    r.job.JobModifyIndex,
		Status:            structs.EvalStatusPending,
		StatusDescription: StaggerEvalDescription,
		WaitUntil:         r.staggerWake,
		PreviousEval:      r.in.EvalID,
		CreateTime:        r.in.Now.UnixNano(),
		ModifyTime:        r.in.Now.UnixNano(),
	})
}
