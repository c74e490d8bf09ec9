package state

import (
	"fmt"
	"time"

	"github.com/droverhq/drover/structs"
)

// UpsertNode registers a node or replaces its record.
func (s *Store) UpsertNode(index uint64, node *structs.Node) error {
	return s.update(index, func(t *WriteTxn) error { return s.UpsertNodeTxn(t, node) })
}

// UpsertNodeTxn is UpsertNode inside t. A re-registration keeps the node's
// CreateIndex, and its SecretHash when the new record has none. A secret
// hash another node holds is refused (ErrConflict).
func (s *Store) UpsertNodeTxn(t *WriteTxn, node *structs.Node) error {
	if node == nil || node.ID == "" {
		return fmt.Errorf("state: node without ID: %w", ErrInvalid)
	}
	existing, err := t.reader().NodeByID(node.ID)
	if err != nil {
		return err
	}
	n := node.Copy()
	n.CreateIndex = t.index
	if existing != nil {
		n.CreateIndex = existing.CreateIndex
		if n.SecretHash == "" {
			// A client that sends no secret keeps the one registered.
			n.SecretHash = existing.SecretHash
		}
		// What the servers decide of a node is theirs, as Nomad's: a
		// client re-registering does not end its drain nor make itself
		// eligible.
		n.Drain = existing.Drain
		n.DrainStrategy = existing.DrainStrategy.Copy()
		n.SchedulingEligibility = existing.SchedulingEligibility
		n.LastDrain = existing.LastDrain.Copy()
		n.Events = existing.Events
	} else {
		n.Drain = n.DrainStrategy != nil
		n.Events = appendNodeEvents(nil, t.index, &structs.NodeEvent{
			Message: structs.NodeRegisterEventRegistered, Subsystem: structs.NodeEventSubsystemCluster,
			Timestamp: time.Unix(0, n.StatusUpdatedAt).UTC(),
		})
	}
	if other, err := t.reader().NodeBySecretHash(n.SecretHash); err != nil {
		return err
	} else if other != nil && other.ID != n.ID {
		return fmt.Errorf("state: node %s: secret already in use by another node: %w", n.ID, ErrConflict)
	}
	if err := t.markNodeServices(existing, n); err != nil {
		return err
	}
	// A node registering in a pool that does not exist creates it.
	if err := t.ensureNodePool(n.NodePool); err != nil {
		return err
	}
	n.ModifyIndex = t.index
	return t.insert(TableNodes, n)
}

// UpdateNodeStatus changes a node's status; see UpdateNodeStatusTxn.
func (s *Store) UpdateNodeStatus(index uint64, req *structs.NodeUpdateStatusRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.UpdateNodeStatusTxn(t, req) })
}

// UpdateNodeStatusTxn sets the node's status at req.UpdatedAt. A node going
// down marks every allocation on it that its client has not finished as
// lost. A node going disconnected marks those whose group has a
// disconnect.lost_after "unknown" and the others lost. Those whose group
// has disconnect.replace = false become unknown either way. Each such change
// is recorded in the alloc's AllocStates at req.UpdatedAt, the time the
// servers count lost_after and stop_on_client_after from. The request's
// evals are stored too.
func (s *Store) UpdateNodeStatusTxn(t *WriteTxn, req *structs.NodeUpdateStatusRequest) error {
	existing, err := t.reader().NodeByID(req.NodeID)
	if err != nil {
		return err
	}
	if existing == nil {
		return fmt.Errorf("state: node %q: %w", req.NodeID, ErrNotFound)
	}
	n := existing.Copy()
	n.Status = req.Status
	n.StatusDescription = req.StatusDescription
	n.StatusUpdatedAt = req.UpdatedAt
	n.ModifyIndex = t.index
	if err := t.insert(TableNodes, n); err != nil {
		return err
	}
	if req.Status == structs.NodeStatusDown || req.Status == structs.NodeStatusDisconnected {
		allocs, err := t.reader().AllocsByNode(req.NodeID)
		if err != nil {
			return err
		}
		at := time.Unix(0, req.UpdatedAt).UTC()
		for _, a := range allocs {
			if a.ClientTerminalStatus() {
				continue
			}
			status, desc := structs.AllocClientStatusLost, structs.AllocLost
			tg := a.Job.LookupTaskGroup(a.TaskGroup)
			if tg.StaysUnknown() || req.Status == structs.NodeStatusDisconnected && tg.LostAfterOf() > 0 {
				if a.ClientStatus == structs.AllocClientStatusUnknown {
					continue
				}
				status, desc = structs.AllocClientStatusUnknown, structs.AllocUnknown
			}
			c := rewrite(a)
			c.ClientStatus = t.strs.str(status)
			c.ClientDescription = t.strs.str(desc)
			c.AppendClientStatus(status, at)
			// A follow-up evaluation of an earlier time is not this one's.
			c.FollowupEvalID = ""
			c.ModifyIndex = t.index
			c.ModifyTime = req.UpdatedAt
			if err := t.putAlloc(a, c); err != nil {
				return err
			}
			t.touchJob(c.Namespace, c.JobID)
		}
		if err := t.flushDeployments(nil, req.UpdatedAt); err != nil {
			return err
		}
	}
	return s.UpsertEvalsTxn(t, req.Evals)
}

