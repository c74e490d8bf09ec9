package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	metrics "github.com/hashicorp/go-metrics/compat"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/deployment/stateview"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The regions' rollout of multi-region jobs: a leader service of every
// region. On each pass it reads this region's active multi-region
// deployments from its own state, reads the other regions' deployments of
// the same jobs over the federation (RegionReader: a request forwarded
// with ?region=, bounded in time), decides with deployment.DecideRegion,
// and writes the step into this region's own replicated state as a
// deployment status update (with the job's stability before a success, a
// revert and an evaluation where the step needs them). Nothing is kept
// between passes but when each other region became unreachable, which
// the wait description written in state also carries: a new leader
// resumes from state. A region cut off keeps serving its own jobs; only
// its next cross-region step waits.

// RegionReader reads another region's deployments of a job.
type RegionReader interface {
	// JobDeployments returns the deployments of the job in region, or an
	// error when the region cannot be read.
	JobDeployments(ctx context.Context, region, namespace, jobID string) ([]*structs.Deployment, error)
}

// Defaults of MultiregionWatcher.
const (
	// DefaultMultiregionPoll is how often the other regions are read
	// while a multi-region deployment is active here.
	DefaultMultiregionPoll = 2 * time.Second
	// DefaultMultiregionReadTimeout bounds one read of another region.
	DefaultMultiregionReadTimeout = 5 * time.Second
)

// MultiregionWatcher is the leader service that rolls multi-region jobs
// region by region.
type MultiregionWatcher struct {
	// Region is this region's name; Reader reads the others.
	Region string
	Reader RegionReader
	Raft   Raft
	State  func() *state.Store
	// Clock defaults to the real clock; NewID to structs.GenerateUUID.
	Clock  deployment.Clock
	NewID  func() string
	Logger hclog.Logger
	// Poll and ReadTimeout default to DefaultMultiregionPoll and
	// DefaultMultiregionReadTimeout.
	Poll, ReadTimeout time.Duration
	// MinBuild, when set, returns the lowest ServerBuild among this
	// region's servers: the steps write the statuses of build 2
	// (pending, blocked), and wait until every server knows them.
	MinBuild func() int
	// Stepped, when set (tests), sees each step written.
	Stepped func(d *structs.Deployment, step deployment.RegionStep)

	mu sync.Mutex
	// since is when each other region's read first failed, until one
	// succeeds again.
	since map[string]time.Time
}

func (w *MultiregionWatcher) defaults() {
	if w.Clock == nil {
		w.Clock = deployment.RealClock{}
	}
	if w.NewID == nil {
		w.NewID = structs.GenerateUUID
	}
	if w.Logger == nil {
		w.Logger = hclog.NewNullLogger()
	}
	if w.Poll <= 0 {
		w.Poll = DefaultMultiregionPoll
	}
	if w.ReadTimeout <= 0 {
		w.ReadTimeout = DefaultMultiregionReadTimeout
	}
	w.mu.Lock()
	if w.since == nil {
		w.since = map[string]time.Time{}
	}
	w.mu.Unlock()
}

// Run rolls until ctx ends (leadership lost or shutdown). It wakes when
// this region's deployments change, and every Poll while one of them is
// a multi-region deployment still active (the other regions' changes are
// not seen otherwise).
func (w *MultiregionWatcher) Run(ctx context.Context) {
	w.defaults()
	view := stateview.New(w.State)
	for ctx.Err() == nil {
		ws := memdb.NewWatchSet()
		active := w.Pass(ctx, view, ws)
		wctx, cancel := context.WithCancel(ctx)
		changed := ws.WatchCh(wctx)
		var tick <-chan time.Time
		var timer deployment.Timer
		if active {
			timer = w.Clock.NewTimer(w.Poll)
			tick = timer.C()
		}
		select {
		case <-ctx.Done():
		case <-changed:
		case <-tick:
		}
		cancel()
		if timer != nil {
			timer.Stop()
		}
	}
}

