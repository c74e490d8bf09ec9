// Package stream is the servers' event stream: the changes each applied
// log entry made to the replicated state, as Nomad's events (topic, type,
// key, namespace, filter keys, raft index and the object written), kept in
// a bounded in-memory ring of the latest entries for subscribers to read.
//
// Every server fills its own ring from its own FSM (see fsm.FSM.SetEvents),
// so any server can serve GET /v1/event/stream. Publishing never waits on a
// subscriber: a subscriber reads at its own pace from the ring, and one
// whose next entry has already been overwritten is dropped (Next answers
// ErrSubscriberBehind) and must subscribe again, from a later index. So a
// slow reader costs the FSM nothing, and the ring's memory is bounded by
// its size whatever the subscribers do.
//
// The package knows nothing of drover's types: an event's Payload is the
// object the state store holds (never modified after insert, so the ring
// shares it with the store), and rendering it is the HTTP API's job.
package stream

import (
	"sync"
)

// Topic is an event's topic, as Nomad's.
type Topic string

// The topics drover publishes, as Nomad's; TopicAll subscribes to every
// one.
const (
	TopicJob        Topic = "Job"
	TopicAllocation Topic = "Allocation"
	TopicDeployment Topic = "Deployment"
	TopicEvaluation Topic = "Evaluation"
	TopicNode       Topic = "Node"
	TopicService    Topic = "Service"
	TopicNodePool   Topic = "NodePool"
	TopicAll        Topic = "*"
)

// Topics lists the topics drover publishes, in documentation order.
var Topics = []Topic{TopicJob, TopicAllocation, TopicDeployment, TopicEvaluation, TopicNode, TopicService, TopicNodePool}

// Event types, as Nomad's. The type of an event is the kind of log entry
// that made the change; every change of one entry has the entry's type
// (a job registration's evaluation is a JobRegistered event of topic
// Evaluation, as in Nomad).
const (
	TypeJobRegistered                 = "JobRegistered"
	TypeJobDeregistered               = "JobDeregistered"
	TypePlanResult                    = "PlanResult"
	TypeAllocationUpdated             = "AllocationUpdated"
	TypeAllocationUpdateDesiredStatus = "AllocationUpdateDesiredStatus"
	TypeDeploymentStatusUpdate        = "DeploymentStatusUpdate"
	TypeDeploymentPromotion           = "DeploymentPromotion"
	TypeDeploymentAllocHealth         = "DeploymentAllocHealth"
	TypeEvaluationUpdated             = "EvaluationUpdated"
	TypeNodeRegistration              = "NodeRegistration"
	TypeNodeDeregistration            = "NodeDeregistration"
	TypeNodeEvent                     = "NodeEvent"
	TypeNodeDrain                     = "NodeDrain"
	TypeNodeEligibility               = "NodeEligibility"
	// TypeJobStability (drover) is a job version marked stable or not by
	// the deployment watcher; Nomad publishes nothing for it.
	TypeJobStability = "JobStability"
	// A service registration made or removed, whichever entry did it
	// (Topic Service), as Nomad's.
	TypeServiceRegistration   = "ServiceRegistration"
	TypeServiceDeregistration = "ServiceDeregistration"
	// TypeAnalysisMeasurement (drover) is a measurement of an analysis
	// run, and TypeAnalysisRun runs started or ended (Topic Deployment,
	// the deployment that holds them); Nomad has no analysis.
	TypeAnalysisMeasurement = "AnalysisMeasurement"
	TypeAnalysisRun         = "AnalysisRun"
	// A node pool created or replaced, and one deleted (Topic NodePool),
	// as Nomad's.
	TypeNodePoolUpserted = "NodePoolUpserted"
	TypeNodePoolDeleted  = "NodePoolDeleted"
)

// Event is one object written by one log entry.
type Event struct {
	Topic Topic
	Type  string
	// Key is the object's ID.
	Key string
	// Namespace is the object's namespace; "" for nodes.
	Namespace string
	// FilterKeys are other keys a subscription may match the event by
	// (an allocation's job and deployment IDs).
	FilterKeys []string
	// Index is the raft index of the entry.
	Index uint64
	// Payload is the object as written (after the entry); for a deletion,
	// the object as it was. Shared with the state store: never modify it.
	Payload any
	// Deleted reports that the entry deleted the object (a purged job, a
	// deregistered node).
	Deleted bool

	enc *encoded
}

// encoded caches an event's rendering, shared by every subscriber.
type encoded struct {
	once sync.Once
	b    []byte
	err  error
}

// Encoded returns enc(e), computed once per event whoever asks: every
// caller must pass the same function (the HTTP API's renderer).
func (e *Event) Encoded(enc func(*Event) ([]byte, error)) ([]byte, error) {
	if e.enc == nil {
		// An event not published through a Buffer: nothing to share.
		return enc(e)
	}
	e.enc.once.Do(func() { e.enc.b, e.enc.err = enc(e) })
	return e.enc.b, e.enc.err
}

// Batch is the events of one log entry: what a subscriber receives.
type Batch struct {
	Index  uint64
	Events []*Event
}