// appendNodeEvents returns events with more appended, each stamped with
// index, keeping the latest MaxRetainedNodeEvents. The stored slice is
// never modified.
func appendNodeEvents(events []*structs.NodeEvent, index uint64, more ...*structs.NodeEvent) []*structs.NodeEvent {
	out := make([]*structs.NodeEvent, 0, len(events)+len(more))
	out = append(out, events...)
	for _, e := range more {
		if e == nil {
			continue
		}
		c := e.Copy()
		c.CreateIndex = index
		out = append(out, c)
	}
	if n := len(out) - structs.MaxRetainedNodeEvents; n > 0 {
		out = out[n:]
	}
	return out
}

// UpdateNodeDrain sets or removes a node's drain; see UpdateNodeDrainTxn.
func (s *Store) UpdateNodeDrain(index uint64, req *structs.NodeUpdateDrainRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.UpdateNodeDrainTxn(t, req) })
}

// UpdateNodeDrainTxn applies a NodeUpdateDrainRequest in t: the drain
// strategy (Drain follows it), the eligibility (ineligible while draining;
// eligible again when a drain is removed with MarkEligible), LastDrain
// and the events. A drainer's completion (DrainComplete) of a drain that is
// no longer the node's is refused with ErrConflict; an unknown node with
// ErrNotFound.
func (s *Store) UpdateNodeDrainTxn(t *WriteTxn, req *structs.NodeUpdateDrainRequest) error {
	existing, err := t.reader().NodeByID(req.NodeID)
	if err != nil {
		return err
	}
	if existing == nil {
		return fmt.Errorf("state: node %q: %w", req.NodeID, ErrNotFound)
	}
	if req.DrainComplete {
		if req.DrainStrategy != nil {
			return fmt.Errorf("state: node %q: a completed drain sets no new one: %w", req.NodeID, ErrInvalid)
		}
		if d := existing.DrainStrategy; d == nil || !d.StartedAt.Equal(req.DrainStartedAt) {
			return fmt.Errorf("state: node %q: the drain that completed is no longer the node's: %w", req.NodeID, ErrConflict)
		}
	}
	at := time.Unix(0, req.UpdatedAt).UTC()
	n := existing.Copy()
	n.DrainStrategy = req.DrainStrategy.Copy()
	n.Drain = n.DrainStrategy != nil
	switch {
	case n.DrainStrategy != nil:
		n.SchedulingEligibility = structs.NodeSchedulingIneligible
	case req.MarkEligible:
		n.SchedulingEligibility = structs.NodeSchedulingEligible
	}
	switch {
	case n.DrainStrategy != nil && existing.DrainStrategy == nil:
		n.LastDrain = &structs.DrainMetadata{
			StartedAt: n.DrainStrategy.StartedAt, UpdatedAt: at, Status: structs.DrainStatusDraining,
			AccessorID: req.AccessorID, Meta: copyStrMap(req.Meta),
		}
	case n.DrainStrategy != nil:
		// A drain updated: it keeps its start.
		md := n.LastDrain
		if md == nil {
			md = &structs.DrainMetadata{StartedAt: existing.DrainStrategy.StartedAt}
		}
		md.UpdatedAt, md.Status, md.AccessorID = at, structs.DrainStatusDraining, req.AccessorID
		if req.Meta != nil {
			md.Meta = copyStrMap(req.Meta)
		}
		n.LastDrain = md
	case existing.DrainStrategy != nil:
		md := n.LastDrain
		if md == nil {
			md = &structs.DrainMetadata{StartedAt: existing.DrainStrategy.StartedAt}
		}
		md.UpdatedAt, md.Status = at, structs.DrainStatusCanceled
		if req.DrainComplete {
			md.Status = structs.DrainStatusComplete
		} else {
			md.AccessorID = req.AccessorID
		}
		if req.Meta != nil {
			md.Meta = copyStrMap(req.Meta)
		}
		n.LastDrain = md
	}
	n.Events = appendNodeEvents(existing.Events, t.index, req.NodeEvents...)
	n.ModifyIndex = t.index
	if err := t.insert(TableNodes, n); err != nil {
		return err
	}
	return s.UpsertEvalsTxn(t, req.Evals)
}

