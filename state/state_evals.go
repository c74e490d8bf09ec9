package state

import (
	"fmt"
	"slices"
	"strings"

	"github.com/droverhq/drover/structs"
)

// UpsertEvals inserts evaluations or replaces them by ID.
func (s *Store) UpsertEvals(index uint64, evals []*structs.Evaluation) error {
	return s.update(index, func(t *WriteTxn) error { return s.UpsertEvalsTxn(t, evals) })
}

// UpsertEvalsTxn is UpsertEvals inside t. A replaced eval keeps its
// CreateIndex; the job's status is re-derived.
func (s *Store) UpsertEvalsTxn(t *WriteTxn, evals []*structs.Evaluation) error {
	for _, e := range evals {
		if err := s.upsertEval(t, e); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) upsertEval(t *WriteTxn, eval *structs.Evaluation) error {
	if eval == nil || eval.ID == "" {
		return fmt.Errorf("state: eval without ID: %w", ErrInvalid)
	}
	existing, err := t.reader().EvalByID(eval.ID)
	if err != nil {
		return err
	}
	e := eval.Copy()
	if e.Namespace == "" {
		e.Namespace = structs.DefaultNamespace
	}
	e.CreateIndex = t.index
	if existing != nil {
		e.CreateIndex = existing.CreateIndex
	}
	e.ModifyIndex = t.index
	if err := t.insert(TableEvals, e); err != nil {
		return err
	}
	t.countEvalSummary(existing, e)
	t.touchJob(e.Namespace, e.JobID)
	return nil
}

// Reap deletes evaluations and allocations; see ReapTxn.
func (s *Store) Reap(index uint64, req *structs.EvalReapRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.ReapTxn(t, req) })
}

// ReapTxn deletes the request's evaluations, allocations and terminal
// deployments (garbage collection); IDs no longer stored, and active
// deployments, are skipped. The jobs concerned have
// their status re-derived; one left with nothing is dead (as Nomad), not
// pending.
func (s *Store) ReapTxn(t *WriteTxn, req *structs.EvalReapRequest) error {
	for _, id := range req.Evals {
		e, err := t.reader().EvalByID(id)
		if err != nil {
			return err
		}
		if e == nil {
			continue
		}
		if err := t.delete(TableEvals, e); err != nil {
			return err
		}
		t.countEvalSummary(e, nil)
		t.touchReapedJob(e.Namespace, e.JobID)
	}
	if err := s.deleteAllocsTxn(t, req.Allocs); err != nil {
		return err
	}
	for _, id := range req.Deployments {
		d, err := t.reader().DeploymentByID(id)
		if err != nil {
			return err
		}
		// An active deployment is never collected, whatever the
		// request says: its watcher still decides on it.
		if d == nil || d.Active() {
			continue
		}
		if err := t.delete(TableDeployments, d); err != nil {
			return err
		}
	}
	return nil
}

// EvalByID returns the evaluation, or nil.
func (s *Snapshot) EvalByID(id string) (*structs.Evaluation, error) {
	return getOne[*structs.Evaluation](s, TableEvals, "id", id)
}

// Evals returns every evaluation, by ID.
func (s *Snapshot) Evals() ([]*structs.Evaluation, error) {
	return list[*structs.Evaluation](s, TableEvals, "id")
}

// EvalsModifiedAfter returns the evaluations written at an index above
// index, in the order of their writes: what changed in the table since a
// reader saw it at index, without reading the rest. Deleted evaluations
// are not reported.
func (s *Snapshot) EvalsModifiedAfter(index uint64) ([]*structs.Evaluation, error) {
	it, err := s.txn.LowerBound(TableEvals, "modify", index+1)
	if err != nil {
		return nil, fmt.Errorf("state: evals lookup: %w", err)
	}
	var out []*structs.Evaluation
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*structs.Evaluation))
	}
	return out, nil
}

// EvalsByJob returns the job's evaluations, by ID.
func (s *Snapshot) EvalsByJob(namespace, jobID string) ([]*structs.Evaluation, error) {
	out, err := list[*structs.Evaluation](s, TableEvals, "job", namespace, jobID)
	if err != nil {
		return nil, err
	}
	// The job index lists the pending ones first, the finished ones by
	// CreateIndex.
	slices.SortFunc(out, func(a, b *structs.Evaluation) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// PendingEvalsByJob returns the job's evaluations that have not finished
// (pending or blocked), by CreateIndex.
func (s *Snapshot) PendingEvalsByJob(namespace, jobID string) ([]*structs.Evaluation, error) {
	return list[*structs.Evaluation](s, TableEvals, "job", namespace, jobID, true)
}

// LatestFinishedEvalByJob returns the job's finished evaluation (complete,
// failed or cancelled) with the highest CreateIndex, or nil, without
// reading the others.
func (s *Snapshot) LatestFinishedEvalByJob(namespace, jobID string) (*structs.Evaluation, error) {
	it, err := s.txn.GetReverse(TableEvals, "job", namespace, jobID, false)
	if err != nil {
		return nil, fmt.Errorf("state: %s lookup: %w", TableEvals, err)
	}
	s.watch(it.WatchCh())
	if obj := it.Next(); obj != nil {
		return obj.(*structs.Evaluation), nil
	}
	return nil, nil
}

// EvalsByIDPrefix returns the evaluations whose ID starts with prefix.
func (s *Snapshot) EvalsByIDPrefix(prefix string) ([]*structs.Evaluation, error) {
	return list[*structs.Evaluation](s, TableEvals, "id_prefix", prefix)
}