// Pass decides on every active multi-region deployment of this region
// once and writes the steps. It reports whether one is active (and so
// the other regions must be read again).
func (w *MultiregionWatcher) Pass(ctx context.Context, view deployment.State, ws deployment.WatchSet) bool {
	w.defaults()
	deps, err := view.ActiveDeployments(ws)
	if err != nil {
		w.Logger.Error("listing active deployments", "error", err)
		return true
	}
	slices.SortFunc(deps, func(a, b *structs.Deployment) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	active := false
	reads := map[readKey]readResult{}
	for _, d := range deps {
		if d == nil || !d.IsMultiregion || ctx.Err() != nil {
			continue
		}
		job, err := view.JobByIDAndVersion(ws, d.Namespace, d.JobID, d.JobVersion)
		if err == nil && job == nil {
			if latest, lerr := view.JobByID(ws, d.Namespace, d.JobID); lerr == nil && latest != nil && latest.Version == d.JobVersion {
				job = latest
			}
		}
		if err != nil || !job.IsMultiregion() {
			continue
		}
		active = true
		obs := deployment.RegionObservation{Region: w.Region, Multiregion: job.Multiregion, Deployment: d,
			Peers: w.readPeers(ctx, reads, d, job)}
		obs.Now = w.Clock.Now()
		step := deployment.DecideRegion(obs)
		if step.Kind == deployment.RegionStepNone {
			continue
		}
		if w.MinBuild != nil && structs.EffectiveBuild(w.MinBuild()) < multiregionBuild {
			w.Logger.Warn("multi-region rollout step waits for every server of the region to be upgraded",
				"deployment_id", d.ID, "step", step.String(), "min_build", w.MinBuild(), "needs", multiregionBuild)
			continue
		}
		if err := w.write(ctx, view, ws, d, job, step, obs.Now); err != nil {
			if ctx.Err() == nil {
				w.Logger.Warn("multi-region rollout step failed; retrying", "deployment_id", d.ID, "step", step.String(), "error", err)
			}
			continue
		}
		w.Logger.Info("multi-region rollout step", "deployment_id", d.ID, "job_id", d.JobID, "version", d.JobVersion, "step", step.String())
		metrics.IncrCounterWithLabels([]string{"drover", "multiregion", "steps"}, 1,
			[]metrics.Label{{Name: "step", Value: step.Kind}})
		if w.Stepped != nil {
			w.Stepped(d, step)
		}
	}
	return active
}

type readKey struct{ region, namespace, job string }

type readResult struct {
	deps []*structs.Deployment
	err  error
}

// readPeers reads the other regions of job's block, at most once per pass
// for each region and job, all at once, each within ReadTimeout.
func (w *MultiregionWatcher) readPeers(ctx context.Context, reads map[readKey]readResult, d *structs.Deployment, job *structs.Job) map[string]deployment.Peer {
	var todo []readKey
	for _, r := range job.Multiregion.Regions {
		if r == nil || r.Name == w.Region {
			continue
		}
		k := readKey{r.Name, d.Namespace, d.JobID}
		if _, ok := reads[k]; !ok && !slices.Contains(todo, k) {
			todo = append(todo, k)
		}
	}
	results := make([]readResult, len(todo))
	var wg sync.WaitGroup
	for i, k := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, w.ReadTimeout)
			defer cancel()
			deps, err := w.Reader.JobDeployments(rctx, k.region, k.namespace, k.job)
			results[i] = readResult{deps, err}
		}()
	}
	wg.Wait()
	now := w.Clock.Now()
	w.mu.Lock()
	for i, k := range todo {
		reads[k] = results[i]
		if results[i].err != nil {
			metrics.IncrCounterWithLabels([]string{"drover", "multiregion", "read_errors"}, 1,
				[]metrics.Label{{Name: "region", Value: k.region}})
			if _, ok := w.since[k.region]; !ok {
				w.since[k.region] = now
				w.Logger.Warn("cannot read another region's deployments", "region", k.region, "error", results[i].err)
			}
		} else {
			delete(w.since, k.region)
		}
	}
	peers := map[string]deployment.Peer{}
	for _, r := range job.Multiregion.Regions {
		if r == nil || r.Name == w.Region {
			continue
		}
		res := reads[readKey{r.Name, d.Namespace, d.JobID}]
		p := deployment.Peer{Region: r.Name}
		if res.err != nil {
			p.Unreachable, p.Since = true, w.since[r.Name]
		} else {
			p.Deployment, p.Newer = sameVersion(res.deps, d.JobVersion)
		}
		peers[r.Name] = p
	}
	w.mu.Unlock()
	return peers
}

// sameVersion picks among a region's deployments of a job the newest one
// of version, and reports whether one of a newer version exists.
func sameVersion(deps []*structs.Deployment, version uint64) (*structs.Deployment, bool) {
	var out *structs.Deployment
	newer := false
	for _, d := range deps {
		if d == nil {
			continue
		}
		switch {
		case d.JobVersion > version:
			newer = true
		case d.JobVersion == version && (out == nil || d.CreateIndex > out.CreateIndex):
			out = d
		}
	}
	return out, newer
}

