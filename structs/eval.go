package structs

import "time"

// Evaluation statuses, as Nomad's.
const (
	EvalStatusBlocked   = "blocked"
	EvalStatusPending   = "pending"
	EvalStatusComplete  = "complete"
	EvalStatusFailed    = "failed"
	EvalStatusCancelled = "canceled"
)

// What triggered an evaluation, as Nomad's strings.
const (
	EvalTriggerJobRegister       = "job-register"
	EvalTriggerJobDeregister     = "job-deregister"
	EvalTriggerNodeUpdate        = "node-update"
	EvalTriggerNodeDrain         = "node-drain"
	EvalTriggerAllocStop         = "alloc-stop"
	EvalTriggerRollingUpdate     = "rolling-update"
	EvalTriggerDeploymentWatcher = "deployment-watcher"
	EvalTriggerRetryFailedAlloc  = "alloc-failure"
	EvalTriggerQueuedAllocs      = "queued-allocs"
	EvalTriggerMaxPlans          = "max-plan-attempts"
	EvalTriggerFailedFollowUp    = "failed-follow-up"
	EvalTriggerScheduled         = "scheduled"
	// EvalTriggerPeriodicJob: the leader launched a periodic job's child.
	EvalTriggerPeriodicJob = "periodic-job"
	// EvalTriggerJobScaling: a group's count changed through job scale.
	EvalTriggerJobScaling = "job-scaling"
	// EvalTriggerReconnect: an allocation of a disconnected node is
	// reported again by its client.
	EvalTriggerReconnect = "reconnect"
	// EvalTriggerMaxDisconnectTimeout: an unknown allocation's
	// disconnect.lost_after (or a lost one's stop_on_client_after) is up.
	EvalTriggerMaxDisconnectTimeout = "max-disconnect-timeout"
)

// Evaluation asks the scheduler to reconcile one job with the cluster.
type Evaluation struct {
	ID                string
	Namespace         string
	Priority          int
	Type              string
	TriggeredBy       string
	JobID             string
	JobModifyIndex    uint64
	NodeID            string `json:",omitempty"`
	NodeModifyIndex   uint64
	DeploymentID      string `json:",omitempty"`
	Status            string
	StatusDescription string
	Wait              time.Duration
	WaitUntil         time.Time
	NextEval          string
	PreviousEval      string
	BlockedEval       string
	FailedTGAllocs    map[string]*AllocationMetric `json:",omitempty"`
	QueuedAllocations map[string]int               `json:",omitempty"`
	SnapshotIndex     uint64
	CreateIndex       uint64
	ModifyIndex       uint64
	CreateTime        int64
	ModifyTime        int64
}

// Terminal reports whether the evaluation is finished.
func (e *Evaluation) Terminal() bool {
	switch e.Status {
	case EvalStatusComplete, EvalStatusFailed, EvalStatusCancelled:
		return true
	}
	return false
}

// DueBy reports whether e is pending with no delay left at now: the
// broker has it, or will have it, to schedule at once.
func (e *Evaluation) DueBy(now time.Time) bool {
	return e != nil && e.Status == EvalStatusPending && e.Wait <= 0 && !e.WaitUntil.After(now)
}

// Copy returns a deep copy.
func (e *Evaluation) Copy() *Evaluation {
	if e == nil {
		return nil
	}
	c := *e
	if e.FailedTGAllocs != nil {
		c.FailedTGAllocs = make(map[string]*AllocationMetric, len(e.FailedTGAllocs))
		for k, v := range e.FailedTGAllocs {
			m := *v
			c.FailedTGAllocs[k] = &m
		}
	}
	c.QueuedAllocations = copyMap(e.QueuedAllocations)
	return &c
}
