package structs

import "time"

// Replicated write requests. Each is the payload of one Raft log entry. The
// leader fills in every ID and every time (UnixNano int64 or time.Time)
// before it calls raft.Apply, so that applying an entry on any server, or
// again from a snapshot, gives the same state: the state machine never reads
// a clock and never mints an ID.

// NodeRegisterRequest adds a client node or replaces its record. Sent by
// the leader when a client agent registers (or re-registers after a
// restart) through the HTTP API. The leader stamps Node.StatusUpdatedAt.
type NodeRegisterRequest struct {
	Node *Node
}

// NodeUpdateStatusRequest changes a node's status. Sent by the leader for a
// client's status update, and by the leader's heartbeat monitor when a node
// misses its heartbeats (Status "down"). A node going down also marks its
// allocations that the client has not finished as lost; Evals (stamped by
// the leader, typically one node-update eval per affected job) are stored in
// the same transaction.
type NodeUpdateStatusRequest struct {
	NodeID            string
	Status            string
	StatusDescription string
	// UpdatedAt is the leader's clock, UnixNano: the node's StatusUpdatedAt
	// and the ModifyTime of allocations marked lost.
	UpdatedAt int64
	Evals     []*Evaluation
}

// JobRegisterRequest registers a job version together with its evaluation
// and, optionally, a deployment, atomically. Sent by the leader for
// `PUT /v1/jobs` and for a revert. The store assigns the version: it
// increments only when the spec changed.
type JobRegisterRequest struct {
	Job        *Job
	Eval       *Evaluation
	Deployment *Deployment `json:",omitempty"`
	// SubmitTime is the leader's clock, UnixNano; it becomes Job.SubmitTime
	// of a new version.
	SubmitTime int64
	// EnforceIndex makes the registration conditional (`job run
	// -check-index`): JobModifyIndex 0 means the job must not exist, any
	// other value must equal the stored job's JobModifyIndex.
	EnforceIndex   bool `json:",omitempty"`
	JobModifyIndex uint64
	// Scaling, set by `job scale`, records the count change as a scaling
	// event of its group, with Eval's ID.
	Scaling *ScalingEventRequest `json:",omitempty"`
	// PeriodicLaunch, set when the leader launches a periodic job's child
	// (the request's Job), records the launch; a launch no later than the
	// recorded one is refused (state.ErrConflict), so no launch happens
	// twice, whichever leader makes it.
	PeriodicLaunch *PeriodicLaunch `json:",omitempty"`
	// Submission is the source the job was submitted from, kept for the
	// version the registration leaves current (build 2; a server of an
	// earlier build decodes the entry without it and keeps no source,
	// which decides nothing).
	Submission *JobSubmission `json:",omitempty"`
}

// JobRegisterResult is the state machine's answer to a JobRegisterRequest
// (and to a deregister that stops the job): the version now current and the
// raft index of its last spec change.
type JobRegisterResult struct {
	JobVersion     uint64
	JobModifyIndex uint64
	// SpecChanged is false for an identical re-submission.
	SpecChanged bool
}

// JobDeregisterRequest stops a job (a new version with Stop set) or, with
// Purge, deletes it and its version history. A running or paused deployment
// of the job is cancelled ("Cancelled because job is stopped"). Sent by the
// leader for `DELETE /v1/job/{id}`. Eval is stored in the same transaction.
type JobDeregisterRequest struct {
	Namespace string
	JobID     string
	Purge     bool
	Eval      *Evaluation
	// SubmitTime is the leader's clock, UnixNano, for the stopped version
	// and for the cancelled deployment's ModifyTime.
	SubmitTime int64
}

// EvalUpdateRequest inserts evaluations or replaces them by ID: new evals,
// and status changes (blocked, complete, failed, cancelled). Sent by the
// leader's eval broker and scheduling workers. The leader stamps
// CreateTime/ModifyTime in each eval.
type EvalUpdateRequest struct {
	Evals []*Evaluation
}

// AllocStopUpdate stops one existing allocation as part of a plan.
type AllocStopUpdate struct {
	AllocID            string
	DesiredDescription string
	// ClientStatus, when set (e.g. "lost"), overrides the client's status.
	ClientStatus   string `json:",omitempty"`
	FollowupEvalID string `json:",omitempty"`
}

