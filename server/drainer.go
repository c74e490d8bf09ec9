package server

import (
	"context"
	"errors"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/drainer"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// drainRetry is how long the drainer waits after a failed read or write
// before it looks again, when nothing changes meanwhile.
const drainRetry = time.Second

// runDrainer empties the draining nodes for one term: each pass reads the
// draining nodes, their allocations and those of their jobs from one
// snapshot, decides with drainer.Decide and writes the decision; then it
// sleeps until what it read changes or the next drain deadline comes (on
// the leader's clock). It keeps nothing between passes that the state
// does not hold, so a new leader picks a drain up where the old one left
// it.
func (l *Leader) runDrainer(t *term) {
	log := l.logger.Named("drainer")
	for {
		ws := memdb.NewWatchSet()
		wake, err := l.drainPass(t.ctx, ws)
		if t.ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Error("drain pass", "error", err)
			wake = l.clock.Now().Add(drainRetry)
		}
		if !l.drainWait(t.ctx, ws, wake) {
			return
		}
	}
}

// drainWait blocks until something in ws changes, wake comes, or ctx
// ends (false).
func (l *Leader) drainWait(ctx context.Context, ws memdb.WatchSet, wake time.Time) bool {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changed := ws.WatchCh(wctx)
	var fire <-chan time.Time
	if !wake.IsZero() {
		tm := watcherClock{l.clock}.NewTimer(wake.Sub(l.clock.Now()))
		defer tm.Stop()
		if !l.clock.Now().Before(wake) {
			// The clock passed wake while the timer was armed (a test's
			// clock moved at that moment): look again now.
			return true
		}
		fire = tm.C()
	}
	select {
	case <-ctx.Done():
		return false
	case <-changed:
	case <-fire:
	}
	return true
}

// drainInput reads what drainer.Decide needs, watching it in ws: the
// nodes; the allocations on the draining ones; and the jobs of those that
// still run, with all their allocations (a group's moves count across
// nodes) and whether an evaluation of theirs waits. It reports false when
// no node is draining.
func (l *Leader) drainInput(ws memdb.WatchSet, now time.Time) (drainer.Input, bool, error) {
	in := drainer.Input{Now: now, Pending: map[drainer.JobRef]bool{}, Latest: map[drainer.JobRef]drainer.EvalMark{}}
	store := l.store()
	ws.Add(store.AbandonCh())
	snap := store.Snapshot().WithWatch(ws)
	nodes, err := snap.Nodes()
	if err != nil {
		return in, false, err
	}
	in.Nodes = nodes
	draining := false
	seen := map[string]bool{}
	add := func(a *structs.Allocation) {
		if !seen[a.ID] {
			seen[a.ID] = true
			in.Allocs = append(in.Allocs, a)
		}
	}
	jobs := map[drainer.JobRef]bool{}
	var refs []drainer.JobRef
	for _, n := range nodes {
		if n.DrainStrategy == nil {
			continue
		}
		draining = true
		allocs, err := snap.AllocsByNode(n.ID)
		if err != nil {
			return in, false, err
		}
		for _, a := range allocs {
			add(a)
			ref := drainer.JobRef{Namespace: nsOr(a.Namespace), ID: a.JobID}
			if !a.TerminalStatus() && !jobs[ref] {
				jobs[ref] = true
				refs = append(refs, ref)
			}
		}
	}
	if !draining {
		return in, false, nil
	}
	for _, ref := range refs {
		job, err := snap.JobByID(ref.Namespace, ref.ID)
		if err != nil {
			return in, false, err
		}
		if job != nil {
			in.Jobs = append(in.Jobs, job)
		}
		allocs, err := snap.AllocsByJob(ref.Namespace, ref.ID)
		if err != nil {
			return in, false, err
		}
		for _, a := range allocs {
			add(a)
		}
		evals, err := snap.EvalsByJob(ref.Namespace, ref.ID)
		if err != nil {
			return in, false, err
		}
		var mark drainer.EvalMark
		for _, e := range evals {
			if e.DueBy(now) {
				in.Pending[ref] = true
			}
			mark.CreateIndex = max(mark.CreateIndex, e.CreateIndex)
			if at := time.Unix(0, e.CreateTime); at.After(mark.CreateTime) {
				mark.CreateTime = at
			}
		}
		in.Latest[ref] = mark
	}
	return in, true, nil
}

// drainPass decides once and writes the decision; it returns the next
// deadline to wake at.
func (l *Leader) drainPass(ctx context.Context, ws memdb.WatchSet) (time.Time, error) {
	now := l.clock.Now()
	in, any, err := l.drainInput(ws, now)
	if err != nil || !any {
		return time.Time{}, err
	}
	dec := drainer.Decide(in)
	if dec.Empty() {
		return dec.WakeAt, nil
	}
	if err := l.writeDrainDecision(ctx, in, dec, now); err != nil {
		return time.Time{}, err
	}
	return dec.WakeAt, nil
}

// writeDrainDecision writes the marks with their evaluations in one entry
// (or the evaluations alone), then each completed drain in its own.
func (l *Leader) writeDrainDecision(ctx context.Context, in drainer.Input, dec drainer.Decision, now time.Time) error {
	jobs := map[drainer.JobRef]*structs.Job{}
	for _, j := range in.Jobs {
		jobs[drainer.JobRef{Namespace: nsOr(j.Namespace), ID: j.ID}] = j
	}
	var evals []*structs.Evaluation
	for _, e := range dec.Evals {
		ev := l.jobEval(e.Namespace, e.ID, e.Type, e.Priority, structs.EvalTriggerNodeDrain, now.UnixNano())
		if j := jobs[e.JobRef]; j != nil {
			ev.JobModifyIndex = j.JobModifyIndex
		}
		evals = append(evals, ev)
	}
	switch {
	case len(dec.Migrate) > 0:
		req := &structs.AllocUpdateDesiredTransitionRequest{
			Allocs: map[string]*structs.DesiredTransition{}, Evals: evals, UpdatedAt: now.UnixNano(),
		}
		for _, id := range dec.Migrate {
			yes := true
			req.Allocs[id] = &structs.DesiredTransition{Migrate: &yes}
		}
		if _, _, err := l.apply(ctx, fsm.AllocUpdateDesiredTransitionRequestType, req); err != nil {
			return err
		}
	case len(evals) > 0:
		if _, _, err := l.apply(ctx, fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals}); err != nil {
			return err
		}
	}
	for _, d := range dec.Done {
		ev := &structs.NodeEvent{Message: structs.NodeDrainEventComplete, Subsystem: structs.NodeEventSubsystemDrain, Timestamp: now.UTC()}
		if d.Deadlined {
			ev.Details = map[string]string{structs.NodeDrainEventDetailDeadlined: "true"}
		}
		_, _, err := l.apply(ctx, fsm.NodeUpdateDrainRequestType, &structs.NodeUpdateDrainRequest{
			NodeID: d.NodeID, DrainComplete: true, DrainStartedAt: d.StartedAt,
			NodeEvents: []*structs.NodeEvent{ev}, UpdatedAt: now.UnixNano(),
		})
		if err != nil && !errors.Is(err, state.ErrConflict) {
			// A conflict is a drain changed meanwhile: the next pass
			// reads it.
			return err
		}
	}
	return nil
}

func nsOr(ns string) string {
	if ns == "" {
		return structs.DefaultNamespace
	}
	return ns
}
