package sim

import (
	"context"
	"sort"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// A rollout is a chain of cycles: an alloc of the new version is placed,
// its client starts it, it turns healthy min_healthy_time later, the
// client reports that, the report asks for a scheduling pass,
// and that pass places the alloc that takes the freed slot. Stages are
// the mean time of each step, read back from the store after the run, so
// that a run says where its time over the lower bound went.
type Stages struct {
	PlacedToStarted     time.Duration // placed (CreateTime, the plan applier's clock) → task started (the client's)
	StartedToHealthy    time.Duration // task started → healthy, minus min_healthy_time
	HealthyToApplied    time.Duration // healthy (client clock) → the report's entry stamped (ModifyTime)
	AppliedToEval       time.Duration // the k-th healthy report stamped → the evaluation that placed alloc k + max_parallel created
	EvalToPlaced        time.Duration // evaluation created → its placements stamped (the scheduling pass)
	HealthyToNextPlaced time.Duration // k-th healthy → (k + max_parallel)-th placed
	Cycles              int           // pairs the last two means are over
	// FirstPlaced and LastHealthy are the earliest placement and the
	// latest healthy verdict of the version (zero without allocs): the
	// rollout's head and tail are measured from them.
	FirstPlaced, LastHealthy time.Time
}

// rolloutStages computes the stages of the allocs of jobVersion, given
// the evaluations that placed them.
func rolloutStages(allocs []*structs.AllocationListStub, evals []*structs.Evaluation,
	jobVersion uint64, maxParallel int, minHealthy time.Duration) Stages {
	evalByID := make(map[string]*structs.Evaluation, len(evals))
	for _, ev := range evals {
		evalByID[ev.ID] = ev
	}
	type row struct {
		placed, started, healthy, applied int64 // UnixNano, 0 when unknown
		eval                              *structs.Evaluation
	}
	var rows []row
	for _, a := range allocs {
		if a.JobVersion != jobVersion || a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil ||
			!*a.DeploymentStatus.Healthy {
			continue
		}
		r := row{placed: a.CreateTime, healthy: a.DeploymentStatus.Timestamp.UnixNano(),
			applied: a.ModifyTime, eval: evalByID[a.EvalID]}
		for _, ts := range a.TaskStates {
			if ts != nil && !ts.StartedAt.IsZero() && (r.started == 0 || ts.StartedAt.UnixNano() > r.started) {
				r.started = ts.StartedAt.UnixNano()
			}
		}
		rows = append(rows, r)
	}
	var s Stages
	if len(rows) == 0 {
		return s
	}
	var m [5]mean
	for _, r := range rows {
		if s.FirstPlaced.IsZero() || r.placed < s.FirstPlaced.UnixNano() {
			s.FirstPlaced = time.Unix(0, r.placed)
		}
		if r.healthy > s.LastHealthy.UnixNano() {
			s.LastHealthy = time.Unix(0, r.healthy)
		}
		if r.started != 0 {
			m[0].add(r.started - r.placed)
			m[1].add(r.healthy - r.started - int64(minHealthy))
		}
		m[2].add(r.applied - r.healthy)
		if r.eval != nil && r.eval.CreateTime != 0 {
			m[4].add(r.placed - r.eval.CreateTime)
		}
	}
	// Pair the k-th alloc to turn healthy with the (k + max_parallel)-th
	// placed: the slot the first frees is the one the second takes.
	byHealthy := append([]row(nil), rows...)
	sort.Slice(byHealthy, func(i, j int) bool { return byHealthy[i].applied < byHealthy[j].applied })
	byPlaced := append([]row(nil), rows...)
	sort.Slice(byPlaced, func(i, j int) bool { return byPlaced[i].placed < byPlaced[j].placed })
	var next mean
	for k := 0; k+maxParallel < len(byPlaced); k++ {
		h, p := byHealthy[k], byPlaced[k+maxParallel]
		next.add(p.placed - h.healthy)
		if p.eval != nil && p.eval.CreateTime != 0 {
			m[3].add(p.eval.CreateTime - h.applied)
		}
	}
	s.PlacedToStarted, s.StartedToHealthy, s.HealthyToApplied = m[0].get(), m[1].get(), m[2].get()
	s.AppliedToEval, s.EvalToPlaced = m[3].get(), m[4].get()
	s.HealthyToNextPlaced, s.Cycles = next.get(), next.n
	return s
}

type mean struct {
	sum int64
	n   int
}

func (m *mean) add(d int64) { m.sum += d; m.n++ }

func (m *mean) get() time.Duration {
	if m.n == 0 {
		return 0
	}
	return time.Duration(m.sum / int64(m.n))
}

// addStages reads the job's allocs and evaluations and adds the stages of
// jobVersion's rollout, registered at start and seen successful at end,
// to the result.
func (e *env) addStages(ctx context.Context, jobID string, jobVersion uint64, start, end time.Time) error {
	var allocs []*structs.AllocationListStub
	var evals []*structs.Evaluation
	err := e.call(ctx, func(ctx context.Context, c *apiclient.Client) error {
		var err error
		if allocs, _, err = c.Jobs().Allocations(ctx, jobID, nil); err != nil {
			return err
		}
		evals, _, err = c.Jobs().Evaluations(ctx, jobID, nil)
		return err
	})
	if err != nil {
		return err
	}
	s := rolloutStages(allocs, evals, jobVersion, e.cfg.MaxParallel, e.cfg.MinHealthyTime)
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"stage_placed_to_started_ms", s.PlacedToStarted},
		{"stage_started_to_healthy_minus_mht_ms", s.StartedToHealthy},
		{"stage_healthy_to_applied_ms", s.HealthyToApplied},
		{"stage_applied_to_eval_ms", s.AppliedToEval},
		{"stage_eval_to_placed_ms", s.EvalToPlaced},
		{"stage_healthy_to_next_placed_ms", s.HealthyToNextPlaced},
		{"stage_registered_to_first_placed_ms", sinceIf(start, s.FirstPlaced)},
		{"stage_last_healthy_to_seen_done_ms", sinceIf(s.LastHealthy, end)},
	} {
		e.res.Add(f.name, round(ms(f.d)), "ms", "")
	}
	return nil
}

