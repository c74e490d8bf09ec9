package server

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// NodeUpdateResponse answers a node status update.
type NodeUpdateResponse struct {
	// Index is the raft index of the last entry written.
	Index uint64
	// HeartbeatTTL is the time within which the node must heartbeat.
	HeartbeatTTL time.Duration
	// EvalIDs are the evaluations created for the change.
	EvalIDs []string
}

// RegisterNode registers a client node (or re-registers it), stamping its
// status time; a node that registers ready gets node-update evaluations
// for the system jobs (which place an alloc on every node). The node's
// heartbeat timer is armed when this server is leader. It returns the TTL
// within which the node must heartbeat and the index of the last write.
func (l *Leader) RegisterNode(ctx context.Context, node *structs.Node) (ttl time.Duration, index uint64, err error) {
	resp, err := l.registerNode(ctx, node)
	if err != nil {
		return 0, 0, err
	}
	return resp.HeartbeatTTL, resp.Index, nil
}

func (l *Leader) registerNode(ctx context.Context, node *structs.Node) (*NodeUpdateResponse, error) {
	if node == nil || node.ID == "" {
		return nil, fmt.Errorf("%w: node without ID", ErrInvalidRequest)
	}
	if node.NodePool == structs.NodePoolAll {
		return nil, fmt.Errorf("%w: node is not allowed to register in node pool %q", ErrInvalidRequest, structs.NodePoolAll)
	}
	if node.NodePool != "" {
		if err := structs.ValidateNodePoolName(node.NodePool); err != nil {
			return nil, fmt.Errorf("%w: invalid node pool: %v", ErrInvalidRequest, err)
		}
	}
	n := node.Copy()
	if n.Status == "" {
		n.Status = structs.NodeStatusInit
	}
	if n.SchedulingEligibility == "" {
		n.SchedulingEligibility = structs.NodeSchedulingEligible
	}
	n.StatusUpdatedAt = l.clock.Now().UnixNano()
	_, index, err := l.apply(ctx, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n})
	if err != nil {
		return nil, err
	}
	resp := &NodeUpdateResponse{Index: index, HeartbeatTTL: l.cfg.HeartbeatTTL}
	if t, err := l.term(); err == nil && n.Status != structs.NodeStatusDown {
		resp.HeartbeatTTL = t.beats.ttl(n.ID)
		t.beats.arm(n.ID, resp.HeartbeatTTL)
	}
	if n.Status != structs.NodeStatusReady {
		return resp, nil
	}
	evals, err := l.nodeEvals(l.store().Snapshot(), n, false)
	if err != nil || len(evals) == 0 {
		return resp, err
	}
	if _, resp.Index, err = l.apply(ctx, fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals}); err != nil {
		return nil, err
	}
	resp.EvalIDs = evalIDs(evals)
	return resp, nil
}

// UpdateNodeStatus changes a node's status, stamping the time. A node that
// becomes ready or down gets node-update evaluations: for the system jobs,
// and for every job with live allocs on it.
func (l *Leader) UpdateNodeStatus(ctx context.Context, nodeID, status, description string) (*NodeUpdateResponse, error) {
	switch status {
	case structs.NodeStatusInit, structs.NodeStatusReady, structs.NodeStatusDown:
	default:
		return nil, fmt.Errorf("%w: node status %q", ErrInvalidRequest, status)
	}
	snap := l.store().Snapshot()
	n, err := snap.NodeByID(nodeID)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, fmt.Errorf("%w: %s", ErrNodeNotFound, nodeID)
	}
	req := &structs.NodeUpdateStatusRequest{
		NodeID: nodeID, Status: status, StatusDescription: description,
		UpdatedAt: l.clock.Now().UnixNano(),
	}
	if status != n.Status && status != structs.NodeStatusInit {
		c := n.Copy()
		c.Status = status
		if req.Evals, err = l.nodeEvals(snap, c, true); err != nil {
			return nil, err
		}
	}
	_, index, err := l.apply(ctx, fsm.NodeUpdateStatusRequestType, req)
	if err != nil {
		return nil, err
	}
	ttl := l.cfg.HeartbeatTTL
	if t, err := l.term(); err == nil {
		if status == structs.NodeStatusDown {
			t.beats.clear(nodeID)
		} else {
			ttl = t.beats.ttl(nodeID)
			t.beats.arm(nodeID, ttl)
		}
	}
	return &NodeUpdateResponse{Index: index, HeartbeatTTL: ttl, EvalIDs: evalIDs(req.Evals)}, nil
}

// nodeEvals returns one node-update evaluation per system job and, with
// withAllocs, per job with live allocs on the node.
func (l *Leader) nodeEvals(snap *state.Snapshot, n *structs.Node, withAllocs bool) ([]*structs.Evaluation, error) {
	type key struct{ ns, id string }
	jobs := map[key]*structs.Job{}
	var order []key
	addJob := func(j *structs.Job) {
		k := key{j.Namespace, j.ID}
		if _, ok := jobs[k]; !ok {
			jobs[k] = j
			order = append(order, k)
		}
	}
	if withAllocs {
		allocs, err := snap.AllocsByNode(n.ID)
		if err != nil {
			return nil, err
		}
		for _, a := range allocs {
			if a.TerminalStatus() {
				continue
			}
			j, err := snap.JobByID(a.Namespace, a.JobID)
			if err != nil {
				return nil, err
			}
			if j == nil {
				j = &structs.Job{ID: a.JobID, Namespace: a.Namespace, Type: structs.JobTypeService, Priority: structs.DefaultJobPriority}
				if a.Job != nil {
					j.Type, j.Priority = a.Job.Type, a.Job.Priority
				}
			}
			addJob(j)
		}
	}
	all, err := snap.Jobs()
	if err != nil {
		return nil, err
	}
	for _, j := range all {
		if structs.PerNode(j.Type) && !j.Stop {
			addJob(j)
		}
	}
	now := l.clock.Now().UnixNano()
	out := make([]*structs.Evaluation, 0, len(order))
	for _, k := range order {
		j := jobs[k]
		out = append(out, &structs.Evaluation{
			ID: l.newID(), Namespace: j.Namespace, Priority: j.Priority, Type: j.Type,
			TriggeredBy: structs.EvalTriggerNodeUpdate, JobID: j.ID, JobModifyIndex: j.JobModifyIndex,
			NodeID: n.ID, NodeModifyIndex: n.ModifyIndex, Status: structs.EvalStatusPending,
			CreateTime: now, ModifyTime: now,
		})
	}
	return out, nil
}

func evalIDs(evals []*structs.Evaluation) []string {
	out := make([]string, 0, len(evals))
	for _, e := range evals {
		out = append(out, e.ID)
	}
	return out
}
