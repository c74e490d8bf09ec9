package structs

import (
	"fmt"
	"time"
)

// Deployment statuses, as Nomad's.
const (
	DeploymentStatusRunning    = "running"
	DeploymentStatusPaused     = "paused"
	DeploymentStatusFailed     = "failed"
	DeploymentStatusSuccessful = "successful"
	DeploymentStatusCancelled  = "cancelled"
)

// Deployment status descriptions, as Nomad's.
const (
	DeploymentStatusDescriptionRunning               = "Deployment is running"
	DeploymentStatusDescriptionRunningNeedsPromotion = "Deployment is running but requires manual promotion"
	DeploymentStatusDescriptionRunningAutoPromotion  = "Deployment is running pending automatic promotion"
	DeploymentStatusDescriptionPaused                = "Deployment is paused"
	DeploymentStatusDescriptionSuccessful            = "Deployment completed successfully"
	DeploymentStatusDescriptionStoppedJob            = "Cancelled because job is stopped"
	DeploymentStatusDescriptionNewerJob              = "Cancelled due to newer version of job"
	DeploymentStatusDescriptionFailedAllocations     = "Failed due to unhealthy allocations"
	DeploymentStatusDescriptionProgressDeadline      = "Failed due to progress deadline"
	DeploymentStatusDescriptionFailedByUser          = "Deployment marked as failed"
)

// DeploymentStatusDescriptionRollback appends the revert target to a
// failure description.
func DeploymentStatusDescriptionRollback(base string, version uint64) string {
	return fmt.Sprintf("%s - rolling back to job version %d", base, version)
}

// DeploymentStatusDescriptionRollbackNoop says the stable version has the
// same spec as the failed one, so nothing is reverted.
func DeploymentStatusDescriptionRollbackNoop(base string, version uint64) string {
	return fmt.Sprintf("%s - not rolling back to stable job version %d as current job has same specification", base, version)
}

// DeploymentStatusDescriptionNoRollbackTarget says there is no stable
// version to revert to.
func DeploymentStatusDescriptionNoRollbackTarget(base string) string {
	return fmt.Sprintf("%s - no stable job version to auto revert to", base)
}

// Deployment tracks the rollout of one job version.
type Deployment struct {
	ID                 string
	Namespace          string
	JobID              string
	JobVersion         uint64
	JobModifyIndex     uint64
	JobSpecModifyIndex uint64
	JobCreateIndex     uint64
	TaskGroups         map[string]*DeploymentState
	Status             string
	StatusDescription  string
	CreateIndex        uint64
	ModifyIndex        uint64
	CreateTime         int64
	ModifyTime         int64

	// HealthIndex (drover only, derived like the live figures of
	// DeploymentState) is the highest raft index at which a live
	// allocation of the deployment, of any group, had its health recorded
	// healthy (its DeploymentStatus.ModifyIndex, or its ModifyIndex when
	// that is 0); 0 when none is healthy. An index above the latest
	// scheduling pass of the job means the next batch may start.
	HealthIndex uint64

	// Rollout bookkeeping (drover, part C of the rollout design), every
	// value stamped by the leader into the log so that a new leader
	// resumes exactly there.

	// RevertOf is the stable version a revert restores, when the
	// deployment rolls out a revert: canaries, first batch and checkpoints
	// are skipped.
	RevertOf *uint64 `json:",omitempty"`
	// PausedAt is when the current pause began; zero while running.
	PausedAt time.Time
	// ResumeAt is when a checkpoint pause resumes by itself
	// (checkpoint_delay); zero when it waits for an operator.
	ResumeAt time.Time

	// Restart, when set, makes the deployment a restart of its job
	// version (`job restart`, structs/restart.go) rather than its rollout.
	Restart *RestartSpec `json:",omitempty"`

	// IsMultiregion marks the deployment of a multi-region job's version:
	// its status moves through pending and blocked as the regions take
	// their turns (structs/multiregion.go).
	IsMultiregion bool
}

// IsRestart reports whether the deployment restarts its job version.
func (d *Deployment) IsRestart() bool { return d != nil && d.Restart != nil }

// Active reports whether the deployment is not finished: running or
// paused, or, as Nomad's, a multi-region deployment's pending (waiting
// its region's turn), blocked (done, waiting for the other regions) or
// unblocking.
func (d *Deployment) Active() bool {
	if d == nil {
		return false
	}
	switch d.Status {
	case DeploymentStatusRunning, DeploymentStatusPaused,
		DeploymentStatusPending, DeploymentStatusBlocked, DeploymentStatusUnblocking:
		return true
	}
	return false
}

