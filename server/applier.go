package server

import (
	"fmt"
	"time"

	metrics "github.com/hashicorp/go-metrics/compat"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// inflight is a plan being committed while the applier checks the next
// one: its accepted placements and stops, which the next check counts as
// if they were already in state.
type inflight struct {
	done chan struct{}
	// err is set before done is closed.
	err     error
	byNode  map[string][]*structs.Allocation
	stopped map[string]bool
}

// runPlanApplier applies plans in the order they arrive, each checked
// against the latest state. It pipelines, as Nomad's plan applier does:
// while one plan's entry commits, the next plan is checked against the
// state plus the committing plan's effects; entries are still written one
// after the other, and a plan whose predecessor failed to commit is
// checked again against the state alone.
//
// A plan that committed is let go at once rather than when the next plan
// arrives: it holds every allocation it placed, and after a large
// placement nothing else may come for a long time (100,000 placements
// kept 119 MB of the leader's live heap this way, next to the store's
// own copies).
func (l *Leader) runPlanApplier(t *term) {
	var prev *inflight
	defer func() {
		if prev != nil {
			<-prev.done
		}
	}()
	for {
		var committed <-chan struct{}
		if prev != nil {
			committed = prev.done
		}
		select {
		case <-t.ctx.Done():
			return
		case <-committed:
			prev = nil // the state is the whole truth (see applyPlan)
		case p := <-t.plans:
			prev = l.applyPlan(t, p, prev)
		}
	}
}

// submitPlan hands a plan to the applier and waits for its answer.
func (l *Leader) submitPlan(t *term, p *planSubmission) planResult {
	select {
	case t.plans <- p:
	case <-t.ctx.Done():
		return planResult{err: ErrPlanFenced}
	}
	select {
	case r := <-p.resp:
		return r
	case <-t.ctx.Done():
		return planResult{err: ErrPlanFenced}
	}
}

// applyPlan checks p against the latest state (plus prev, the plan still
// committing, if any), drops the placements that no longer fit (keeping
// the allocs they would have replaced), and starts committing the rest as
// one entry once prev has committed. p's answer is sent when its entry
// is applied. It returns the plan now in flight, if any.
func (l *Leader) applyPlan(t *term, p *planSubmission, prev *inflight) *inflight {
	if prev != nil {
		select {
		case <-prev.done:
			prev = nil // committed (or failed): state is the whole truth
		default:
		}
	}
	if t.ctx.Err() != nil {
		p.resp <- planResult{err: ErrPlanFenced}
		return prev
	}
	if l.beforePlanCheck != nil {
		l.beforePlanCheck(p)
	}
	evaluated := time.Now()
	snap := l.store().Snapshot()
	// The scheduler's kept node usage stands for reading each node the
	// plan places on (named by the node's allocs in this snapshot).
	table := l.nodeTables.kept(l.store())
	accepted, stops, rejected, err := checkPlan(snap, p, prev, table)
	metrics.MeasureSince([]string{"nomad", "plan", "evaluate"}, evaluated)
	if err == nil && prev != nil {
		<-prev.done
		if prev.err != nil {
			snap = l.store().Snapshot()
			accepted, stops, rejected, err = checkPlan(snap, p, nil, table)
		}
	}
	if err != nil {
		p.resp <- planResult{err: err}
		return nil
	}
	reqs, finished := l.planRequests(p, accepted, stops, len(rejected) == 0)
	if len(reqs) == 0 {
		l.stats.rejected.Add(uint64(len(rejected)))
		idx, err := snap.LatestIndex()
		p.resp <- planResult{index: idx, rejected: rejected, err: err}
		return nil
	}
	if t.ctx.Err() != nil {
		p.resp <- planResult{err: ErrPlanFenced}
		return nil
	}
	cur := &inflight{done: make(chan struct{}), byNode: map[string][]*structs.Allocation{}, stopped: map[string]bool{}}
	for _, a := range accepted {
		cur.byNode[a.NodeID] = append(cur.byNode[a.NodeID], a)
	}
	for _, s := range stops {
		cur.stopped[s.AllocID] = true
	}
	go func() {
		defer close(cur.done)
		applied := time.Now()
		index, err := l.commitPlan(t, reqs)
		metrics.MeasureSince([]string{"nomad", "plan", "apply"}, applied)
		if err != nil {
			cur.err = err
			p.resp <- planResult{err: fmt.Errorf("committing plan for eval %s: %w", p.evalID, err)}
			return
		}
		l.stats.plans.Add(1)
		l.stats.accepted.Add(uint64(len(accepted)))
		l.stats.rejected.Add(uint64(len(rejected)))
		metrics.IncrCounter([]string{"drover", "plan", "placements_accepted"}, float32(len(accepted)))
		metrics.IncrCounter([]string{"drover", "plan", "placements_rejected"}, float32(len(rejected)))
		if len(p.stops) > 0 {
			l.unblock(t, index)
		}
		p.resp <- planResult{index: index, rejected: rejected, finished: finished}
	}()
	return cur
}

// commitPlan writes a plan's entries in order and returns the index of the
// last. With a Raft that can enqueue, up to planEntriesInFlight entries
// are handed over at once, so that one entry replicates while the next is
// written; an entry that fails stops the rest (those before it stay
// committed, and the evaluation's next pass places what is missing).
func (l *Leader) commitPlan(t *term, reqs []*structs.ApplyPlanResultsRequest) (uint64, error) {
	enq, ok := l.raft.(Enqueuer)
	if !ok || len(reqs) == 1 {
		var index uint64
		for _, req := range reqs {
			_, i, err := l.apply(t.ctx, fsm.ApplyPlanResultsRequestType, req)
			if err != nil {
				return 0, err
			}
			index = i
		}
		return index, nil
	}
	var (
		index   uint64
		pending []func() (any, uint64, error)
	)
	wait := func() error {
		_, i, err := pending[0]()
		pending = pending[1:]
		if err != nil {
			return fmt.Errorf("server: applying %s: %w", fsm.ApplyPlanResultsRequestType, err)
		}
		index = i
		return nil
	}
	var firstErr error
	for _, req := range reqs {
		if len(pending) == planEntriesInFlight {
			if firstErr = wait(); firstErr != nil {
				break
			}
		}
		pending = append(pending, enq.Enqueue(t.ctx, fsm.ApplyPlanResultsRequestType, req))
	}
	for len(pending) > 0 {
		// Every enqueued entry is waited for, even after an error, so
		// that the applier's next check sees the state they left.
		if err := wait(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return index, firstErr
}
