package fsm

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
)

// SetEvents makes the FSM publish the events of every entry it applies
// (the objects the entry's transaction wrote, see eventsOf) into b, and
// reset b when it restores a snapshot. Call it before raft starts
// applying entries; nil turns events off. Publishing never blocks (see
// package stream), so Apply stays as fast and as deterministic as without
// events: the events are a function of the entry and the state.
func (f *FSM) SetEvents(b *stream.Buffer) { f.events.Store(b) }

// Events returns the buffer the FSM publishes into, nil when none.
func (f *FSM) Events() *stream.Buffer { return f.events.Load() }

// eventTypes is the event type of each kind of entry, as Nomad's (its
// MsgTypeEvents). Entries of other kinds (ACLs, autopilot, reaping,
// scaling events) publish nothing.
var eventTypes = map[MessageType]string{
	NodeRegisterRequestType:                 stream.TypeNodeRegistration,
	NodeDeregisterRequestType:               stream.TypeNodeDeregistration,
	NodeUpdateStatusRequestType:             stream.TypeNodeEvent,
	NodeUpdateDrainRequestType:              stream.TypeNodeDrain,
	NodeUpdateEligibilityRequestType:        stream.TypeNodeEligibility,
	JobRegisterRequestType:                  stream.TypeJobRegistered,
	JobRegisterAtVersionRequestType:         stream.TypeJobRegistered,
	JobDeregisterRequestType:                stream.TypeJobDeregistered,
	EvalUpdateRequestType:                   stream.TypeEvaluationUpdated,
	ApplyPlanResultsRequestType:             stream.TypePlanResult,
	AllocClientUpdateRequestType:            stream.TypeAllocationUpdated,
	AllocUpdateDesiredTransitionRequestType: stream.TypeAllocationUpdateDesiredStatus,
	DeploymentStatusUpdateRequestType:       stream.TypeDeploymentStatusUpdate,
	DeploymentPromoteRequestType:            stream.TypeDeploymentPromotion,
	DeploymentAllocHealthRequestType:        stream.TypeDeploymentAllocHealth,
	JobStabilityRequestType:                 stream.TypeJobStability,
	ServiceRegistrationDeleteRequestType:    stream.TypeServiceDeregistration,
	// A job restart's deployment and evaluation, as Nomad's stream shows
	// a deployment a plan creates.
	JobRestartRequestType: stream.TypePlanResult,
	// A measurement of an analysis run, and runs started or ended: the
	// deployment that holds them, as a Deployment event of these types.
	AnalysisMeasurementRequestType: stream.TypeAnalysisMeasurement,
	AnalysisRunRequestType:         stream.TypeAnalysisRun,
	// Node pools, as Nomad's; a node registering in an unknown pool
	// publishes the pool it creates as a NodeRegistration event of topic
	// NodePool.
	NodePoolUpsertRequestType: stream.TypeNodePoolUpserted,
	NodePoolDeleteRequestType: stream.TypeNodePoolDeleted,
}

// publishEvents publishes an entry's events as one batch (one frame of
// the event stream), but for an EvalUpdate: a worker writes an
// evaluation's outcome with its blocked or follow-up evaluation in one
// entry, where Nomad's writes each evaluation in an entry of its own, so
// each of its evaluations is a batch of its own, at the entry's index, as
// Nomad's stream shows them.
func publishEvents(b *stream.Buffer, index uint64, t MessageType, evs []*stream.Event) {
	if t != EvalUpdateRequestType || len(evs) < 2 {
		b.Publish(index, evs)
		return
	}
	for _, e := range evs {
		b.Publish(index, []*stream.Event{e})
	}
}

// publishes reports whether entries of type t have events.
func publishes(t MessageType) bool {
	_, ok := eventTypes[t]
	return ok
}

