package scheduler

import (
	"sort"

	"github.com/droverhq/drover/structs"
)

// queueFollowups remembers delayed reschedules; flushFollowups turns them
// into evaluations once every group is done.
func (r *reconciler) queueFollowups(f []pendingFollowup) {
	r.followups = append(r.followups, f...)
}

// flushFollowups creates one follow-up evaluation per batch of reschedules
// due within followupBatchWindow of the batch's first, and links each alloc
// to its evaluation.
func (r *reconciler) flushFollowups() {
	f := r.followups
	sort.SliceStable(f, func(i, j int) bool { return f[i].at.Before(f[j].at) })
	var cur *structs.Evaluation
	for _, p := range f {
		if cur == nil || p.at.Sub(cur.WaitUntil) > followupBatchWindow {
			cur = &structs.Evaluation{
				ID:                r.in.IDs(),
				Namespace:         r.job.Namespace,
				Priority:          r.in.EvalPriority,
				Type:              r.job.Type,
				TriggeredBy:       structs.EvalTriggerRetryFailedAlloc,
				JobID:             r.job.ID,
				JobModifyIndex:    r.job.JobModifyIndex,
				Status:            structs.EvalStatusPending,
				StatusDescription: "created for delayed rescheduling",
				WaitUntil:         p.at,
				PreviousEval:      r.in.EvalID,
				CreateTime:        r.in.Now.UnixNano(),
				ModifyTime:        r.in.Now.UnixNano(),
			}
			r.plan.FollowupEvals = append(r.plan.FollowupEvals, cur)
		}
		r.plan.FollowupAllocs = append(r.plan.FollowupAllocs, FollowupLink{AllocID: p.alloc.ID, EvalID: cur.ID})
	}
}
