package server

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	metrics "github.com/hashicorp/go-metrics/compat"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/scheduler"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// waitIndexTimeout bounds how long a worker waits for the local state to
// catch up with an index it was told about.
const waitIndexTimeout = 30 * time.Second

// runWorker schedules evaluations of w's types from the broker until the
// term ends or the pool removes w (workers.go); a removed worker finishes
// the evaluation it holds.
func (l *Leader) runWorker(t *term, w *worker) {
	log := l.logger.Named("worker").With("worker", w.id)
	for {
		eval, token, err := t.broker.Dequeue(w.ctx, w.types)
		if err != nil {
			return // the term ended (ctx done or broker disabled), or w was removed
		}
		w.busy.Store(true)
		err = l.process(t, eval)
		w.busy.Store(false)
		if err != nil {
			if t.ctx.Err() != nil {
				return
			}
			log.Error("evaluation failed", "eval_id", eval.ID, "job_id", eval.JobID, "error", err)
			if err := t.broker.Nack(eval.ID, token); err != nil {
				log.Warn("nack", "eval_id", eval.ID, "error", err)
			}
			continue
		}
		l.stats.evals.Add(1)
		if err := t.broker.Ack(eval.ID, token); err != nil {
			log.Warn("ack", "eval_id", eval.ID, "error", err)
		}
	}
}

// pass is one scheduling attempt's outcome.
type pass struct {
	snapIndex uint64
	job       *structs.Job
	placed    *scheduler.PlaceResult
	rejected  int
	// afterOutcome, when set, runs once the outcome submitted with the
	// plan is written.
	afterOutcome func()
}

// process schedules one evaluation: reconcile, place, submit, re-plan
// while the applier rejects placements (bounded), then write the
// evaluation's outcome, unless it was written with the plan.
func (l *Leader) process(t *term, eval *structs.Evaluation) error {
	if err := l.waitIndex(t.ctx, eval.ModifyIndex); err != nil {
		return err
	}
	var last pass
	exhausted := true
	for attempt := 0; attempt < l.cfg.MaxPlanAttempts; attempt++ {
		p, res, err := l.plan(t, eval, attempt)
		if err != nil {
			return err
		}
		last = p
		if res.finished {
			if p.afterOutcome != nil {
				p.afterOutcome()
			}
			return nil
		}
		if len(res.rejected) == 0 {
			exhausted = false
			break
		}
		l.logger.Debug("placements rejected, planning again", "eval_id", eval.ID, "rejected", len(res.rejected), "attempt", attempt+1)
		if err := l.waitIndex(t.ctx, res.index); err != nil {
			return err
		}
	}
	return l.finishEval(t, eval, last, exhausted)
}

