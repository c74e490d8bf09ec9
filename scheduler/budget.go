package scheduler

import "time"

// BudgetInput is what one group's rollout budget depends on in a pass.
// The rollout policies of part C of the rollout design (percent widths,
// surge, first batch, checkpoints, failure thresholds) enter here and in
// Budget; the reconciler only gathers the counts and picks the allocs.
type BudgetInput struct {
	// MaxParallel is the group's batch width, resolved against its count
	// (UpdateStrategy.ParallelFor; > 0 for a rolling group).
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

	// Surge is max_surge resolved (UpdateStrategy.SurgeFor): how many of
	// the batch's replacements may start before their old allocs stop.
	Surge int
	// Extra counts old allocs still running beside a replacement started
	// by surge (they stop once it is healthy).
	Extra int
	// FirstBatch is first_batch resolved (UpdateStrategy.FirstBatchFor);
	// 0 when not set. Until that many new allocs are healthy, no more than
	// that many are started.
	FirstBatch int
	// NewAllocs counts live allocs of the current deployment, of any
	// health; NewHealthy those of them marked healthy.
	NewAllocs  int
	NewHealthy int
	// Checkpoint is the next checkpoint of the group (healthy new allocs
	// at which the rollout pauses); 0 when none is ahead. No batch starts
	// more new allocs than it leaves room for.
	Checkpoint int
	// ToleratesFailures is set when max_failed is: an unhealthy new alloc
	// then stops nothing (it is replaced per its reschedule policy) and
	// holds its place in the batch until replaced.
	ToleratesFailures bool
	// LimitUnhealthy says MaxUnhealthy is set: no batch starts while more
	// than MaxUnhealthy of the group's allocs (any version) are not
	// serving (NotServing).
	LimitUnhealthy bool
	MaxUnhealthy   int
	NotServing     int
}

// Batch is what a group may start in one pass.
type Batch struct {
	// Start is how many replacements may start.
	Start int
	// Surge is how many of them start before their old allocs stop; the
	// rest stop their old alloc in the same plan. Failed old allocs (Down)
	// are always among the rest.
	Surge int
	// Wake, when not zero, is when the pass should run again: the next
	// batch waits for its stagger.
	Wake time.Time
}

// Budget returns what a group may start in this pass. Its width is
//
//	max_parallel − new allocs in flight (health not yet known),
//
// cut to what the first batch and the next checkpoint leave room for, and
// to what capacity allows: failed old allocs (Down) may always be
// replaced; up to Surge − Extra replacements start beside their old
// allocs; the rest stop old allocs only while those still serving stay at
// or above count − max(0, max_parallel − surge) (with no surge: a failing
// new version, whose allocs die rather than turn unhealthy, cannot eat into
// the old capacity below count − max_parallel).
//
// Nothing starts when blocked, when more allocs than max_unhealthy serve
// nothing, or — unless failures are tolerated (max_failed) — when any new
// alloc is unhealthy.
//
// With a stagger the rollout goes in batches: nothing starts while an alloc
// of the deployment is in flight, and the next batch starts at
// LastHealthy + Stagger; before then the batch is empty with that Wake.
func Budget(in BudgetInput) Batch {
	if in.Blocked || in.MaxParallel <= 0 {
		return Batch{}
	}
	if in.Unhealthy > 0 && !in.ToleratesFailures {
		return Batch{}
	}
	if in.LimitUnhealthy && in.NotServing > in.MaxUnhealthy {
		return Batch{}
	}
	inflight := in.Unknown
	if in.ToleratesFailures {
		inflight += in.Unhealthy
	}
	if in.Stagger > 0 {
		if inflight > 0 {
			return Batch{}
		}
		if !in.LastHealthy.IsZero() {
			if at := in.LastHealthy.Add(in.Stagger); in.Now.Before(at) {
				return Batch{Wake: at}
			}
		}
	}
	limit := in.MaxParallel - inflight
	if in.FirstBatch > 0 && in.NewHealthy < in.FirstBatch {
		limit = min(limit, in.FirstBatch-in.NewAllocs)
	}
	if in.Checkpoint > 0 {
		limit = min(limit, in.Checkpoint-in.NewAllocs)
	}
	if limit <= 0 {
		return Batch{}
	}
	down := min(in.Down, limit)
	limit -= down
	surge := max(0, min(limit, in.Surge-in.Extra))
	limit -= surge
	floor := max(in.Count-max(0, in.MaxParallel-in.Surge), 0)
	destroy := max(0, min(limit, in.Available-floor))
	return Batch{Start: down + surge + destroy, Surge: surge}
}
