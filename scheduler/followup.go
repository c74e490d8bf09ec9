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

// flushFollowups creates one follow-up evaluation per batch of delayed
// allocs of one kind (a reschedule, a disconnected client's time) due
// within followupBatchWindow of the batch's first, and links each alloc
// to its evaluation.
func (r *reconciler) flushFollowups() {
	f := r.followups
	sort.SliceStable(f, func(i, j int) bool { return f[i].at.Before(f[j].at) })
	cur := map[string]*structs.Evaluation{}
	for _, p := range f {
		e := cur[p.trigger]
		if e == nil || p.at.Sub(e.WaitUntil) > followupBatchWindow {
			trigger, desc := structs.EvalTriggerRetryFailedAlloc, "created for delayed rescheduling"
			if p.trigger != "" {
				trigger, desc = p.trigger, "created for a disconnected client's allocations"
			}
			e = &structs.Evaluation{
				ID:                r.in.IDs(),
				Namespace:         r.job.Namespace,
				Priority:          r.in.EvalPriority,
				Type:              r.job.Type,
				TriggeredBy:       trigger,
				JobID:             r.job.ID,
				JobModifyIndex:    r.job.JobModifyIndex,
				Status:            structs.EvalStatusPending,
				StatusDescription: desc,
				WaitUntil:         p.at,
				PreviousEval:      r.in.EvalID,
				CreateTime:        r.in.Now.UnixNano(),
				ModifyTime:        r.in.Now.UnixNano(),
			}
			cur[p.trigger] = e
			r.plan.FollowupEvals = append(r.plan.FollowupEvals, e)
		}
		r.plan.FollowupAllocs = append(r.plan.FollowupAllocs, FollowupLink{AllocID: p.alloc.ID, EvalID: e.ID})
	}
}
