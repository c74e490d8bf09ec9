package structs

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
)

// Desired statuses: what the servers want of an allocation.
const (
	AllocDesiredStatusRun   = "run"
	AllocDesiredStatusStop  = "stop"
	AllocDesiredStatusEvict = "evict"
)

// Client statuses: what the client reports of an allocation.
const (
	AllocClientStatusPending  = "pending"
	AllocClientStatusRunning  = "running"
	AllocClientStatusComplete = "complete"
	AllocClientStatusFailed   = "failed"
	AllocClientStatusLost     = "lost"
	AllocClientStatusUnknown  = "unknown"
)

// Desired descriptions the scheduler writes, as Nomad's.
const (
	AllocNotNeeded         = "alloc not needed due to job update"
	AllocMigrating         = "alloc is being migrated"
	AllocUpdating          = "alloc is being updated due to job update"
	AllocLost              = "alloc is lost since its node is down"
	AllocRescheduled       = "alloc was rescheduled because it failed"
	AllocCanaryNotPromoted = "alloc was a canary that was not promoted"
	AllocJobStopped        = "alloc not needed since job was stopped"
	// AllocReconnected: of an allocation that reconnected and its
	// replacement, the one not kept.
	AllocReconnected = "alloc not needed due to disconnected client reconnect"
	// AllocUnknown is the client description of an allocation whose node
	// disconnected.
	AllocUnknown = "alloc is unknown since its node is disconnected"
)

// AllocMaxRunDurationExceeded is the client description of an allocation
// its client stopped at the group's max_run_duration, as Nomad's.
const AllocMaxRunDurationExceeded = "allocation exceeded max_run_duration"

// Allocation is one placed copy of a task group on a node.
type Allocation struct {
	ID                 string              `codec:",omitempty"`
	Namespace          string              `codec:",omitempty"`
	EvalID             string              `codec:",omitempty"`
	Name               string              `codec:",omitempty"`
	NodeID             string              `codec:",omitempty"`
	NodeName           string              `codec:",omitempty"`
	JobID              string              `codec:",omitempty"`
	Job                *Job                `codec:",omitempty"`
	TaskGroup          string              `codec:",omitempty"`
	AllocatedResources *AllocatedResources `codec:",omitempty"`
	DesiredStatus      string              `codec:",omitempty"`
	DesiredDescription string              `codec:",omitempty"`
	DesiredTransition  DesiredTransition   `codec:",omitempty"`
	ClientStatus       string              `codec:",omitempty"`
	ClientDescription  string              `codec:",omitempty"`
	TaskStates         map[string]*TaskState
	DeploymentID       string                 `codec:",omitempty"`
	DeploymentStatus   *AllocDeploymentStatus `codec:",omitempty"`
	FollowupEvalID     string                 `codec:",omitempty"`
	PreviousAllocation string                 `codec:",omitempty"`
	NextAllocation     string                 `codec:",omitempty"`
	RescheduleTracker  *RescheduleTracker     `codec:",omitempty"`
	// NetworkStatus is the allocation's own network, as its client
	// reports it (bridge mode; nil otherwise).
	NetworkStatus *AllocNetworkStatus `json:",omitempty"`
	// AllocStates are the changes the servers recorded with their time
	// (a node's disconnection and reconnection).
	AllocStates []*AllocState     `json:",omitempty"`
	Metrics     *AllocationMetric `json:",omitempty"`
	// Zone (drover) is, for a group that rolls out by zones, the zone of
	// the alloc's node (structs.ZoneOf of the group's zones attribute),
	// stamped when it is placed.
	Zone string `json:",omitempty"`
	// DesiredRestart (drover), set by a job restart in place, asks the
	// client to restart the alloc's tasks once for that deployment.
	DesiredRestart   *DesiredRestart `json:",omitempty"`
	CreateIndex      uint64          `codec:",omitempty"`
	ModifyIndex      uint64          `codec:",omitempty"`
	AllocModifyIndex uint64          `codec:",omitempty"`
	CreateTime       int64           `codec:",omitempty"`
	ModifyTime       int64           `codec:",omitempty"`
}

// AllocName returns the name of a group's index-th allocation.
func AllocName(job, group string, index int) string {
	return fmt.Sprintf("%s.%s[%d]", job, group, index)
}

// Index returns the allocation's index parsed from its name, or -1.
func (a *Allocation) Index() int {
	l := strings.LastIndexByte(a.Name, '[')
	if l < 0 || !strings.HasSuffix(a.Name, "]") {
		return -1
	}
	n, err := strconv.Atoi(a.Name[l+1 : len(a.Name)-1])
	if err != nil {
		return -1
	}
	return n
}