// plan makes one attempt against a fresh snapshot.
func (l *Leader) plan(t *term, eval *structs.Evaluation, attempt int) (pass, planResult, error) {
	st := l.store()
	snap := st.Snapshot()
	var p pass
	var err error
	if p.snapIndex, err = snap.LatestIndex(); err != nil {
		return p, planResult{}, err
	}
	// The job's memo makes the pass cost what changed since its last
	// one: it reads the allocs written since, and the plan is the full
	// pass's (scheduler.ReconcileMemo).
	ns := namespaceOf(eval)
	memo := l.memos.take(ns, eval.JobID)
	in, err := l.input(st, snap, eval, func() ([]*structs.Allocation, error) {
		return l.memos.allocs(st, snap, memo, ns, eval.JobID)
	})
	if err != nil {
		return p, planResult{}, err
	}
	p.job = in.Job
	scheduled := time.Now()
	plan := l.reconcileMemo(snap, ns, in, memo.Memo)
	memo.store, memo.index = st, p.snapIndex
	l.memos.put(ns, eval.JobID, memo)
	if len(plan.Place) > 0 && in.Job != nil {
		// The placer reads a node's allocs from the same snapshot only
		// when a placement looks at the node.
		placer := scheduler.NewPlacerLazyTableVersioned(in.Table, ns, eval.JobID, in.Allocs, snap.LiveAllocsByNodeVersion, seedOf(eval.ID, attempt))
		// The scheduler configuration of the same snapshot: its algorithm
		// and whether memory_max is honoured.
		sc, err := snap.EffectiveSchedulerConfig()
		if err != nil {
			return p, planResult{}, err
		}
		placer.Spread, placer.NoMemoryOversubscription = sc.Spread(), !sc.MemoryOversubscriptionEnabled
		p.placed = placer.Place(in.Job, plan, in.Now)
		for _, err := range placer.LoadErrors() {
			l.logger.Warn("node left out of placement", "eval_id", eval.ID, "error", err)
		}
	}
	measureScheduler(eval.Type, scheduled)
	sub := newSubmission(in.Job, plan, p.placed, in.Allocs)
	if sub.noop() {
		return p, planResult{index: p.snapIndex}, nil
	}
	sub.outcome, p.afterOutcome = l.evalOutcome(t, eval, p, false)
	submitted := time.Now()
	res := l.submitPlan(t, sub)
	metrics.MeasureSince([]string{"nomad", "plan", "submit"}, submitted)
	if res.err != nil {
		return p, res, res.err
	}
	p.rejected = len(res.rejected)
	return p, res, nil
}

// input reads what the reconciler needs from one snapshot: the job, its
// latest deployment, the nodes and the job's allocations. The rest of the
// cluster's allocations are left to the placer, which reads them node by
// node as it needs them.
//
// readAllocs, when set, reads the job's live allocations in ID order in
// place of the job index (passMemos.allocs).
func (l *Leader) input(st *state.Store, snap *state.Snapshot, eval *structs.Evaluation, readAllocs func() ([]*structs.Allocation, error)) (scheduler.Input, error) {
	ns := namespaceOf(eval)
	in := scheduler.Input{JobID: eval.JobID, Now: l.clock.Now(), IDs: l.newID, EvalID: eval.ID, EvalPriority: eval.Priority}
	var err error
	if in.Job, err = snap.JobByID(ns, eval.JobID); err != nil {
		return in, err
	}
	if in.Deployment, err = snap.LatestDeploymentByJob(ns, eval.JobID); err != nil {
		return in, err
	}
	if in.Table, err = l.nodeTables.get(st, snap); err != nil {
		return in, err
	}
	in.Nodes = in.Table.Nodes()
	if readAllocs == nil {
		readAllocs = func() ([]*structs.Allocation, error) { return jobAllocs(snap, ns, eval.JobID) }
	}
	if in.Allocs, err = readAllocs(); err != nil {
		return in, err
	}
	if in.Job != nil && !scheduler.RanVersion(in.Allocs, in.Job) {
		// Rare: the first passes of a new version. Only then are the
		// stopped allocs read.
		stopped, err := snap.StoppedAllocsByJob(ns, eval.JobID)
		if err != nil {
			return in, err
		}
		in.StoppedRanVersion = scheduler.RanVersion(stopped, in.Job)
	}
	return in, nil
}

// namespaceOf is the evaluation's namespace, the default when unset.
func namespaceOf(eval *structs.Evaluation) string {
	if eval.Namespace == "" {
		return structs.DefaultNamespace
	}
	return eval.Namespace
}

// jobAllocs reads the job's live allocations (those the servers have not
// stopped or evicted) through the store's job index, in ID order: the
// order the reconciler is given (its plan may depend on it). The stopped
// ones, which stay until collected (a rollout's replaced allocs are half
// of the job's), are left out: the reconciler and the placer skip them.
// The index orders them by ID: its keys end with the ID (state's
// TestLiveAllocIndexes reads them in ID order), and the job's memo
// (scheduler.ReconcileMemo) walks them in that order. A check here cost a
// tenth of a rollout's pass: it read every alloc's ID.
func jobAllocs(snap *state.Snapshot, namespace, jobID string) ([]*structs.Allocation, error) {
	return snap.LiveAllocsByJob(namespace, jobID)
}

