package scheduler

// BudgetInput is what one group's rollout budget depends on in a pass.
// Part C of the rollout design (percent max_parallel, max_surge, zones,
// failure budgets) extends this struct and Budget, and nothing else.
type BudgetInput struct {
	// MaxParallel is the group's max_parallel (> 0 for a rolling group).
	MaxParallel int
	// Count is the number of slots the group fills now (existing allocs
	// and their replacements, at most the desired count).
	Count int
	// Unknown counts live allocs of the current deployment whose health is
	// not yet known.
	Unknown int
	// Unhealthy counts live allocs of the current deployment marked
	// unhealthy.
	Unhealthy int
	// Available counts live allocs that serve: old-version allocs, and
	// current-deployment allocs marked healthy.
	Available int
	// Blocked is set when the deployment is paused or failed, or canaries
	// wait for promotion.
	Blocked bool
}

// Budget returns how many destructive replacements a group may start in
// this pass:
//
//	max_parallel − allocs of the deployment with unknown health,
//
// zero when blocked or when any alloc of the deployment is unhealthy, and
// never so many that the allocs still serving fall below
// count − max_parallel: a failing new version (whose allocs die rather than
// turn unhealthy) cannot eat into the old capacity.
func Budget(in BudgetInput) int {
	if in.Blocked || in.Unhealthy > 0 || in.MaxParallel <= 0 {
		return 0
	}
	limit := in.MaxParallel - in.Unknown
	floor := in.Count - in.MaxParallel
	if floor < 0 {
		floor = 0
	}
	if spare := in.Available - floor; spare < limit {
		limit = spare
	}
	if limit < 0 {
		return 0
	}
	return limit
}
