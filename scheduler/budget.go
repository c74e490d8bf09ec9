package scheduler

import "time"

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
	// Down counts failed old-version allocs waiting for replacement: they
	// serve nothing, so replacing them takes no capacity.
	Down int
	// Blocked is set when the deployment is paused or failed, or canaries
	// wait for promotion.
	Blocked bool
	// Stagger is the pause between batches (UpdateStrategy.BatchPause);
	// zero means none: the window refills as allocs turn healthy.
	Stagger time.Duration
	// LastHealthy is when the latest live alloc of the deployment became
	// healthy (its deployment status time); zero when none has.
	LastHealthy time.Time
	// Now is the time of the pass.
	Now time.Time
}

// Budget returns how many destructive replacements a group may start in
// this pass:
//
//	max_parallel − allocs of the deployment with unknown health,
//
// zero when blocked or when any alloc of the deployment is unhealthy, and
// never so many that the allocs still serving fall below
// count − max_parallel: a failing new version (whose allocs die rather than
// turn unhealthy) cannot eat into the old capacity. Failed old allocs
// (Down) may always be replaced within max_parallel.
//
// With a stagger the rollout goes in batches: nothing starts while an alloc
// of the deployment has unknown health, and the next batch starts at
// LastHealthy + Stagger. Before then Budget returns 0 and that time as
// wake, when the pass should run again; wake is zero otherwise.
func Budget(in BudgetInput) (n int, wake time.Time) {
	if in.Blocked || in.Unhealthy > 0 || in.MaxParallel <= 0 {
		return 0, time.Time{}
	}
	if in.Stagger > 0 {
		if in.Unknown > 0 {
			return 0, time.Time{}
		}
		if !in.LastHealthy.IsZero() {
			if at := in.LastHealthy.Add(in.Stagger); in.Now.Before(at) {
				return 0, at
			}
		}
	}
	limit := in.MaxParallel - in.Unknown
	floor := in.Count - in.MaxParallel
	if floor < 0 {
		floor = 0
	}
	if spare := in.Down + max(in.Available-floor, 0); spare < limit {
		limit = spare
	}
	if limit < 0 {
		return 0, time.Time{}
	}
	return limit, time.Time{}
}