// HasPlacedCanaries reports whether any group has placed canaries.
func (d *Deployment) HasPlacedCanaries() bool {
	for _, s := range d.TaskGroups {
		if len(s.PlacedCanaries) > 0 {
			return true
		}
	}
	return false
}

// RequiresPromotion reports whether some canary group is not promoted; a
// group that waits its turn (group_order) places no canaries yet and does
// not count.
func (d *Deployment) RequiresPromotion() bool {
	for _, s := range d.TaskGroups {
		if s.DesiredCanaries > 0 && !s.Promoted && !(s.Order > 0 && s.State == GroupStateWaiting) {
			return true
		}
	}
	return false
}

// AllPlaced reports whether the scheduler found no budgeted work left in
// any group (DeploymentState.AllPlaced): a healthy verdict then frees no
// slot a scheduling pass would fill. Skipping that pass matters most for
// a first version, whose every alloc is placed at once: 100,000 healthy
// verdicts would otherwise run the job's pass back to back for nothing.
func (d *Deployment) AllPlaced() bool {
	if d == nil || len(d.TaskGroups) == 0 {
		return false
	}
	for _, s := range d.TaskGroups {
		if s == nil || !s.AllPlaced {
			return false
		}
	}
	return true
}

// Copy returns a deep copy.
func (d *Deployment) Copy() *Deployment {
	if d == nil {
		return nil
	}
	c := *d
	if d.RevertOf != nil {
		v := *d.RevertOf
		c.RevertOf = &v
	}
	c.Restart = d.Restart.Copy()
	if d.TaskGroups != nil {
		c.TaskGroups = make(map[string]*DeploymentState, len(d.TaskGroups))
		for k, v := range d.TaskGroups {
			c.TaskGroups[k] = v.Copy()
		}
	}
	return &c
}

// DeploymentState is one group's progress within a deployment.
type DeploymentState struct {
	AutoRevert        bool
	AutoPromote       bool
	ProgressDeadline  time.Duration
	RequireProgressBy time.Time
	Promoted          bool
	PlacedCanaries    []string
	DesiredCanaries   int
	DesiredTotal      int
	PlacedAllocs      int
	HealthyAllocs     int
	UnhealthyAllocs   int

	// Live figures (drover only). Nomad's counters above count first
	// health verdicts and never go down; these follow the allocations as
	// they are now. The state store keeps them, in the same transaction
	// as every write of an allocation of the (active) deployment, so the
	// deployment watcher need not read the allocations; plans and clients
	// never set them (see AllocDeploymentShare).

	// LiveHealthyAllocs counts the group's allocations that are healthy
	// and not terminal.
	LiveHealthyAllocs int
	// LiveHealthyCanaries counts those of them that are canaries.
	LiveHealthyCanaries int
	// MarkedUnhealthyAllocs counts the group's allocations whose health
	// is unhealthy, terminal or not.
	MarkedUnhealthyAllocs int
	// UnhealthyAllocIDs names those allocations (sorted): the watcher
	// reads them, not every allocation of the deployment, to decide what
	// each failure calls for.
	UnhealthyAllocIDs []string `json:",omitempty"`

	// Rollout policies (drover, part C).

	// OnFailure is the group's failure action ("fail", "pause", "revert"),
	// copied from its update block when the deployment is created.
	OnFailure string
	// CheckpointsReached counts the group's checkpoints the rollout has
	// reached (paused at, or passed): the next batch stops at the next one.
	CheckpointsReached int
	// Order (1, 2, …) and State ("waiting", "rolling", "paused", "done",
	// "failed") place the group in a job that rolls its groups one at a
	// time (group_order); 0 and "" otherwise. DoneAt is when the group was
	// done (all its allocs new and healthy), from which
	// pause_between_groups is counted.
	Order  int       `json:",omitempty"`
	State  string    `json:",omitempty"`
	DoneAt time.Time `json:",omitzero"`
	// Zones are the group's zones in rollout order, when its update block
	// has zones.
	Zones []*ZoneState `json:",omitempty"`
	// FailuresAtPause is UnhealthyAllocs (the failures of the new version
	// so far) when the deployment last paused on a failure. A resume keeps
	// the count; only a newer failure pauses it again.
	FailuresAtPause int
	// AllPlaced (drover) is set by the scheduler once the group's pass
	// found no budgeted work left: every alloc of the version placed, no
	// old alloc waiting beside a surge replacement, no canary waiting for
	// promotion. A healthy verdict then calls for no scheduling pass (the
	// watcher alone decides what follows); false means it may.
	AllPlaced bool `json:",omitempty"`
	// Analyses are the group's analysis runs (analysis.go), in the order
	// they started.
	Analyses []*AnalysisRun `json:",omitempty"`
	// WaitReason is the deployment watcher's own sentence for why the
	// group's next batch has not started (a zone's budget, first_batch,
	// max_unhealthy, a checkpoint, an analysis run, a group waiting its
	// turn, …), written when it decides; empty when nothing holds it.
	WaitReason string `json:",omitempty"`
}

