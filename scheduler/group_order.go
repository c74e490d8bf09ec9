package scheduler

import (
	"slices"

	"github.com/droverhq/drover/structs"
)

// Groups one at a time (website/rollouts.md, "Groups one at a time"): a
// job whose update block has group_order rolls its groups in turn. The
// deployment records each group's Order and State; this pass only starts
// batches (canaries, replacements, in-place updates) in the groups it
// finds "rolling", and the deployment watcher moves the turn on.

// groupGate returns, for a job that rolls its groups in order, the groups
// that may start batches in this pass; nil when every group may.
func (r *reconciler) groupGate(byGroup map[string][]*structs.Allocation) map[string]bool {
	order := r.job.GroupRolloutOrder()
	if order == nil {
		return nil
	}
	gate := map[string]bool{}
	if d := r.deployment; d != nil && hasGroupStates(d) {
		for name, s := range d.TaskGroups {
			if s != nil && (s.State == structs.GroupStateRolling || s.State == structs.GroupStateDone) {
				gate[name] = true
			}
		}
		// Groups new to the deployment (not yet in it) wait their turn,
		// unless they are first versions (placed at once).
		for _, name := range order {
			if d.TaskGroups[name] == nil && !r.changes(byGroup[name]) {
				gate[name] = true
			}
		}
		return gate
	}
	// The deployment starts now: the first group in order with a change
	// takes the turn; groups without old allocs (first versions) place at
	// once.
	turn := false
	for _, name := range order {
		switch {
		case !r.changes(byGroup[name]):
			gate[name] = true
		case !turn:
			gate[name], turn = true, true
		}
	}
	return gate
}

// changes reports whether some live alloc of a group runs another spec
// than the job's.
func (r *reconciler) changes(allocs []*structs.Allocation) bool {
	for _, a := range allocs {
		if !a.TerminalStatus() && !a.IsCanary() && r.updateKind(a) != UpdateNone {
			return true
		}
	}
	return false
}

func hasGroupStates(d *structs.Deployment) bool {
	for _, s := range d.TaskGroups {
		if s != nil && s.Order > 0 {
			return true
		}
	}
	return false
}

// orderGroupState places a new group state in the job's rollout order:
// its Order, and "rolling" when the group may start now, else "waiting".
func (r *reconciler) orderGroupState(s *structs.DeploymentState, group string) {
	order := r.job.GroupRolloutOrder()
	if order == nil {
		return
	}
	s.Order = slices.Index(order, group) + 1
	s.State = structs.GroupStateWaiting
	if r.gate[group] {
		s.State = structs.GroupStateRolling
	}
}