// ServersIndex is the index of the servers' last change to the
// allocation: its AllocModifyIndex, or its ModifyIndex for one written
// without it. A client's allocs-sync compares these (its own reports move
// ModifyIndex only).
func (a *Allocation) ServersIndex() uint64 {
	if a.AllocModifyIndex > 0 {
		return a.AllocModifyIndex
	}
	return a.ModifyIndex
}

// TerminalStatus reports whether the allocation is stopped or finished,
// whether by desire or by its client.
func (a *Allocation) TerminalStatus() bool {
	switch a.DesiredStatus {
	case AllocDesiredStatusStop, AllocDesiredStatusEvict:
		return true
	}
	return a.ClientTerminalStatus()
}

// ClientTerminalStatus reports whether the client says it has finished.
func (a *Allocation) ClientTerminalStatus() bool {
	switch a.ClientStatus {
	case AllocClientStatusComplete, AllocClientStatusFailed, AllocClientStatusLost:
		return true
	}
	return false
}

// JobVersion returns the version of the job the allocation runs.
func (a *Allocation) JobVersion() uint64 {
	if a.Job == nil {
		return 0
	}
	return a.Job.Version
}

// IsCanary reports whether the allocation was placed as a canary.
func (a *Allocation) IsCanary() bool {
	return a.DeploymentStatus != nil && a.DeploymentStatus.Canary
}

// IsHealthy / IsUnhealthy report the deployment health the client set.
func (a *Allocation) IsHealthy() bool {
	return a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy
}

// IsUnhealthy reports whether the allocation was marked unhealthy.
func (a *Allocation) IsUnhealthy() bool {
	return a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && !*a.DeploymentStatus.Healthy
}

// Copy returns a deep copy; the embedded Job pointer is shared, as jobs are
// immutable once stored.
func (a *Allocation) Copy() *Allocation {
	if a == nil {
		return nil
	}
	c := *a
	c.AllocatedResources = a.AllocatedResources.Copy()
	c.DesiredTransition = a.DesiredTransition.Copy()
	if a.TaskStates != nil {
		c.TaskStates = make(map[string]*TaskState, len(a.TaskStates))
		for k, v := range a.TaskStates {
			c.TaskStates[k] = v.Copy()
		}
	}
	c.DeploymentStatus = a.DeploymentStatus.Copy()
	c.DesiredRestart = a.DesiredRestart.Copy()
	c.RescheduleTracker = a.RescheduleTracker.Copy()
	c.NetworkStatus = a.NetworkStatus.Copy()
	if a.AllocStates != nil {
		c.AllocStates = make([]*AllocState, len(a.AllocStates))
		for i, s := range a.AllocStates {
			if s != nil {
				cs := *s
				c.AllocStates[i] = &cs
			}
		}
	}
	if a.Metrics != nil {
		m := *a.Metrics
		c.Metrics = &m
	}
	return &c
}

// AllocationListStub is the summary list endpoints return.
type AllocationListStub struct {
	ID                 string
	EvalID             string
	Name               string
	Namespace          string
	NodeID             string
	NodeName           string
	JobID              string
	JobType            string
	JobVersion         uint64
	TaskGroup          string
	DesiredStatus      string
	DesiredDescription string
	ClientStatus       string
	ClientDescription  string
	TaskStates         map[string]*TaskState
	DeploymentStatus   *AllocDeploymentStatus
	FollowupEvalID     string
	NextAllocation     string
	RescheduleTracker  *RescheduleTracker
	// Zone (drover) is the alloc's zone in a group rolled by zones.
	Zone string `json:",omitempty"`
	// AllocatedResources is set only when a list asks for it
	// (GET /v1/allocations?resources=true), as Nomad's.
	AllocatedResources *AllocatedResources `json:",omitempty"`
	CreateIndex        uint64
	ModifyIndex        uint64
	CreateTime         int64
	ModifyTime         int64
}