// UpdateNodeEligibility sets a node's eligibility; see
// UpdateNodeEligibilityTxn.
func (s *Store) UpdateNodeEligibility(index uint64, req *structs.NodeUpdateEligibilityRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.UpdateNodeEligibilityTxn(t, req) })
}

// UpdateNodeEligibilityTxn sets the node's scheduling eligibility and
// appends the request's events, in t. A draining node cannot be made
// eligible (ErrInvalid); an unknown node is ErrNotFound, an unknown
// eligibility ErrInvalid.
func (s *Store) UpdateNodeEligibilityTxn(t *WriteTxn, req *structs.NodeUpdateEligibilityRequest) error {
	switch req.Eligibility {
	case structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible:
	default:
		return fmt.Errorf("state: eligibility %q: %w", req.Eligibility, ErrInvalid)
	}
	existing, err := t.reader().NodeByID(req.NodeID)
	if err != nil {
		return err
	}
	if existing == nil {
		return fmt.Errorf("state: node %q: %w", req.NodeID, ErrNotFound)
	}
	if existing.DrainStrategy != nil && req.Eligibility == structs.NodeSchedulingEligible {
		return fmt.Errorf("state: node %q is draining: it can not be made eligible until the drain ends: %w", req.NodeID, ErrInvalid)
	}
	n := existing.Copy()
	n.SchedulingEligibility = req.Eligibility
	n.Events = appendNodeEvents(existing.Events, t.index, req.NodeEvents...)
	n.ModifyIndex = t.index
	if err := t.insert(TableNodes, n); err != nil {
		return err
	}
	return s.UpsertEvalsTxn(t, req.Evals)
}

func copyStrMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// DeleteNodes removes nodes; see DeleteNodesTxn.
func (s *Store) DeleteNodes(index uint64, nodeIDs []string) error {
	return s.update(index, func(t *WriteTxn) error { return s.DeleteNodesTxn(t, nodeIDs) })
}

// DeleteNodesTxn removes the nodes; an unknown ID fails the whole write.
// Allocations on them stay for the scheduler to replace.
func (s *Store) DeleteNodesTxn(t *WriteTxn, nodeIDs []string) error {
	for _, id := range nodeIDs {
		n, err := t.reader().NodeByID(id)
		if err != nil {
			return err
		}
		if n == nil {
			return fmt.Errorf("state: node %q: %w", id, ErrNotFound)
		}
		if err := t.delete(TableNodes, n); err != nil {
			return err
		}
	}
	return nil
}

// NodeByID returns the node, or nil.
func (s *Snapshot) NodeByID(id string) (*structs.Node, error) {
	return getOne[*structs.Node](s, TableNodes, "id", id)
}

// Nodes returns every node, by ID.
func (s *Snapshot) Nodes() ([]*structs.Node, error) {
	return list[*structs.Node](s, TableNodes, "id")
}

// NodesByIDPrefix returns the nodes whose ID starts with prefix.
func (s *Snapshot) NodesByIDPrefix(prefix string) ([]*structs.Node, error) {
	return list[*structs.Node](s, TableNodes, "id_prefix", prefix)
}
