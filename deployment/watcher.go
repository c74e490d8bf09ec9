package deployment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover/structs"
	hclog "github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
)

// DefaultRetryInterval is how long the watcher waits before another pass
// after a failed read or write, when nothing changes meanwhile.
const DefaultRetryInterval = time.Second

// Errors of NewWatcher.
var (
	ErrNoState  = errors.New("deployment watcher: no state")
	ErrNoWriter = errors.New("deployment watcher: no writer")
)

// Config assembles a Watcher.
type Config struct {
	State  State
	Writer Writer
	// Clock defaults to RealClock.
	Clock Clock
	// Logger defaults to a null logger.
	Logger hclog.Logger
	// NewID mints evaluation IDs; defaults to structs.GenerateUUID.
	NewID func() string
	// RetryInterval defaults to DefaultRetryInterval.
	RetryInterval time.Duration
	// Measure takes analysis measurements (analysis.go); nil takes none,
	// and analysis runs then wait.
	Measure MeasureFunc
}

// Watcher drives every active deployment to its end. It runs on the leader
// only, from Run, and keeps nothing between passes that state does not
// hold: each pass re-reads the active deployments, decides on each with
// Decide and writes the decisions, then sleeps until the state it read
// changes or the earliest WakeAt comes.
type Watcher struct {
	state  State
	writer Writer
	clock  Clock
	logger hclog.Logger
	newID  func() string
	retry  time.Duration

	measure MeasureFunc
	// mu guards measuring, the measurements being taken; wg counts
	// their goroutines.
	mu        sync.Mutex
	measuring map[runKey]time.Time
	wg        sync.WaitGroup
}

// NewWatcher returns a watcher; Config.State and Config.Writer are required.
func NewWatcher(cfg Config) (*Watcher, error) {
	if cfg.State == nil {
		return nil, ErrNoState
	}
	if cfg.Writer == nil {
		return nil, ErrNoWriter
	}
	w := &Watcher{state: cfg.State, writer: cfg.Writer, clock: cfg.Clock, logger: cfg.Logger,
		newID: cfg.NewID, retry: cfg.RetryInterval, measure: cfg.Measure, measuring: map[runKey]time.Time{}}
	if w.clock == nil {
		w.clock = RealClock{}
	}
	if w.logger == nil {
		w.logger = hclog.NewNullLogger()
	}
	if w.newID == nil {
		w.newID = structs.GenerateUUID
	}
	if w.retry <= 0 {
		w.retry = DefaultRetryInterval
	}
	return w, nil
}

// Run watches deployments until ctx is done (leadership lost or shutdown),
// then returns nil. It is level-triggered: every wake-up re-reads state,
// so a new leader calling Run resumes from replicated state alone, and a
// deadline that passed meanwhile fails its deployment on the first pass.
func (w *Watcher) Run(ctx context.Context) error {
	// Measurements still being taken end with ctx.
	defer w.wg.Wait()
	for {
		ws := memdb.NewWatchSet()
		wake := w.pass(ctx, ws)
		if ctx.Err() != nil {
			return nil
		}
		if !w.wait(ctx, ws, wake) {
			return nil
		}
	}
}

// RunOnce makes a single pass over the active deployments, deciding on
// each and writing the decisions, and returns the earliest time a
// decision asked to be looked at again (zero if none). Run is RunOnce in
// a loop that also watches state; RunOnce serves tools and benchmarks.
func (w *Watcher) RunOnce(ctx context.Context) time.Time {
	return w.pass(ctx, memdb.NewWatchSet())
}

