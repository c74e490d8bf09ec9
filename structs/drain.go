package structs

import (
	"fmt"
	"time"
)

// Drain statuses of DrainMetadata, as Nomad's.
const (
	DrainStatusDraining = "draining"
	DrainStatusComplete = "complete"
	DrainStatusCanceled = "canceled"
)

// Node event subsystems and messages, as Nomad's.
const (
	NodeEventSubsystemDrain     = "Drain"
	NodeEventSubsystemDriver    = "Driver"
	NodeEventSubsystemHeartbeat = "Heartbeat"
	NodeEventSubsystemCluster   = "Cluster"

	NodeRegisterEventRegistered    = "Node registered"
	NodeDrainEventDrainSet         = "Node drain strategy set"
	NodeDrainEventDrainUpdated     = "Node drain strategy updated"
	NodeDrainEventDrainDisabled    = "Node drain disabled"
	NodeDrainEventComplete         = "Node drain complete"
	NodeDrainEventDetailDeadlined  = "deadline_reached"
	NodeEligibilityEventEligible   = "Node marked as eligible for scheduling"
	NodeEligibilityEventIneligible = "Node marked as ineligible for scheduling"
)

// MaxRetainedNodeEvents is how many events a node keeps, newest last, as
// Nomad's.
const MaxRetainedNodeEvents = 10

// DrainSpec is what an operator asks of a drain.
type DrainSpec struct {
	// Deadline is how long after the drain starts whatever is left on the
	// node is stopped. 0: no deadline; -1 (any negative value the API
	// accepts is -1ns): force, everything stops at once.
	Deadline time.Duration
	// IgnoreSystemJobs leaves the allocations of system jobs running.
	IgnoreSystemJobs bool
}

// DrainStrategy is a node's drain in progress: the spec, with the times the
// leader stamped when it started.
type DrainStrategy struct {
	DrainSpec
	// ForceDeadline is StartedAt + Deadline for a positive Deadline; zero
	// otherwise.
	ForceDeadline time.Time
	// StartedAt is when the drain was set.
	StartedAt time.Time
}

// Copy returns a copy.
func (d *DrainStrategy) Copy() *DrainStrategy {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}

// DeadlineTime returns whether the drain has no deadline (infinite) and,
// otherwise, when it is forced: a forced drain (negative Deadline) returns
// the zero time, which every clock has passed. As Nomad's.
func (d *DrainStrategy) DeadlineTime() (infinite bool, deadline time.Time) {
	if d == nil {
		return false, time.Time{}
	}
	switch {
	case d.Deadline < 0:
		return false, time.Time{}
	case d.Deadline == 0:
		return true, time.Time{}
	}
	return false, d.ForceDeadline
}

// Deadlined reports whether the drain's deadline has passed at now (a
// forced drain always has).
func (d *DrainStrategy) Deadlined(now time.Time) bool {
	infinite, at := d.DeadlineTime()
	return d != nil && !infinite && !now.Before(at)
}

// String describes the drain, as Nomad's.
func (d *DrainStrategy) String() string {
	if d.IgnoreSystemJobs {
		return fmt.Sprintf("drain ignoring system jobs and deadline at %s", d.ForceDeadline)
	}
	return fmt.Sprintf("drain with deadline at %s", d.ForceDeadline)
}

// DrainMetadata describes a node's latest drain (Node.LastDrain).
type DrainMetadata struct {
	StartedAt  time.Time
	UpdatedAt  time.Time
	Status     string
	AccessorID string
	Meta       map[string]string
}

// Copy returns a deep copy.
func (m *DrainMetadata) Copy() *DrainMetadata {
	if m == nil {
		return nil
	}
	c := *m
	c.Meta = copyMap(m.Meta)
	return &c
}

// NodeEvent is one change in a node's life, as Nomad's: drains,
// eligibility, registration.
type NodeEvent struct {
	Message     string
	Subsystem   string
	Details     map[string]string
	Timestamp   time.Time
	CreateIndex uint64
}

// Copy returns a deep copy.
func (e *NodeEvent) Copy() *NodeEvent {
	if e == nil {
		return nil
	}
	c := *e
	c.Details = copyMap(e.Details)
	return &c
}

// NodeUpdateDrainRequest sets, changes or removes a node's drain. Sent by
// the leader for `PUT /v1/node/{id}/drain`, and by the leader's drainer when
// a drain completes (DrainComplete). A drain set marks the node
// ineligible; a drain removed leaves it so unless MarkEligible. LastDrain
// follows: "draining" while a drain is set, "complete" when the drainer
// removes it, "canceled" when an operator does. NodeEvents are appended
// (the latest MaxRetainedNodeEvents are kept). Evals are stored in the same
// transaction.
type NodeUpdateDrainRequest struct {
	NodeID        string
	DrainStrategy *DrainStrategy
	MarkEligible  bool
	// Meta is recorded in LastDrain.Meta (a new drain's, or the one it
	// ends).
	Meta map[string]string
	// AccessorID is the ACL token that asked, recorded in LastDrain.
	AccessorID string
	// DrainComplete marks the drainer's write when nothing is left to
	// move: it applies only while the node's drain is still the one that
	// started at DrainStartedAt (state.ErrConflict otherwise), so that a
	// late completion never ends a newer drain.
	DrainComplete  bool
	DrainStartedAt time.Time
	NodeEvents     []*NodeEvent
	// UpdatedAt is the leader's clock, UnixNano.
	UpdatedAt int64
	Evals     []*Evaluation
}

// NodeUpdateEligibilityRequest sets a node's scheduling eligibility. Sent
// by the leader for `PUT /v1/node/{id}/eligibility`. A draining node cannot
// be made eligible (state.ErrInvalid).
type NodeUpdateEligibilityRequest struct {
	NodeID      string
	Eligibility string
	NodeEvents  []*NodeEvent
	UpdatedAt   int64
	Evals       []*Evaluation
}
