package structs

// AllocUpdateDesiredTransitionRequest marks allocations for a transition the
// scheduler acts on; Evals (stamped by the leader) are stored in the same
// transaction so the scheduler runs at once. Sent by the leader's deployment
// watcher to have unhealthy allocations of a deployment replaced while its
// progress deadline runs.
type AllocUpdateDesiredTransitionRequest struct {
	// Allocs maps allocation IDs to the transition to merge into each.
	Allocs map[string]*DesiredTransition
	Evals  []*Evaluation
	// UpdatedAt is the leader's clock, UnixNano: the allocations' ModifyTime.
	UpdatedAt int64
}
