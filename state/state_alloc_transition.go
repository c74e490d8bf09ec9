package state

import (
	"slices"

	"github.com/droverhq/drover/structs"
)

// UpdateAllocDesiredTransition marks allocations for a transition; see
// UpdateAllocDesiredTransitionTxn.
func (s *Store) UpdateAllocDesiredTransition(index uint64, req *structs.AllocUpdateDesiredTransitionRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.UpdateAllocDesiredTransitionTxn(t, req) })
}

// UpdateAllocDesiredTransitionTxn merges each request's DesiredTransition
// into its allocation (fields the request sets replace the stored ones;
// unset fields are kept) and stores the request's evaluations, in t.
// Unknown allocations are skipped (they may have been collected). Written
// allocations get ModifyIndex = the raft index and ModifyTime =
// req.UpdatedAt.
func (s *Store) UpdateAllocDesiredTransitionTxn(t *WriteTxn, req *structs.AllocUpdateDesiredTransitionRequest) error {
	ids := make([]string, 0, len(req.Allocs))
	for id := range req.Allocs {
		ids = append(ids, id)
	}
	slices.Sort(ids) // map order must not leak into the log's effects
	for _, id := range ids {
		tr := req.Allocs[id]
		if tr == nil {
			continue
		}
		existing, err := t.reader().AllocByID(id)
		if err != nil {
			return err
		}
		if existing == nil {
			continue
		}
		a := rewrite(existing)
		merged := a.DesiredTransition.Copy()
		in := tr.Copy()
		if in.Migrate != nil {
			merged.Migrate = in.Migrate
		}
		if in.Reschedule != nil {
			merged.Reschedule = in.Reschedule
		}
		if in.ForceReschedule != nil {
			merged.ForceReschedule = in.ForceReschedule
		}
		if in.NoShutdownDelay != nil {
			merged.NoShutdownDelay = in.NoShutdownDelay
		}
		a.DesiredTransition = merged
		a.ModifyIndex = t.index
		a.ModifyTime = req.UpdatedAt
		if err := t.putAlloc(existing, a); err != nil {
			return err
		}
		t.touchJob(a.Namespace, a.JobID)
	}
	return s.UpsertEvalsTxn(t, req.Evals)
}
