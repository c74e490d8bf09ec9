package server

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// DrainRequest is one `PUT /v1/node/{id}/drain`: set or change the node's
// drain (Spec), or remove it (Spec nil), as Nomad's NodeUpdateDrainRequest.
type DrainRequest struct {
	NodeID string
	Spec   *structs.DrainSpec
	// MarkEligible makes the node eligible again when the drain is
	// removed.
	MarkEligible bool
	Meta         map[string]string
	// AccessorID is the ACL token that asked, recorded in LastDrain.
	AccessorID string
}

// NodeUpdateResult answers a drain or eligibility update, as Nomad's
// NodeDrainUpdateResponse and NodeEligibilityUpdateResponse.
type NodeUpdateResult struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
}

// UpdateNodeDrain sets, changes or removes a node's drain in one entry,
// stamping its start and deadline on the leader's clock: a new drain
// starts now and its deadline is now + Deadline (a change keeps the start
// and counts the new deadline from now); -1 forces the drain, 0 means no
// deadline. A drain makes the node ineligible; its removal leaves it so
// unless MarkEligible, and a node made eligible gets node-update
// evaluations for the system jobs. The leader's drainer does the moving
// (drainer.go). An unknown node is ErrNodeNotFound, a deadline below -1
// ErrInvalidRequest.
func (l *Leader) UpdateNodeDrain(ctx context.Context, req DrainRequest) (*NodeUpdateResult, error) {
	if req.Spec != nil && req.Spec.Deadline < 0 && req.Spec.Deadline != -1 {
		return nil, fmt.Errorf("%w: DrainSpec.Deadline must be positive, 0 for no deadline or -1 to force (got %s)",
			ErrInvalidRequest, req.Spec.Deadline)
	}
	snap := l.store().Snapshot()
	n, err := snap.NodeByID(req.NodeID)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, fmt.Errorf("%w: %s", ErrNodeNotFound, req.NodeID)
	}
	now := l.clock.Now().UTC()
	w := &structs.NodeUpdateDrainRequest{
		NodeID: n.ID, MarkEligible: req.MarkEligible, Meta: req.Meta, AccessorID: req.AccessorID,
		UpdatedAt: now.UnixNano(),
	}
	event := &structs.NodeEvent{Subsystem: structs.NodeEventSubsystemDrain, Timestamp: now}
	switch {
	case req.Spec != nil:
		d := &structs.DrainStrategy{DrainSpec: *req.Spec, StartedAt: now}
		if d.Deadline > 0 {
			d.ForceDeadline = now.Add(d.Deadline)
		}
		event.Message = structs.NodeDrainEventDrainSet
		if n.DrainStrategy != nil {
			d.StartedAt = n.DrainStrategy.StartedAt
			event.Message = structs.NodeDrainEventDrainUpdated
		}
		w.DrainStrategy = d
	case n.DrainStrategy != nil:
		event.Message = structs.NodeDrainEventDrainDisabled
	default:
		event = nil
	}
	if event != nil {
		w.NodeEvents = append(w.NodeEvents, event)
	}
	eligible := req.Spec == nil && req.MarkEligible && n.SchedulingEligibility != structs.NodeSchedulingEligible
	if eligible {
		w.NodeEvents = append(w.NodeEvents, &structs.NodeEvent{Message: structs.NodeEligibilityEventEligible,
			Subsystem: structs.NodeEventSubsystemCluster, Timestamp: now})
		if w.Evals, err = l.eligibleEvals(snap, n); err != nil {
			return nil, err
		}
	}
	if event == nil && !eligible {
		// Nothing to change: no drain to remove, the node as asked.
		return &NodeUpdateResult{NodeModifyIndex: n.ModifyIndex}, nil
	}
	_, index, err := l.apply(ctx, fsm.NodeUpdateDrainRequestType, w)
	if err != nil {
		return nil, err
	}
	res := &NodeUpdateResult{NodeModifyIndex: index, EvalIDs: evalIDs(w.Evals)}
	if len(w.Evals) > 0 {
		res.EvalCreateIndex = index
	}
	return res, nil
}