// multiregionBuild is the ServerBuild whose servers know the
// multi-region statuses (structs.ServerBuild's comment).
const multiregionBuild = 2

// errNoJobVersion: the deployment's job version is gone from state.
var errNoJobVersion = errors.New("job version not found")

// write makes the step's replicated writes: one status update (with the
// revert and an evaluation it needs), the job's stability first for a
// success. Each carries the status it was decided on, so that a change
// meanwhile (an operator's, the deployment watcher's) wins.
func (w *MultiregionWatcher) write(ctx context.Context, view deployment.State, ws deployment.WatchSet, d *structs.Deployment, job *structs.Job, step deployment.RegionStep, now time.Time) error {
	u := &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: step.Status, StatusDescription: step.StatusDescription,
		DecidedOn: d.StatusSeen()}
	if u.Status == "" {
		u.Status = d.Status
	}
	req := &structs.DeploymentStatusUpdateRequest{DeploymentUpdate: u, UpdatedAt: now.UnixNano()}
	switch step.Kind {
	case deployment.RegionStepStart:
		req.Eval = w.eval(d, job, now)
	case deployment.RegionStepSucceed:
		stable := &structs.JobStabilityRequest{Namespace: d.Namespace, JobID: d.JobID, JobVersion: d.JobVersion, Stable: true}
		if _, _, err := w.Raft.Apply(ctx, fsm.JobStabilityRequestType, stable); err != nil {
			return fmt.Errorf("marking job version stable: %w", err)
		}
	case deployment.RegionStepFail:
		if job == nil {
			return errNoJobVersion
		}
		stableJob, err := view.LatestStableJob(ws, d.Namespace, d.JobID)
		if err != nil {
			return err
		}
		failed, revert := deployment.FailByPeer(d, job, stableJob, step.Revert, now)
		u.StatusDescription = failed.StatusDescription
		if revert != nil {
			j := revert.Copy()
			j.Stable = false
			v := revert.Version
			j.RevertOf = &v
			req.Job = j
		}
		// The scheduler stops what the version started (or reverts).
		req.Eval = w.eval(d, job, now)
	}
	if _, _, err := w.Raft.Apply(ctx, fsm.DeploymentStatusUpdateRequestType, req); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}

// eval is the evaluation a step asks for, for the deployment's job.
func (w *MultiregionWatcher) eval(d *structs.Deployment, job *structs.Job, now time.Time) *structs.Evaluation {
	e := &structs.Evaluation{
		ID: w.NewID(), Namespace: d.Namespace, TriggeredBy: structs.EvalTriggerDeploymentWatcher,
		JobID: d.JobID, DeploymentID: d.ID, Status: structs.EvalStatusPending,
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
		Priority: structs.DefaultJobPriority, Type: structs.JobTypeService,
	}
	if job != nil {
		e.Priority, e.Type, e.JobModifyIndex = job.Priority, job.Type, job.JobModifyIndex
	}
	return e
}

// UnblockDeployment makes a blocked multi-region deployment successful by
// hand (`deployment unblock`), as Nomad's: the job version is marked
// stable, then the deployment successful, each one entry.
func (l *Leader) UnblockDeployment(ctx context.Context, id string) (*structs.DeploymentUpdateResponse, error) {
	_, d, err := l.opDeployment(id)
	if err != nil {
		return nil, err
	}
	now := l.clock.Now()
	done, err := deployment.Unblock(d, now)
	if err != nil {
		return nil, refuse(err)
	}
	stable := &structs.JobStabilityRequest{Namespace: d.Namespace, JobID: d.JobID, JobVersion: d.JobVersion, Stable: true}
	if _, _, err := l.apply(ctx, fsm.JobStabilityRequestType, stable); err != nil {
		return nil, err
	}
	req := &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: done.Status,
			StatusDescription: done.StatusDescription, DecidedOn: d.StatusSeen()},
		UpdatedAt: now.UnixNano(),
	}
	_, index, err := l.apply(ctx, fsm.DeploymentStatusUpdateRequestType, req)
	if err != nil {
		return nil, err
	}
	metrics.IncrCounterWithLabels([]string{"drover", "multiregion", "steps"}, 1,
		[]metrics.Label{{Name: "step", Value: "unblock"}})
	return &structs.DeploymentUpdateResponse{DeploymentModifyIndex: index, Index: index}, nil
}