// DeploymentStatusUpdate changes a deployment's status and description.
type DeploymentStatusUpdate struct {
	DeploymentID      string
	Status            string
	StatusDescription string

	// Rollout bookkeeping (drover, part C), applied with the status.
	// Absent groups keep their values.

	// CheckpointsReached sets DeploymentState.CheckpointsReached per group.
	CheckpointsReached map[string]int `json:",omitempty"`
	// AllPlaced sets DeploymentState.AllPlaced per group (the scheduler's).
	AllPlaced map[string]bool `json:",omitempty"`
	// FailuresAtPause sets DeploymentState.FailuresAtPause per group.
	FailuresAtPause map[string]int `json:",omitempty"`
	// ResumeAt, on an update that leaves the deployment paused, is when it
	// resumes by itself (zero: it waits for an operator, which is how an
	// operator's pause holds a checkpoint delay).
	ResumeAt time.Time `json:",omitzero"`
	// GroupStates sets groups' State, and GroupDoneAt their DoneAt (a job
	// that rolls its groups in order).
	GroupStates map[string]string    `json:",omitempty"`
	GroupDoneAt map[string]time.Time `json:",omitempty"`
	// ZoneStates sets zones' State, per group and zone name.
	ZoneStates map[string]map[string]string `json:",omitempty"`
	// ZoneDoneAt sets zones' DoneAt, per group and zone name.
	ZoneDoneAt map[string]map[string]time.Time `json:",omitempty"`
	// ZoneFailedReset clears the Failed count of the named zones, per
	// group: the operator resumed after their disruption budget was
	// reached, accepting those failures.
	ZoneFailedReset map[string][]string `json:",omitempty"`
	// WaitReasons sets DeploymentState.WaitReason per group (the
	// watcher's sentence for what holds it); "" clears it.
	WaitReasons map[string]string `json:",omitempty"`
	// DecidedOn, when set (the deployment watcher's writes), is the
	// deployment's status as the watcher read it when it decided. A
	// request whose deployment no longer has that status (an operator
	// paused, resumed or held it in between) is stale and changes
	// nothing, its job and evaluation included: the watcher decides again
	// on the new state. Without it, a watcher's write would carry the
	// status it read back over the operator's.
	DecidedOn *DeploymentStatusSeen `json:",omitempty"`
}

// DeploymentStatusSeen is the part of a deployment's status that only
// status changes (the watcher's and the operator's verbs) move: a
// promotion, a health report or the scheduler's bookkeeping leave it.
type DeploymentStatusSeen struct {
	Status   string
	ResumeAt time.Time `json:",omitzero"`
}

// StatusSeen returns what d's status is, as DecidedOn compares it.
func (d *Deployment) StatusSeen() *DeploymentStatusSeen {
	return &DeploymentStatusSeen{Status: d.Status, ResumeAt: d.ResumeAt}
}

// Holds reports whether d still has the status s was read from.
func (s *DeploymentStatusSeen) Holds(d *Deployment) bool {
	return d.Status == s.Status && d.ResumeAt.Equal(s.ResumeAt)
}

// ApplyPlanResultsRequest commits the accepted part of a scheduling plan.
// Sent by the leader's plan applier once it has checked the plan against
// the latest state.
type ApplyPlanResultsRequest struct {
	// EvalID is the evaluation the plan answers.
	EvalID string
	// Job, when set, is attached to every allocation in AllocsPlaced and
	// AllocsUpdated that carries no Job (so an entry need not repeat it).
	Job *Job `json:",omitempty"`
	// AllocsPlaced are new allocations, complete with ID, node, name,
	// DesiredStatus "run", DeploymentID and DeploymentStatus.Canary.
	AllocsPlaced []*Allocation
	// AllocsUpdated are existing allocations updated in place: the store
	// takes Job, DesiredStatus, DesiredDescription, AllocatedResources and
	// DeploymentID from them and keeps what the client reported.
	AllocsUpdated []*Allocation
	// AllocsStopped are existing allocations to stop.
	AllocsStopped []*AllocStopUpdate
	// Deployment is created, or (same ID) its configuration updated; the
	// counters derived from allocation updates are kept from the store.
	Deployment *Deployment `json:",omitempty"`
	// DeploymentUpdates change the status of deployments, e.g. cancel an
	// older version's deployment.
	DeploymentUpdates []*DeploymentStatusUpdate
	// FollowupEvals are delayed evaluations (e.g. reschedules) to store.
	FollowupEvals []*Evaluation
	// UpdatedAt is the leader's clock, UnixNano: the placement time used
	// for RequireProgressBy of a created deployment and the ModifyTime of
	// changed objects.
	UpdatedAt int64
}