func seedOf(id string, attempt int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return h.Sum64() + uint64(attempt)
}

// finishEval writes the evaluation's outcome (see evalOutcome) as an
// entry of its own.
func (l *Leader) finishEval(t *term, eval *structs.Evaluation, last pass, exhausted bool) error {
	out, after := l.evalOutcome(t, eval, last, exhausted)
	if _, _, err := l.apply(t.ctx, fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: out}); err != nil {
		return err
	}
	if after != nil {
		after()
	}
	return nil
}

// evalOutcome returns the evaluation updates that finish eval after its
// last pass: complete with the queued allocations; with placements that
// found no node, also a blocked evaluation that capacity changes wake (as
// Nomad does); after too many rejected plans, failed with a follow-up.
// Once everything is placed, a blocked evaluation of the job is moot: it
// is cancelled, and after (to run once the updates are written) stops
// tracking it.
func (l *Leader) evalOutcome(t *term, eval *structs.Evaluation, last pass, exhausted bool) ([]*structs.Evaluation, func()) {
	now := l.clock.Now()
	e := eval.Copy()
	e.SnapshotIndex = last.snapIndex
	e.ModifyTime = now.UnixNano()
	e.Status = structs.EvalStatusComplete
	e.StatusDescription = ""
	e.FailedTGAllocs = nil
	e.QueuedAllocations = queued(last)
	out := []*structs.Evaluation{e}
	ns := e.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	var after func()
	switch {
	case exhausted:
		follow := l.followupEval(eval, structs.EvalTriggerMaxPlans, now.Add(MaxPlansFollowupDelay))
		e.Status = structs.EvalStatusFailed
		e.StatusDescription = fmt.Sprintf("maximum attempts reached (%d)", l.cfg.MaxPlanAttempts)
		e.NextEval = follow.ID
		out = append(out, follow)
	case last.placed != nil && len(last.placed.Failed) > 0 && !last.job.Stopped():
		e.FailedTGAllocs = last.placed.Failed
		b := l.followupEval(eval, structs.EvalTriggerQueuedAllocs, time.Time{})
		b.Status = structs.EvalStatusBlocked
		b.StatusDescription = "created to place remaining allocations"
		b.SnapshotIndex = last.snapIndex
		b.QueuedAllocations = e.QueuedAllocations
		e.BlockedEval = b.ID
		out = append(out, b)
	default:
		if b, ok := t.blocked.Tracked(ns, eval.JobID); ok && b.ID != eval.ID {
			c := b.Copy()
			c.Status = structs.EvalStatusCancelled
			c.StatusDescription = "allocations placed by a later evaluation"
			c.ModifyTime = now.UnixNano()
			out = append(out, c)
			after = func() {
				if cur, ok := t.blocked.Tracked(ns, eval.JobID); ok && cur.ID == b.ID {
					t.blocked.Untrack(ns, eval.JobID)
				}
			}
		}
	}
	return out, after
}

// queued counts, per group, the placements that found no node.
func queued(p pass) map[string]int {
	m := map[string]int{}
	if p.job != nil {
		for _, tg := range p.job.TaskGroups {
			if tg != nil {
				m[tg.Name] = 0
			}
		}
	}
	if p.placed != nil {
		for _, pl := range p.placed.Unplaced {
			m[pl.TaskGroup]++
		}
	}
	return m
}

// waitIndex waits until the local state has applied index.
func (l *Leader) waitIndex(ctx context.Context, index uint64) error {
	if index == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, waitIndexTimeout)
	defer cancel()
	for {
		s := l.store()
		_, got, err := s.BlockingQuery(ctx, index-1, 0, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
			i, err := snap.LatestIndex()
			return nil, i, err
		})
		if err != nil {
			return err
		}
		if got >= index {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("server: waiting for index %d: %w", index, errors.Join(err, context.Cause(ctx)))
		}
	}
}