// Stub returns the list form of the allocation.
func (a *Allocation) Stub() *AllocationListStub {
	s := &AllocationListStub{
		ID: a.ID, EvalID: a.EvalID, Name: a.Name, Namespace: a.Namespace,
		NodeID: a.NodeID, NodeName: a.NodeName, JobID: a.JobID,
		JobVersion: a.JobVersion(), TaskGroup: a.TaskGroup,
		DesiredStatus: a.DesiredStatus, DesiredDescription: a.DesiredDescription,
		ClientStatus: a.ClientStatus, ClientDescription: a.ClientDescription,
		TaskStates: a.TaskStates, DeploymentStatus: a.DeploymentStatus,
		FollowupEvalID: a.FollowupEvalID, NextAllocation: a.NextAllocation,
		RescheduleTracker: a.RescheduleTracker, Zone: a.Zone,
		CreateIndex: a.CreateIndex, ModifyIndex: a.ModifyIndex,
		CreateTime: a.CreateTime, ModifyTime: a.ModifyTime,
	}
	if a.Job != nil {
		s.JobType = a.Job.Type
	}
	return s
}

// AllocDeploymentStatus is the allocation's health within its deployment.
// Healthy is nil until the client (or an operator, for manual health)
// decides; Timestamp is when it did.
type AllocDeploymentStatus struct {
	Healthy     *bool     `codec:",omitempty"`
	Timestamp   time.Time `codec:",omitempty"`
	Canary      bool      `codec:",omitempty"`
	ModifyIndex uint64    `codec:",omitempty"`
}

// Copy returns a copy.
func (s *AllocDeploymentStatus) Copy() *AllocDeploymentStatus {
	if s == nil {
		return nil
	}
	c := *s
	if s.Healthy != nil {
		h := *s.Healthy
		c.Healthy = &h
	}
	return &c
}

// DesiredTransition marks an allocation for a transition the scheduler
// acts on, such as replacement after it failed its deployment.
type DesiredTransition struct {
	Migrate         *bool `json:",omitempty"`
	Reschedule      *bool `json:",omitempty"`
	ForceReschedule *bool `json:",omitempty"`
	// NoShutdownDelay is Nomad's mark of an allocation stopped without
	// its group's and its tasks' shutdown_delay.
	NoShutdownDelay *bool `json:",omitempty"`
}

// AllocStopOptions are an allocation stop's options, Nomad's query
// parameters: Reschedule (?reschedule=true) marks the allocation for
// rescheduling as well as migration, NoShutdownDelay
// (?no_shutdown_delay=true) marks it NoShutdownDelay.
type AllocStopOptions struct {
	Reschedule, NoShutdownDelay bool
}

// Copy returns a deep copy.
func (d DesiredTransition) Copy() DesiredTransition {
	c := d
	for _, p := range []**bool{&c.Migrate, &c.Reschedule, &c.ForceReschedule, &c.NoShutdownDelay} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	return c
}

// ShouldIgnoreShutdownDelay reports whether the allocation stops without
// its shutdown delays.
func (d DesiredTransition) ShouldIgnoreShutdownDelay() bool {
	return d.NoShutdownDelay != nil && *d.NoShutdownDelay
}

// ShouldReschedule reports whether the allocation is marked for replacement.
func (d DesiredTransition) ShouldReschedule() bool { return d.Reschedule != nil && *d.Reschedule }

// ShouldForceReschedule reports whether replacement is forced.
func (d DesiredTransition) ShouldForceReschedule() bool {
	return d.ForceReschedule != nil && *d.ForceReschedule
}

// ShouldMigrate reports whether the allocation is to move off its node.
func (d DesiredTransition) ShouldMigrate() bool { return d.Migrate != nil && *d.Migrate }

// RescheduleTracker records earlier reschedule attempts of an allocation's
// lineage.
type RescheduleTracker struct {
	Events []*RescheduleEvent
}

// Copy returns a deep copy.
func (r *RescheduleTracker) Copy() *RescheduleTracker {
	if r == nil {
		return nil
	}
	c := &RescheduleTracker{Events: make([]*RescheduleEvent, len(r.Events))}
	for i, e := range r.Events {
		ee := *e
		c.Events[i] = &ee
	}
	return c
}

// RescheduleEvent is one reschedule attempt.
type RescheduleEvent struct {
	RescheduleTime int64         `codec:",omitempty"`
	PrevAllocID    string        `codec:",omitempty"`
	PrevNodeID     string        `codec:",omitempty"`
	Delay          time.Duration `codec:",omitempty"`
}

// AllocatedResources is what the scheduler reserved for an allocation.
type AllocatedResources struct {
	Tasks  map[string]*AllocatedTaskResources
	Shared AllocatedSharedResources
}

// AllocatedTaskResources is one task's share.
type AllocatedTaskResources struct {
	Cpu    AllocatedCpuResources
	Memory AllocatedMemoryResources
}