// sinceIf is to - from, or 0 when either is unknown.
func sinceIf(from, to time.Time) time.Duration {
	if from.IsZero() || to.IsZero() {
		return 0
	}
	return to.Sub(from)
}

// waitNewLeader polls the running servers until one names a running
// leader, and returns when (zero if ctx ends first). Called right after
// the leader was killed, it times the election as an operator sees it.
func (e *env) waitNewLeader(ctx context.Context) time.Time {
	for {
		if l, err := e.servers.Leader(ctx); err == nil && l != nil {
			return time.Now()
		}
		select {
		case <-ctx.Done():
			return time.Time{}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// placementGap returns how long after at the first alloc of jobVersion
// was placed (its CreateTime, stamped by the plan applier): after a
// leader kill, the time the rollout placed nothing. Zero when no alloc
// of the version was placed after at.
func (e *env) placementGap(ctx context.Context, jobID string, jobVersion uint64, at time.Time) (time.Duration, error) {
	var allocs []*structs.AllocationListStub
	err := e.call(ctx, func(ctx context.Context, c *apiclient.Client) error {
		var err error
		allocs, _, err = c.Jobs().Allocations(ctx, jobID, nil)
		return err
	})
	if err != nil {
		return 0, err
	}
	return firstPlacedAfter(allocs, jobVersion, at), nil
}

// firstPlacedAfter is the time from at to the earliest CreateTime after
// it among the allocs of jobVersion, or 0 when there is none.
func firstPlacedAfter(allocs []*structs.AllocationListStub, jobVersion uint64, at time.Time) time.Duration {
	var first int64
	for _, a := range allocs {
		if a.JobVersion != jobVersion || a.CreateTime <= at.UnixNano() {
			continue
		}
		if first == 0 || a.CreateTime < first {
			first = a.CreateTime
		}
	}
	if first == 0 {
		return 0
	}
	return time.Duration(first - at.UnixNano())
}

// waitCaughtUp waits until server p answers, from its own copy, that the
// job is at least at version: a restarted server has caught up with the
// log to there.
func (e *env) waitCaughtUp(ctx context.Context, p *ServerProc, jobID string, version uint64) error {
	c, err := apiclient.New(p.HTTPAddr)
	if err != nil {
		return err
	}
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		job, _, err := c.Jobs().Info(rctx, jobID, &apiclient.QueryOptions{AllowStale: true})
		cancel()
		if err == nil && job != nil && job.Version >= version {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
