package structs

// JobTrackedScalingEvents is how many scaling events a group keeps, as
// Nomad's.
const JobTrackedScalingEvents = 20

// ScalingEvent is one scaling of a task group, or an attempt at one (an
// error or a message from an autoscaler), as Nomad's.
type ScalingEvent struct {
	// Time is the leader's clock, UnixNano.
	Time uint64
	// Count is the group's new count; nil for an event that changed none.
	Count         *int64
	PreviousCount int64
	Message       string
	Error         bool
	Meta          map[string]any
	// EvalID is the evaluation the scaling created, if any.
	EvalID      *string
	CreateIndex uint64
}

// JobScalingEvents is a job's scaling events by group, newest first, at
// most JobTrackedScalingEvents per group.
type JobScalingEvents struct {
	Namespace     string
	JobID         string
	ScalingEvents map[string][]*ScalingEvent
	ModifyIndex   uint64
}

// ScalingEventRequest records a scaling event of one group of a job: in a
// JobRegisterRequest (a count change, with its new version and eval), or
// alone (an event that changes no count).
type ScalingEventRequest struct {
	Namespace string
	JobID     string
	TaskGroup string
	Event     *ScalingEvent
}
