package server

import (
	"fmt"

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
func (l *Leader) runPlanApplier(t *term) {
	var prev *inflight
	defer func() {
		if prev != nil {
			<-prev.done
		}
	}()
	for {
		select {
		case <-t.ctx.Done():
			return
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
	snap := l.store().Snapshot()
	accepted, stops, rejected, err := checkPlan(snap, p, prev)
	if err == nil && prev != nil {
		<-prev.done
		if prev.err != nil {
			snap = l.store().Snapshot()
			accepted, stops, rejected, err = checkPlan(snap, p, nil)
		}
	}
	if err != nil {
		p.resp <- planResult{err: err}
		return nil
	}
	req := l.planRequest(p, accepted, stops)
	if len(req.AllocsPlaced) == 0 && len(req.AllocsUpdated) == 0 && len(req.AllocsStopped) == 0 &&
		req.Deployment == nil && len(req.DeploymentUpdates) == 0 && len(req.FollowupEvals) == 0 {
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
		_, index, err := l.apply(t.ctx, fsm.ApplyPlanResultsRequestType, req)
		if err != nil {
			cur.err = err
			p.resp <- planResult{err: fmt.Errorf("committing plan for eval %s: %w", p.evalID, err)}
			return
		}
		l.stats.plans.Add(1)
		l.stats.accepted.Add(uint64(len(accepted)))
		l.stats.rejected.Add(uint64(len(rejected)))
		if len(p.stops) > 0 {
			l.unblock(t, index)
		}
		p.resp <- planResult{index: index, rejected: rejected}
	}()
	return cur
}

// planRequest builds the entry for the accepted part of p, stamped with
// the leader's time.
func (l *Leader) planRequest(p *planSubmission, accepted []*structs.Allocation, stops []*structs.AllocStopUpdate) *structs.ApplyPlanResultsRequest {
	now := l.clock.Now().UnixNano()
	req := &structs.ApplyPlanResultsRequest{
		EvalID: p.evalID, Job: p.job, AllocsStopped: stops,
		Deployment: p.deployment, DeploymentUpdates: p.deploymentUpdates,
		FollowupEvals: p.followupEvals, UpdatedAt: now,
	}
	for _, a := range accepted {
		c := *a // shallow: the entry shares the job once, through req.Job
		c.Job = nil
		c.CreateTime, c.ModifyTime = now, now
		req.AllocsPlaced = append(req.AllocsPlaced, &c)
	}
	for _, a := range p.updated {
		c := *a
		if c.Job == p.job {
			c.Job = nil
		}
		c.ModifyTime = now
		req.AllocsUpdated = append(req.AllocsUpdated, &c)
	}
	return req
}