// AllocClientUpdateRequest carries what clients report of their
// allocations: ClientStatus, ClientDescription, TaskStates and
// DeploymentStatus (Healthy and Timestamp). Sent by the leader for client
// updates, batched. Evals (e.g. retry-failed-alloc) are stored with it.
type AllocClientUpdateRequest struct {
	Allocs []*Allocation
	Evals  []*Evaluation
	// UpdatedAt is the leader's clock, UnixNano: the allocations'
	// ModifyTime, and the health transition time when a DeploymentStatus
	// carries no Timestamp.
	UpdatedAt int64
}

// DeploymentStatusUpdateRequest changes a deployment's status (fail, pause,
// resume, success, cancel), optionally registering a reverted job version
// and an evaluation in the same transaction. Sent by the leader's
// deployment watcher and for the operator verbs fail/pause/resume.
type DeploymentStatusUpdateRequest struct {
	DeploymentUpdate *DeploymentStatusUpdate
	// Job, when set, is registered as a new version (auto revert).
	Job  *Job        `json:",omitempty"`
	Eval *Evaluation `json:",omitempty"`
	// UpdatedAt is the leader's clock, UnixNano: ModifyTime, and the resume
	// time from which RequireProgressBy is counted again.
	UpdatedAt int64
}

// DeploymentPromoteRequest promotes the canaries of all groups (All) or of
// the named Groups. Sent by the leader for the operator verb and for auto
// promotion. Every canary group promoted must have all its desired canaries
// healthy.
type DeploymentPromoteRequest struct {
	DeploymentID string
	All          bool
	Groups       []string
	Eval         *Evaluation `json:",omitempty"`
	// PromotedAt is the leader's clock: RequireProgressBy is counted again
	// from it.
	PromotedAt time.Time
	// DecidedOn, on the watcher's automatic promotions, is as in
	// DeploymentStatusUpdate: a promotion decided on a status the
	// deployment no longer has (an operator paused it in between) changes
	// nothing.
	DecidedOn *DeploymentStatusSeen `json:",omitempty"`
}

// DeploymentAllocHealthRequest sets the deployment health of allocations by
// hand (health_check = "manual", or an operator's verdict). Sent by the
// leader for `PUT /v1/deployment/allocation-health/{id}`.
type DeploymentAllocHealthRequest struct {
	DeploymentID           string
	HealthyAllocationIDs   []string
	UnhealthyAllocationIDs []string
	// DeploymentUpdate, when set, changes the deployment's status in the
	// same transaction (e.g. failed because of an unhealthy alloc).
	DeploymentUpdate *DeploymentStatusUpdate `json:",omitempty"`
	Job              *Job                    `json:",omitempty"`
	Eval             *Evaluation             `json:",omitempty"`
	// Timestamp is the leader's clock: the allocations' health time.
	Timestamp time.Time
}

// JobStabilityRequest marks a job version stable or not. Sent by the
// leader's deployment watcher once a deployment succeeds (and by the
// operator, to pin a version for revert).
type JobStabilityRequest struct {
	Namespace  string
	JobID      string
	JobVersion uint64
	Stable     bool
}

// NodeDeregisterRequest removes nodes from the cluster. Sent by the leader
// for `PUT /v1/node/{id}/purge`-style removal and by node garbage
// collection. Their allocations stay for the scheduler to replace.
type NodeDeregisterRequest struct {
	NodeIDs []string
}

// EvalReapRequest deletes terminal evaluations and allocations. Sent by the
// leader's garbage collector; IDs the store no longer holds are skipped.
type EvalReapRequest struct {
	Evals  []string
	Allocs []string
	// Deployments are terminal deployments no allocation refers to any
	// more (server.deployment_gc_threshold).
	Deployments []string
}

// IsNoOp reports whether the plan results change nothing, so the plan
// applier need not write them to the log.
func (r *ApplyPlanResultsRequest) IsNoOp() bool {
	return r == nil || (len(r.AllocsPlaced) == 0 && len(r.AllocsUpdated) == 0 &&
		len(r.AllocsStopped) == 0 && r.Deployment == nil &&
		len(r.DeploymentUpdates) == 0 && len(r.FollowupEvals) == 0)
}
