package server

import (
	"fmt"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// runPlanApplier applies plans one at a time, each against the latest
// state, until the term ends.
func (l *Leader) runPlanApplier(t *term) {
	for {
		select {
		case <-t.ctx.Done():
			return
		case p := <-t.plans:
			p.resp <- l.applyPlan(t, p)
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

// applyPlan checks the plan's placements against the latest state, drops
// those that no longer fit (keeping the allocs they would have replaced),
// and commits the rest as one entry.
func (l *Leader) applyPlan(t *term, p *planSubmission) planResult {
	if t.ctx.Err() != nil {
		return planResult{err: ErrPlanFenced}
	}
	if l.beforePlanCheck != nil {
		l.beforePlanCheck(p)
	}
	snap := l.store().Snapshot()
	accepted, stops, rejected, err := checkPlan(snap, p)
	if err != nil {
		return planResult{err: err}
	}
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
	if len(req.AllocsPlaced) == 0 && len(req.AllocsUpdated) == 0 && len(req.AllocsStopped) == 0 &&
		req.Deployment == nil && len(req.DeploymentUpdates) == 0 && len(req.FollowupEvals) == 0 {
		l.stats.rejected.Add(uint64(len(rejected)))
		idx, err := snap.LatestIndex()
		return planResult{index: idx, rejected: rejected, err: err}
	}
	if t.ctx.Err() != nil {
		return planResult{err: ErrPlanFenced}
	}
	_, index, err := l.apply(t.ctx, fsm.ApplyPlanResultsRequestType, req)
	if err != nil {
		return planResult{err: fmt.Errorf("committing plan for eval %s: %w", p.evalID, err)}
	}
	l.stats.plans.Add(1)
	l.stats.accepted.Add(uint64(len(accepted)))
	l.stats.rejected.Add(uint64(len(rejected)))
	if len(p.stops) > 0 {
		l.unblock(t, index)
	}
	return planResult{index: index, rejected: rejected}
}

// nodeUsage is one node's reservations as the applier checks them.
type nodeUsage struct {
	usable  bool
	free    structs.ComparableResources
	ports   map[int]bool
	counted map[string]*structs.Allocation
}

func (u *nodeUsage) add(a *structs.Allocation, sign int64) {
	c := a.AllocatedResources.Comparable()
	u.free.CPU -= sign * c.CPU
	u.free.MemoryMB -= sign * c.MemoryMB
	u.free.DiskMB -= sign * c.DiskMB
	for _, p := range allocPorts(a) {
		u.ports[p] = sign > 0
	}
	if sign > 0 {
		u.counted[a.ID] = a
	} else {
		delete(u.counted, a.ID)
	}
}

func allocPorts(a *structs.Allocation) []int {
	if a.AllocatedResources == nil {
		return nil
	}
	out := make([]int, 0, len(a.AllocatedResources.Shared.Ports))
	for _, p := range a.AllocatedResources.Shared.Ports {
		out = append(out, p.Value)
	}
	return out
}

// checkPlan re-checks every placement against snap: the node exists and
// is ready and eligible, and the alloc fits in what is left of it given
// the node's live allocs, minus those this plan stops, plus those it has
// already accepted, with its ports free. It returns the accepted
// placements, every stop to apply (the plan's own plus those replaced by
// accepted placements) and the IDs of rejected placements.
func checkPlan(snap *state.Snapshot, p *planSubmission) ([]*structs.Allocation, []*structs.AllocStopUpdate, []string, error) {
	stopping := make(map[string]bool, len(p.stops))
	for _, s := range p.stops {
		stopping[s.AllocID] = true
	}
	nodes := map[string]*nodeUsage{}
	load := func(id string) (*nodeUsage, error) {
		if u := nodes[id]; u != nil {
			return u, nil
		}
		u := &nodeUsage{ports: map[int]bool{}, counted: map[string]*structs.Allocation{}}
		nodes[id] = u
		n, err := snap.NodeByID(id)
		if err != nil {
			return nil, err
		}
		if n == nil || !n.Ready() {
			return u, nil
		}
		u.usable = true
		u.free = n.Capacity()
		allocs, err := snap.AllocsByNode(id)
		if err != nil {
			return nil, err
		}
		for _, a := range allocs {
			if a.TerminalStatus() || stopping[a.ID] {
				continue
			}
			u.add(a, 1)
		}
		return u, nil
	}
	stops := append([]*structs.AllocStopUpdate(nil), p.stops...)
	var accepted []*structs.Allocation
	var rejected []string
	for _, a := range p.placed {
		u, err := load(a.NodeID)
		if err != nil {
			return nil, nil, nil, err
		}
		if !u.usable {
			rejected = append(rejected, a.ID)
			continue
		}
		rep := p.replaces[a.ID]
		var freed *structs.Allocation
		if rep != nil {
			if old := u.counted[rep.AllocID]; old != nil {
				freed = old
				u.add(old, -1)
			}
		}
		if fits(u, a) {
			u.add(a, 1)
			accepted = append(accepted, a)
			if rep != nil {
				stops = append(stops, rep)
			}
			continue
		}
		if freed != nil {
			u.add(freed, 1)
		}
		rejected = append(rejected, a.ID)
	}
	return accepted, stops, rejected, nil
}

func fits(u *nodeUsage, a *structs.Allocation) bool {
	if ok, _ := a.AllocatedResources.Comparable().Fits(u.free); !ok {
		return false
	}
	for _, p := range allocPorts(a) {
		if u.ports[p] {
			return false
		}
	}
	return true
}