// Copy returns a deep copy.
func (s *DeploymentState) Copy() *DeploymentState {
	if s == nil {
		return nil
	}
	c := *s
	c.PlacedCanaries = copySlice(s.PlacedCanaries)
	c.UnhealthyAllocIDs = copySlice(s.UnhealthyAllocIDs)
	c.Analyses = CopyAnalysisRuns(s.Analyses)
	if s.Zones != nil {
		c.Zones = make([]*ZoneState, len(s.Zones))
		for i, z := range s.Zones {
			if z != nil {
				zc := *z
				c.Zones[i] = &zc
			}
		}
	}
	return &c
}

// RollbackDescription is the running description of a deployment that
// rolls out a revert (C.5).
func RollbackDescription(version uint64) string {
	return fmt.Sprintf("Rollback to version %d: canaries and checkpoints skipped", version)
}

// CheckpointDescription is the description of a deployment paused at a
// checkpoint of a group (C.3); checkpoint is as written ("10%" or "3").
func CheckpointDescription(checkpoint, group string, healthy, count int) string {
	return fmt.Sprintf("Deployment paused at checkpoint %s of group %s (%d/%d healthy)", checkpoint, group, healthy, count)
}

// MaxFailedPauseDescription is the description of a deployment paused
// because too many allocs of the new version failed (C.2).
func MaxFailedPauseDescription(failed, count, maxFailed int) string {
	return fmt.Sprintf("Deployment paused: %d of %d allocations of the new version failed, over max_failed %d", failed, count, maxFailed)
}

// Descriptions of the failures of part C's thresholds and of on_failure =
// "pause" (C.2). With "fail" or "revert" a progress deadline or unhealthy
// allocations keep part A's descriptions.
const (
	DeploymentStatusDescriptionPausedProgressDeadline = "Deployment paused due to progress deadline"
	DeploymentStatusDescriptionPausedAllocations      = "Deployment paused due to unhealthy allocations"
)

// MaxFailedDescription is the description of a deployment failed because
// too many allocs of the new version failed (C.2, on_failure "fail" or
// "revert").
func MaxFailedDescription(failed, count, maxFailed int) string {
	return fmt.Sprintf("Failed: %d of %d allocations of the new version failed, over max_failed %d", failed, count, maxFailed)
}

// MaxUnhealthyPauseDescription is the description of a deployment paused
// because too many allocs of a group serve nothing (C.2).
func MaxUnhealthyPauseDescription(notServing, count int, group string, maxUnhealthy int) string {
	return fmt.Sprintf("Deployment paused: %d of %d allocations of group %s are not serving, over max_unhealthy %d", notServing, count, group, maxUnhealthy)
}

// MaxUnhealthyDescription is the description of a deployment failed
// because too many allocs of a group serve nothing (C.2, on_failure "fail"
// or "revert").
func MaxUnhealthyDescription(notServing, count int, group string, maxUnhealthy int) string {
	return fmt.Sprintf("Failed: %d of %d allocations of group %s are not serving, over max_unhealthy %d", notServing, count, group, maxUnhealthy)
}

// GroupServingPauseDescription is the description of a deployment paused
// because an earlier group, done, no longer serves fully when a later one
// would start (group_order).
func GroupServingPauseDescription(group string, healthy, total int, next string) string {
	return fmt.Sprintf("Deployment paused: group %s is not fully serving (%d/%d healthy) before group %s starts", group, healthy, total, next)
}

// GroupServingDescription is the description of a deployment failed
// because an earlier group, done, no longer serves fully when a later one
// would start (group_order; on_failure "fail" or "revert").
func GroupServingDescription(group string, healthy, total int, next string) string {
	return fmt.Sprintf("Failed: group %s is not fully serving (%d/%d healthy) before group %s starts", group, healthy, total, next)
}

// ZoneBudgetPauseDescription is the description of a deployment paused
// because the new allocs that failed in a zone reached its disruption
// budget (C.4).
func ZoneBudgetPauseDescription(failed int, zone string, budget int) string {
	return fmt.Sprintf("Deployment paused: %d allocations failed in zone %s, reaching its disruption budget %d", failed, zone, budget)
}

// ZoneBudgetDescription is the description of a deployment failed because
// the new allocs that failed in a zone reached its disruption budget (C.4,
// on_failure "fail" or "revert").
func ZoneBudgetDescription(failed int, zone string, budget int) string {
	return fmt.Sprintf("Failed: %d allocations failed in zone %s, reaching its disruption budget %d", failed, zone, budget)
}