// pass decides on every active deployment once and returns the earliest
// time a decision asked to be woken at (or a retry time after an error).
func (w *Watcher) pass(ctx context.Context, ws memdb.WatchSet) time.Time {
	var wake time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (wake.IsZero() || t.Before(wake)) {
			wake = t
		}
	}
	active, err := w.state.ActiveDeployments(ws)
	if err != nil {
		w.logger.Error("listing active deployments", "error", err)
		return w.clock.Now().Add(w.retry)
	}
	queue := make([]string, 0, len(active))
	for _, d := range active {
		if d != nil {
			queue = append(queue, d.ID)
		}
	}
	slices.Sort(queue)
	queue = slices.Compact(queue)
	if w.measure != nil {
		ids := make(map[string]bool, len(queue))
		for _, id := range queue {
			ids[id] = true
		}
		w.forgetMeasured(ids)
	}
	for _, id := range queue {
		if ctx.Err() != nil {
			return wake
		}
		next, err := w.step(ctx, ws, id)
		if err != nil {
			w.logger.Error("deployment watcher step", "deployment_id", id, "error", err)
			next = w.clock.Now().Add(w.retry)
		}
		earliest(next)
	}
	return wake
}

// step observes one deployment, decides and writes. It returns the
// decision's WakeAt.
func (w *Watcher) step(ctx context.Context, ws memdb.WatchSet, id string) (time.Time, error) {
	now := w.clock.Now()
	obs, err := w.observe(ws, id, now)
	if err != nil || obs.Deployment == nil {
		return time.Time{}, err
	}
	dec := Decide(obs)
	if dec.Changed() {
		w.logger.Debug("deployment decision", "deployment_id", id, "decision", dec.String())
		if err := w.write(ctx, obs, dec); err != nil {
			return time.Time{}, err
		}
	}
	w.startMeasurements(ctx, obs, dec.Measure)
	return dec.WakeAt, nil
}

// observe reads everything Decide needs about one deployment. The
// allocations are read (and watched) only when NeedsAllocs; otherwise the
// deployment's live figures stand for them, and the deployment row, which
// the store rewrites whenever a figure moves, is what wakes the watcher.
// The job's allocations of every version are read (and watched) only when
// a group sets max_unhealthy, for Observation.NotServing.
func (w *Watcher) observe(ws memdb.WatchSet, id string, now time.Time) (Observation, error) {
	obs := Observation{Now: now}
	d, err := w.state.DeploymentByID(ws, id)
	if err != nil || d == nil {
		return obs, wrapRead("deployment", err)
	}
	obs.Deployment = d
	if obs.LatestJob, err = w.state.JobByID(ws, d.Namespace, d.JobID); err != nil {
		return obs, wrapRead("job", err)
	}
	if obs.Job, err = w.state.JobByIDAndVersion(ws, d.Namespace, d.JobID, d.JobVersion); err != nil {
		return obs, wrapRead("job version", err)
	}
	if obs.Job == nil && obs.LatestJob != nil && obs.LatestJob.Version == d.JobVersion {
		obs.Job = obs.LatestJob
	}
	if obs.StableJob, err = w.state.LatestStableJob(ws, d.Namespace, d.JobID); err != nil {
		return obs, wrapRead("stable job", err)
	}
	switch ids, listed := UnhealthyIDs(d); {
	case !NeedsAllocs(d):
		obs.FromFigures = true
	case listed:
		// The figures, and the unhealthy allocations by their IDs: not
		// every allocation of a large deployment on every pass.
		obs.FromFigures = true
		for _, aid := range ids {
			a, err := w.state.AllocByID(ws, aid)
			if err != nil {
				return obs, wrapRead("alloc", err)
			}
			if a != nil {
				obs.Allocs = append(obs.Allocs, a)
			}
		}
	default:
		if obs.Allocs, err = w.state.AllocsByDeployment(ws, id); err != nil {
			return obs, wrapRead("allocs", err)
		}
	}
	if limitsUnhealthy(obs.Job) {
		all, err := w.state.AllocsByJob(ws, d.Namespace, d.JobID)
		if err != nil {
			return obs, wrapRead("job allocs", err)
		}
		obs.NotServing = countNotServing(all)
	}
	if mayStartBatchRun(obs) {
		allocs := obs.Allocs
		if obs.FromFigures {
			if allocs, err = w.state.AllocsByDeployment(ws, id); err != nil {
				return obs, wrapRead("allocs", err)
			}
		}
		obs.InFlight = countInFlight(allocs)
	}
	evals, err := w.state.PassEvals(ws, d.Namespace, d.JobID)
	if err != nil {
		return obs, wrapRead("evals", err)
	}
	obs.LatestEvalIndex = passIndex(evals, now)
	return obs, nil
}

