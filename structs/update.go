package structs

import "time"

// Health check modes of an update block.
const (
	UpdateHealthCheckChecks     = "checks"
	UpdateHealthCheckTaskStates = "task_states"
	UpdateHealthCheckManual     = "manual"
)

// Update defaults, as website/rollouts.md part A and Nomad.
const (
	DefaultMaxParallel      = 1
	DefaultHealthCheck      = UpdateHealthCheckChecks
	DefaultMinHealthyTime   = 10 * time.Second
	DefaultHealthyDeadline  = 5 * time.Minute
	DefaultProgressDeadline = 10 * time.Minute
	DefaultStagger          = 30 * time.Second
)

// UpdateStrategy is a group's merged, defaulted update block. MaxParallel 0
// means no deployment: every alloc is replaced at once.
type UpdateStrategy struct {
	Stagger time.Duration
	// StaggerSet is set when the job writes stagger itself (at job or
	// group level; in API JSON, a value other than Nomad's 30s default).
	// Only then is Stagger the pause between batches: Nomad's default
	// would slow every rollout down.
	StaggerSet       bool `json:",omitempty"`
	MaxParallel      int
	HealthCheck      string
	MinHealthyTime   time.Duration
	HealthyDeadline  time.Duration
	ProgressDeadline time.Duration
	AutoRevert       bool
	AutoPromote      bool
	Canary           int

	// Drover's rollout policies (see update_policies.go); nil or empty
	// when not written.

	// MaxParallelPercent is max_parallel written as a percent of the
	// group's count; MaxParallel is then that share resolved (ParallelFor).
	MaxParallelPercent *int `json:",omitempty"`
	// MaxSurge: how many of a batch's replacements start before their old
	// allocs stop (kops' maxSurge).
	MaxSurge *Amount
	// FirstBatch: the size of a group's first batch, which must be wholly
	// healthy before the next one starts (kops' single first instance).
	FirstBatch *Amount
	// UnhealthyFirst replaces every failed or unhealthy old alloc first,
	// all at once (Azure's prioritizeUnhealthyInstances).
	UnhealthyFirst bool
	// MaxUnhealthy: no batch starts while more allocs of the group than
	// this serve nothing (Azure's maxUnhealthyInstancePercent).
	MaxUnhealthy *Amount
	// MaxFailed: how many new allocs may fail during the deployment before
	// it takes its OnFailure action (Azure's maxUnhealthyUpgradedInstance-
	// Percent, hawkBit's error threshold).
	MaxFailed *Amount
	// OnFailure is "fail", "pause" or "revert" (FailureAction resolves it).
	OnFailure string
	// Checkpoints pause the deployment when that many new allocs of the
	// group are healthy (hawkBit's groups, Argo's pause steps).
	Checkpoints []Amount
	// CheckpointDelay resumes a checkpoint pause by itself after that long;
	// zero waits for an operator.
	CheckpointDelay time.Duration
	// Zones rolls the group zone by zone, or each zone within its own
	// width (zones.go); nil: no zones.
	Zones *ZoneStrategy `json:",omitempty"`
	// Analyses gate the rollout on the service's metrics (analysis.go);
	// the job level's are merged into each group's by name.
	Analyses []*Analysis `json:",omitempty"`

	// Job level only (Job.Update; group_order.go): GroupOrder rolls the
	// job's groups one at a time, the named ones first in this order, the
	// others in the order the job declares them; PauseBetweenGroups is the
	// pause after a group is done before the next one starts.
	GroupOrder         []string      `json:",omitempty"`
	PauseBetweenGroups time.Duration `json:",omitempty"`
}

// DefaultUpdateStrategy returns the defaults every service and system group
// gets when nothing is written.
func DefaultUpdateStrategy() *UpdateStrategy {
	return &UpdateStrategy{
		Stagger:          DefaultStagger,
		MaxParallel:      DefaultMaxParallel,
		HealthCheck:      DefaultHealthCheck,
		MinHealthyTime:   DefaultMinHealthyTime,
		HealthyDeadline:  DefaultHealthyDeadline,
		ProgressDeadline: DefaultProgressDeadline,
	}
}

// Copy returns a copy.
func (u *UpdateStrategy) Copy() *UpdateStrategy {
	if u == nil {
		return nil
	}
	c := *u
	if u.MaxParallelPercent != nil {
		p := *u.MaxParallelPercent
		c.MaxParallelPercent = &p
	}
	c.MaxSurge = copyAmount(u.MaxSurge)
	c.FirstBatch = copyAmount(u.FirstBatch)
	c.MaxUnhealthy = copyAmount(u.MaxUnhealthy)
	c.MaxFailed = copyAmount(u.MaxFailed)
	c.Checkpoints = copySlice(u.Checkpoints)
	c.Zones = u.Zones.Copy()
	c.Analyses = CopyAnalyses(u.Analyses)
	c.GroupOrder = copySlice(u.GroupOrder)
	return &c
}

// BatchPause returns the pause between rollout batches: Stagger when the
// job sets it, else zero.
func (u *UpdateStrategy) BatchPause() time.Duration {
	if u == nil || !u.StaggerSet {
		return 0
	}
	return u.Stagger
}

// Rolling reports whether changes to the group roll out through a
// deployment (max_parallel > 0).
func (u *UpdateStrategy) Rolling() bool {
	return u != nil && (u.MaxParallel > 0 || u.MaxParallelPercent != nil)
}
