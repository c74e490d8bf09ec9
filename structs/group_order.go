package structs

import (
	"fmt"
	"slices"
)

// Groups one at a time (kops' instance groups): a job-level update block's
// group_order rolls the job's groups in turn.

// Group states, in a deployment of a job that rolls its groups in order
// (DeploymentState.State); the same words as zones'.
const (
	GroupStateWaiting = ZoneStateWaiting
	GroupStateRolling = ZoneStateRolling
	GroupStatePaused  = ZoneStatePaused
	GroupStateDone    = ZoneStateDone
	GroupStateFailed  = ZoneStateFailed
)

// GroupsInOrder reports whether the job rolls its groups one at a time.
func (j *Job) GroupsInOrder() bool {
	return j != nil && !RunsToCompletion(j.Type) && j.Update != nil && len(j.Update.GroupOrder) > 0
}

// GroupRolloutOrder returns the job's group names in rollout order: those
// group_order names first, in its order, then the others as the job
// declares them. Nil when the job does not roll its groups in order.
func (j *Job) GroupRolloutOrder() []string {
	if !j.GroupsInOrder() {
		return nil
	}
	var out []string
	for _, name := range j.Update.GroupOrder {
		if j.LookupTaskGroup(name) != nil && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, tg := range j.TaskGroups {
		if tg != nil && !slices.Contains(out, tg.Name) {
			out = append(out, tg.Name)
		}
	}
	return out
}

// GroupWaitsDescription is the running description of a deployment whose
// group waits for an earlier one.
func GroupWaitsDescription(group, earlier string) string {
	return fmt.Sprintf("Deployment is running: group %s waits for group %s", group, earlier)
}