// mayStartBatchRun reports whether an each_batch analysis run of a group
// may start, healthy allocs being beyond what its last run covered: the
// allocations in flight then decide (Observation.InFlight).
func mayStartBatchRun(obs Observation) bool {
	d := obs.Deployment
	if obs.Job == nil || d.Status != structs.DeploymentStatusRunning {
		return false
	}
	for name, s := range d.TaskGroups {
		tg := obs.Job.LookupTaskGroup(name)
		if s == nil || tg == nil {
			continue
		}
		for _, a := range structs.AnalysesFor(d, obs.Job, tg.Update) {
			if a == nil || a.When != structs.AnalysisWhenEachBatch {
				continue
			}
			last := s.LatestEachBatchRun(a.Name)
			if (last == nil || last.Cleared()) && s.LiveHealthyAllocs > s.BatchCovered(last) {
				return true
			}
		}
	}
	return false
}

// countInFlight counts per group the live allocations whose health is not
// known yet (Observation.InFlight); the map is never nil.
func countInFlight(allocs []*structs.Allocation) map[string]int {
	out := map[string]int{}
	for _, a := range allocs {
		if a != nil && !a.TerminalStatus() && (a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil) {
			out[a.TaskGroup]++
		}
	}
	return out
}

// limitsUnhealthy reports whether a group of the job sets max_unhealthy,
// for which the watcher reads (and watches) all the job's allocations.
func limitsUnhealthy(job *structs.Job) bool {
	if job == nil {
		return false
	}
	for _, tg := range job.TaskGroups {
		if tg != nil && tg.Update != nil && tg.Update.MaxUnhealthy != nil {
			return true
		}
	}
	return false
}

// countNotServing counts per group the allocations that serve nothing
// (Observation.NotServing); the map is never nil.
func countNotServing(allocs []*structs.Allocation) map[string]int {
	out := map[string]int{}
	for _, a := range allocs {
		if a.NotServing() {
			out[a.TaskGroup]++
		}
	}
	return out
}

// passIndex is the newest state a scheduling pass of the job has read or
// is yet to read, for Observation.LatestEvalIndex: the highest CreateIndex
// among the evaluations, or the SnapshotIndex a completed one read if
// higher. It is given the job's unfinished evaluations and its newest
// finished one (State.PassEvals), not the older finished ones: should one
// of those have read a later state (a delayed evaluation finishing after
// a newer one), the index is lower than it could be, and the watcher asks
// for a pass that was not needed, never the other way round. While an evaluation of the job waits to be scheduled (or is
// being scheduled) now, it is the maximum index: health recorded
// meanwhile needs no evaluation of its own yet. The scheduler takes one
// evaluation of a job at a time, so another would only queue behind it,
// to be superseded or to find the work done; once it completes, its
// SnapshotIndex says whether health came after what it read, and the
// watcher, woken by that write, asks for the next pass then.
func passIndex(evals []*structs.Evaluation, now time.Time) uint64 {
	var idx uint64
	for _, e := range evals {
		if e == nil {
			continue
		}
		if e.DueBy(now) {
			return math.MaxUint64
		}
		idx = max(idx, e.CreateIndex)
		if e.Status == structs.EvalStatusComplete {
			idx = max(idx, e.SnapshotIndex)
		}
	}
	return idx
}

func wrapRead(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("reading %s: %w", what, err)
}

// wait blocks until something read into ws changes, wake comes, or ctx is
// done; it reports false for the latter.
func (w *Watcher) wait(ctx context.Context, ws memdb.WatchSet, wake time.Time) bool {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changed := ws.WatchCh(wctx)
	var fire <-chan time.Time
	if !wake.IsZero() {
		t := w.clock.NewTimer(wake.Sub(w.clock.Now()))
		defer t.Stop()
		fire = t.C()
	}
	select {
	case <-ctx.Done():
		return false
	case <-changed:
	case <-fire:
	}
	return true
}
