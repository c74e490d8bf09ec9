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
}

// Active reports whether the deployment is still running or paused.
func (d *Deployment) Active() bool {
	if d == nil {
		return false
	}
	switch d.Status {
	case DeploymentStatusRunning, DeploymentStatusPaused:
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

// RequiresPromotion reports whether some canary group is not promoted.
func (d *Deployment) RequiresPromotion() bool {
	for _, s := range d.TaskGroups {
		if s.DesiredCanaries > 0 && !s.Promoted {
			return true
		}
	}
	return false
}

// Copy returns a deep copy.
func (d *Deployment) Copy() *Deployment {
	if d == nil {
		return nil
	}
	c := *d
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
}

// Copy returns a deep copy.
func (s *DeploymentState) Copy() *DeploymentState {
	if s == nil {
		return nil
	}
	c := *s
	c.PlacedCanaries = copySlice(s.PlacedCanaries)
	return &c
}