// eventsOf turns the changes of one entry of type t into events, as
// Nomad's: a job, evaluation, allocation, deployment or node written is
// an event of its topic, keyed by its ID, of the entry's type; a purged
// job and a deleted node are events of their topic marked Deleted; a
// service registration written or deleted is a ServiceRegistration or
// ServiceDeregistration event of topic Service. Other
// deletions (reaped evaluations and allocations) and other tables publish
// nothing.
func eventsOf(t MessageType, changes memdb.Changes) []*stream.Event {
	typ := eventTypes[t]
	var out []*stream.Event
	for _, c := range changes {
		if e := eventOf(c); e != nil {
			if e.Type == "" {
				e.Type = typ
			}
			out = append(out, e)
		}
	}
	return out
}

func eventOf(c memdb.Change) *stream.Event {
	if c.Deleted() {
		switch c.Table {
		case state.TableJobs:
			j, ok := c.Before.(*structs.Job)
			if !ok {
				return nil
			}
			return &stream.Event{Topic: stream.TopicJob, Key: j.ID, Namespace: j.Namespace, Payload: j, Deleted: true}
		case state.TableNodes:
			n, ok := c.Before.(*structs.Node)
			if !ok {
				return nil
			}
			return &stream.Event{Topic: stream.TopicNode, Key: n.ID, Payload: n, Deleted: true}
		case state.TableServices:
			if r, ok := c.Before.(*structs.ServiceRegistration); ok {
				return serviceEvent(r, stream.TypeServiceDeregistration)
			}
		case state.TableNodePools:
			if p, ok := c.Before.(*structs.NodePool); ok {
				return &stream.Event{Topic: stream.TopicNodePool, Key: p.Name, Payload: p, Deleted: true}
			}
		}
		return nil
	}
	switch c.Table {
	case state.TableJobs:
		if j, ok := c.After.(*structs.Job); ok {
			return &stream.Event{Topic: stream.TopicJob, Key: j.ID, Namespace: j.Namespace, Payload: j}
		}
	case state.TableEvals:
		if e, ok := c.After.(*structs.Evaluation); ok {
			return &stream.Event{Topic: stream.TopicEvaluation, Key: e.ID, Namespace: e.Namespace,
				FilterKeys: filterKeys(e.JobID, e.DeploymentID), Payload: e}
		}
	case state.TableAllocs:
		if a, ok := c.After.(*structs.Allocation); ok {
			return &stream.Event{Topic: stream.TopicAllocation, Key: a.ID, Namespace: a.Namespace,
				FilterKeys: filterKeys(a.JobID, a.DeploymentID), Payload: a}
		}
	case state.TableDeployments:
		if d, ok := c.After.(*structs.Deployment); ok {
			return &stream.Event{Topic: stream.TopicDeployment, Key: d.ID, Namespace: d.Namespace,
				FilterKeys: filterKeys(d.JobID), Payload: d}
		}
	case state.TableNodes:
		if n, ok := c.After.(*structs.Node); ok {
			return &stream.Event{Topic: stream.TopicNode, Key: n.ID, Payload: n}
		}
	case state.TableServices:
		if r, ok := c.After.(*structs.ServiceRegistration); ok {
			return serviceEvent(r, stream.TypeServiceRegistration)
		}
	case state.TableNodePools:
		if p, ok := c.After.(*structs.NodePool); ok {
			return &stream.Event{Topic: stream.TopicNodePool, Key: p.Name, Payload: p}
		}
	}
	return nil
}

// serviceEvent is a registration made or removed: as Nomad's, its type
// says which, whatever entry made the change (an allocation's report, a
// node going down, a promotion), keyed by the registration's ID and
// filterable by its service name.
func serviceEvent(r *structs.ServiceRegistration, typ string) *stream.Event {
	return &stream.Event{Topic: stream.TopicService, Type: typ, Key: r.ID, Namespace: r.Namespace,
		FilterKeys: filterKeys(r.ServiceName), Payload: r, Deleted: typ == stream.TypeServiceDeregistration}
}

// filterKeys returns the keys that are set.
func filterKeys(keys ...string) []string {
	out := keys[:0:0]
	for _, k := range keys {
		if k != "" {
			out = append(out, k)
		}
	}
	return out
}