// UpdateNodeEligibility sets a node's scheduling eligibility in one entry,
// with Nomad's node event; a node made eligible gets node-update
// evaluations for the system jobs. Setting what the node already has
// writes nothing. A draining node cannot be made eligible (state.ErrInvalid,
// Nomad's message); an unknown node is ErrNodeNotFound, an unknown
// eligibility ErrInvalidRequest.
func (l *Leader) UpdateNodeEligibility(ctx context.Context, nodeID, eligibility string) (*NodeUpdateResult, error) {
	message := ""
	switch eligibility {
	case structs.NodeSchedulingEligible:
		message = structs.NodeEligibilityEventEligible
	case structs.NodeSchedulingIneligible:
		message = structs.NodeEligibilityEventIneligible
	default:
		return nil, fmt.Errorf("%w: invalid scheduling eligibility %q (want %q or %q)", ErrInvalidRequest,
			eligibility, structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible)
	}
	snap := l.store().Snapshot()
	n, err := snap.NodeByID(nodeID)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, fmt.Errorf("%w: %s", ErrNodeNotFound, nodeID)
	}
	if n.DrainStrategy != nil && eligibility == structs.NodeSchedulingEligible {
		return nil, fmt.Errorf("can not set node's scheduling eligibility to eligible while it is draining: %w", state.ErrInvalid)
	}
	if n.SchedulingEligibility == eligibility {
		return &NodeUpdateResult{NodeModifyIndex: n.ModifyIndex}, nil
	}
	now := l.clock.Now().UTC()
	w := &structs.NodeUpdateEligibilityRequest{
		NodeID: n.ID, Eligibility: eligibility, UpdatedAt: now.UnixNano(),
		NodeEvents: []*structs.NodeEvent{{Message: message, Subsystem: structs.NodeEventSubsystemCluster, Timestamp: now}},
	}
	if eligibility == structs.NodeSchedulingEligible {
		if w.Evals, err = l.eligibleEvals(snap, n); err != nil {
			return nil, err
		}
	}
	_, index, err := l.apply(ctx, fsm.NodeUpdateEligibilityRequestType, w)
	if err != nil {
		return nil, err
	}
	res := &NodeUpdateResult{NodeModifyIndex: index, EvalIDs: evalIDs(w.Evals)}
	if len(w.Evals) > 0 {
		res.EvalCreateIndex = index
	}
	return res, nil
}

// eligibleEvals returns the node-update evaluations of a node that becomes
// eligible (and ready): the system jobs place on it again. Blocked
// evaluations are woken by the feeder, which sees the node usable.
func (l *Leader) eligibleEvals(snap *state.Snapshot, n *structs.Node) ([]*structs.Evaluation, error) {
	if n.Status != structs.NodeStatusReady {
		return nil, nil
	}
	c := n.Copy()
	c.SchedulingEligibility = structs.NodeSchedulingEligible
	return l.nodeEvals(snap, c, false)
}

// settlesMigration reports whether u is the first healthy verdict of an
// alloc that continues one marked to migrate and still running: the
// scheduler may stop the old one now (scheduler/migrate.go).
func settlesMigration(snap *state.Snapshot, existing, u *structs.Allocation) (bool, error) {
	if existing == nil || existing.PreviousAllocation == "" || existing.TerminalStatus() || existing.IsHealthy() ||
		u.DeploymentStatus == nil || u.DeploymentStatus.Healthy == nil || !*u.DeploymentStatus.Healthy {
		return false, nil
	}
	prev, err := snap.AllocByID(existing.PreviousAllocation)
	if err != nil || prev == nil {
		return false, err
	}
	return prev.DesiredTransition.ShouldMigrate() && prev.DesiredStatus == structs.AllocDesiredStatusRun &&
		!prev.ClientTerminalStatus(), nil
}