// AllocatedCpuResources is CPU in MHz.
type AllocatedCpuResources struct {
	CpuShares int64 `codec:",omitempty"`
}

// AllocatedMemoryResources is memory in MB.
type AllocatedMemoryResources struct {
	MemoryMB    int64 `codec:",omitempty"`
	MemoryMaxMB int64 `codec:",omitempty"`
}

// AllocatedSharedResources is what the group's tasks share.
type AllocatedSharedResources struct {
	DiskMB   int64              `codec:",omitempty"`
	Networks []*NetworkResource `json:",omitempty"`
	Ports    []PortMapping
}

// Copy returns a deep copy.
func (r *AllocatedResources) Copy() *AllocatedResources {
	if r == nil {
		return nil
	}
	c := &AllocatedResources{Shared: r.Shared}
	c.Shared.Networks = copyNetworks(r.Shared.Networks)
	c.Shared.Ports = copySlice(r.Shared.Ports)
	if r.Tasks != nil {
		c.Tasks = make(map[string]*AllocatedTaskResources, len(r.Tasks))
		for k, v := range r.Tasks {
			t := *v
			c.Tasks[k] = &t
		}
	}
	return c
}

// Comparable sums the allocation's reservation.
func (r *AllocatedResources) Comparable() ComparableResources {
	var c ComparableResources
	if r == nil {
		return c
	}
	for _, t := range r.Tasks {
		c.CPU += t.Cpu.CpuShares
		c.MemoryMB += t.Memory.MemoryMB
	}
	c.DiskMB = r.Shared.DiskMB
	return c
}

// AllocationMetric explains a placement decision, as Nomad's metrics: which
// nodes were filtered and which dimension was exhausted.
type AllocationMetric struct {
	NodesEvaluated     int `codec:",omitempty"`
	NodesFiltered      int `codec:",omitempty"`
	NodesInPool        int `codec:",omitempty"`
	NodesAvailable     map[string]int
	ClassFiltered      map[string]int
	ConstraintFiltered map[string]int
	NodesExhausted     int `codec:",omitempty"`
	ClassExhausted     map[string]int
	DimensionExhausted map[string]int
	QuotaExhausted     []string
	Scores             map[string]float64 `json:",omitempty"`
	AllocationTime     time.Duration      `codec:",omitempty"`
	CoalescedFailures  int                `codec:",omitempty"`
	// ScoreNode and NodeScore (drover) hold the one entry of Scores that
	// every placement records, the score of the node the alloc was placed
	// on (key ScoreNode + NormalizedScoreSuffix), as the state store keeps
	// it: a map of one entry per alloc cost some 300 bytes of every
	// server's heap. JSON shows the entry in Scores, as before; see
	// PlacementScore.
	ScoreNode string  `json:"-" codec:",omitempty"`
	NodeScore float64 `json:"-" codec:",omitempty"`
}

// NormalizedScoreSuffix follows a node ID in AllocationMetric.Scores: the
// placement score of that node (Nomad's "<node>.normalized-score").
const NormalizedScoreSuffix = ".normalized-score"

// PlacementScore returns the score the placement recorded for nodeID:
// ScoreNode's, or the entry of Scores.
func (m *AllocationMetric) PlacementScore(nodeID string) (float64, bool) {
	if m == nil {
		return 0, false
	}
	if m.ScoreNode != "" && m.ScoreNode == nodeID {
		return m.NodeScore, true
	}
	s, ok := m.Scores[nodeID+NormalizedScoreSuffix]
	return s, ok
}

// CompactScore moves the only entry of Scores, when it is nodeID's, to
// ScoreNode and NodeScore. m must be the caller's to change (its maps
// are not changed).
func (m *AllocationMetric) CompactScore(nodeID string) {
	if m == nil || len(m.Scores) != 1 || nodeID == "" {
		return
	}
	s, ok := m.Scores[nodeID+NormalizedScoreSuffix]
	if !ok {
		return
	}
	m.ScoreNode, m.NodeScore, m.Scores = nodeID, s, nil
}

// MarshalJSON writes the metric as Nomad's, ScoreNode's score an entry
// of Scores.
func (m AllocationMetric) MarshalJSON() ([]byte, error) {
	type plain AllocationMetric
	p := plain(m)
	if p.ScoreNode != "" {
		scores := make(map[string]float64, len(p.Scores)+1)
		maps.Copy(scores, p.Scores)
		scores[p.ScoreNode+NormalizedScoreSuffix] = p.NodeScore
		p.Scores = scores
	}
	return json.Marshal(p)
}
