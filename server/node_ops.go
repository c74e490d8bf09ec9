package server

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// EvaluateNode creates node-update evaluations for a node, as Nomad's
// `node eval` (Node.Evaluate): one per job with live allocations on it and
// one per system job, stamped here and written in one entry. A node with
// neither gets none, and nothing is written (index 0). An unknown node is
// ErrNodeNotFound.
func (l *Leader) EvaluateNode(ctx context.Context, nodeID string) (*NodeUpdateResult, error) {
	snap := l.store().Snapshot()
	n, err := snap.NodeByID(nodeID)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, fmt.Errorf("%w: %s", ErrNodeNotFound, nodeID)
	}
	evals, err := l.nodeEvals(snap, n, true)
	if err != nil {
		return nil, err
	}
	out := &NodeUpdateResult{NodeModifyIndex: n.ModifyIndex, EvalIDs: evalIDs(evals)}
	if len(evals) == 0 {
		return out, nil
	}
	if _, out.EvalCreateIndex, err = l.apply(ctx, fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals}); err != nil {
		return nil, err
	}
	return out, nil
}

// PurgeNode removes a node from the state, as Nomad's `node status -purge`
// path (Node.Deregister): the node goes in one entry, then the
// node-update evaluations of the jobs with live allocations on it (which
// the scheduler now finds on a node that is gone, so lost) and of the
// system jobs in a second. A leader that fails between the two leaves the
// allocations for the next evaluation of their jobs. The node's heartbeat
// timer is stopped; a client that still runs re-registers at its next
// heartbeat, as Nomad's. An unknown node is ErrNodeNotFound.
func (l *Leader) PurgeNode(ctx context.Context, nodeID string) (*NodeUpdateResult, error) {
	snap := l.store().Snapshot()
	n, err := snap.NodeByID(nodeID)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, fmt.Errorf("%w: %s", ErrNodeNotFound, nodeID)
	}
	evals, err := l.nodeEvals(snap, n, true)
	if err != nil {
		return nil, err
	}
	_, index, err := l.apply(ctx, fsm.NodeDeregisterRequestType, &structs.NodeDeregisterRequest{NodeIDs: []string{nodeID}})
	if err != nil {
		return nil, err
	}
	if t, err := l.term(); err == nil {
		t.beats.clear(nodeID)
	}
	out := &NodeUpdateResult{NodeModifyIndex: index, EvalIDs: evalIDs(evals)}
	if len(evals) == 0 {
		return out, nil
	}
	if _, out.EvalCreateIndex, err = l.apply(ctx, fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals}); err != nil {
		return nil, err
	}
	return out, nil
}

// EvaluateJob creates a job-register evaluation for a job, as Nomad's
// `job eval` (Job.Evaluate), stamped here; with forceReschedule the job's
// failed allocations that were not replaced, in groups whose reschedule
// policy allows it, are marked for rescheduling in the same entry. A
// periodic or parameterized job is refused (it runs nothing itself); an
// unknown job is ErrJobNotFound.
func (l *Leader) EvaluateJob(ctx context.Context, namespace, jobID string, forceReschedule bool) (*JobRegisterResponse, error) {
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	snap := l.store().Snapshot()
	j, err := snap.JobByID(namespace, jobID)
	if err != nil {
		return nil, err
	}
	if j == nil {
		return nil, fmt.Errorf("%w: %q", ErrJobNotFound, jobID)
	}
	switch {
	case j.IsPeriodic():
		return nil, fmt.Errorf("%w: can't evaluate periodic job", ErrInvalidRequest)
	case j.IsParameterized():
		return nil, fmt.Errorf("%w: can't evaluate parameterized job", ErrInvalidRequest)
	}
	now := l.clock.Now().UnixNano()
	transitions := map[string]*structs.DesiredTransition{}
	if forceReschedule {
		allocs, err := snap.AllocsByJob(namespace, jobID)
		if err != nil {
			return nil, err
		}
		force := true
		for _, a := range allocs {
			tg := j.LookupTaskGroup(a.TaskGroup)
			if tg == nil || !rescheduleEnabled(tg.ReschedulePolicy) {
				continue
			}
			if a.NextAllocation == "" && a.ClientStatus == structs.AllocClientStatusFailed && !a.DesiredTransition.ShouldForceReschedule() {
				transitions[a.ID] = &structs.DesiredTransition{ForceReschedule: &force}
			}
		}
	}
	eval := l.jobEval(namespace, jobID, j.Type, j.Priority, structs.EvalTriggerJobRegister, now)
	eval.JobModifyIndex = j.JobModifyIndex
	_, index, err := l.apply(ctx, fsm.AllocUpdateDesiredTransitionRequestType, &structs.AllocUpdateDesiredTransitionRequest{
		Allocs: transitions, Evals: []*structs.Evaluation{eval}, UpdatedAt: now})
	if err != nil {
		return nil, err
	}
	return &JobRegisterResponse{EvalID: eval.ID, EvalCreateIndex: index, JobModifyIndex: j.JobModifyIndex, JobVersion: j.Version, Index: index}, nil
}

// rescheduleEnabled reports whether a reschedule policy reschedules at
// all, as Nomad's ReschedulePolicy.Enabled.
func rescheduleEnabled(p *structs.ReschedulePolicy) bool {
	return p != nil && (p.Unlimited || p.Attempts > 0)
}
