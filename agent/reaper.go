package agent

import (
	"context"
	"time"

	metrics "github.com/hashicorp/go-metrics/compat"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The reaper is a leader service that deletes what nothing can use any
// more. Without it every alloc ever placed stays in the state, in every
// snapshot, in the clients' allocation queries and in every scheduling pass
// of its job: each rollout of a 10,000-alloc job read the stopped allocs of
// all the versions before (the second took 9.6 s longer than the first),
// and a server's memory grew with each. It deletes, as Nomad's core GC:
//   - the allocations and evaluations of purged jobs, once they are
//     terminal (allocations: the client reported them complete, failed or
//     lost; evaluations: complete, failed or canceled), at once: a purge
//     says the history is not wanted;
//   - for jobs still registered, terminal evaluations and the allocations
//     the servers stopped or replaced and whose client is done with them,
//     once they have been so for server.eval_gc_threshold (an hour, as
//     Nomad's). A batch job's allocations stay while the job does: they are
//     what says its work is done;
//   - terminal deployments that no allocation refers to any more, once
//     they have been terminal for server.deployment_gc_threshold (an hour,
//     as Nomad's), whether their job is registered or purged. A job's
//     current deployment stays while its allocations run.
//
// Job versions are bounded apart, when a version is stored
// (server.job_tracked_versions). Each deletion is logged at info with its
// counts and counted in nomad.drover.reaper.* (website/api/metrics.md).
const (
	// reapInterval is how often the reaper looks.
	reapInterval = 2 * time.Second
	// reapBatch bounds the IDs of one entry.
	reapBatch = 1024
)

// runReaper reaps until ctx ends (leadership lost or shutdown).
func (a *Agent) runReaper(ctx context.Context) {
	t := time.NewTicker(reapInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		req, err := reapable(a.fsm.State().Snapshot(), reapBatch, time.Now(), a.evalGCThreshold(), a.deploymentGCThreshold())
		if err != nil {
			a.logger.Warn("reaper: reading state", "error", err)
			continue
		}
		if len(req.Allocs) == 0 && len(req.Evals) == 0 && len(req.Deployments) == 0 {
			continue
		}
		if _, _, err := a.raft.Apply(ctx, fsm.EvalReapRequestType, req); err != nil {
			if ctx.Err() == nil {
				a.logger.Warn("reaper: deleting allocs, evals and deployments", "error", err)
			}
			continue
		}
		a.logger.Info("reaper: collected", "allocs", len(req.Allocs), "evals", len(req.Evals), "deployments", len(req.Deployments))
		metrics.IncrCounter([]string{"drover", "reaper", "allocs"}, float32(len(req.Allocs)))
		metrics.IncrCounter([]string{"drover", "reaper", "evals"}, float32(len(req.Evals)))
		metrics.IncrCounter([]string{"drover", "reaper", "deployments"}, float32(len(req.Deployments)))
	}
}

// deploymentGCThreshold is the configured
// server.deployment_gc_threshold, or its default.
func (a *Agent) deploymentGCThreshold() time.Duration {
	if a.cfg.DeploymentGCThreshold > 0 {
		return a.cfg.DeploymentGCThreshold
	}
	return time.Hour
}

// evalGCThreshold is the configured server.eval_gc_threshold, or its
// default.
func (a *Agent) evalGCThreshold() time.Duration {
	if a.cfg.EvalGCThreshold > 0 {
		return a.cfg.EvalGCThreshold
	}
	return time.Hour
}

// reapable returns up to limit IDs of allocations, evaluations and
// deployments to delete: the terminal allocations and evaluations of
// purged jobs, those of registered jobs terminal since before now - age,
// and the terminal deployments no allocation refers to, terminal since
// before now - deployAge (see the reaper's rules above).
func reapable(snap *state.Snapshot, limit int, now time.Time, age, deployAge time.Duration) (*structs.EvalReapRequest, error) {
	req := &structs.EvalReapRequest{}
	cutoff := now.Add(-age).UnixNano()
	deployCutoff := now.Add(-deployAge).UnixNano()
	jobs := map[[2]string]*structs.Job{}
	jobOf := func(ns, id string) (*structs.Job, error) {
		k := [2]string{ns, id}
		if j, ok := jobs[k]; ok {
			return j, nil
		}
		j, err := snap.JobByID(ns, id)
		if err != nil {
			return nil, err
		}
		jobs[k] = j
		return j, nil
	}
	allocs, err := snap.Allocs()
	if err != nil {
		return nil, err
	}
	for _, al := range allocs {
		if len(req.Allocs) >= limit {
			break
		}
		if !al.ClientTerminalStatus() {
			continue
		}
		j, err := jobOf(al.Namespace, al.JobID)
		if err != nil {
			return nil, err
		}
		if j == nil || allocCollectable(al, j, cutoff) {
			req.Allocs = append(req.Allocs, al.ID)
		}
	}
	evals, err := snap.Evals()
	if err != nil {
		return nil, err
	}
	for _, e := range evals {
		if len(req.Evals) >= limit {
			break
		}
		if !e.Terminal() {
			continue
		}
		j, err := jobOf(e.Namespace, e.JobID)
		if err != nil {
			return nil, err
		}
		if j == nil || olderThan(e.ModifyTime, cutoff) {
			req.Evals = append(req.Evals, e.ID)
		}
	}
	// Allocations deleted by this request no longer refer to their
	// deployments.
	gone := make(map[string]bool, len(req.Allocs))
	for _, id := range req.Allocs {
		gone[id] = true
	}
	deps, err := snap.Deployments()
	if err != nil {
		return nil, err
	}
	for _, d := range deps {
		if len(req.Deployments) >= limit {
			break
		}
		if d.Active() || !olderThan(d.ModifyTime, deployCutoff) {
			continue
		}
		allocs, err := snap.AllocsByDeployment(d.ID)
		if err != nil {
			return nil, err
		}
		referred := false
		for _, al := range allocs {
			if !gone[al.ID] {
				referred = true
				break
			}
		}
		if !referred {
			req.Deployments = append(req.Deployments, d.ID)
		}
	}
	return req, nil
}

// allocCollectable reports whether an allocation its client is done with,
// of job j (still registered), may be deleted: the servers stopped it or
// placed its replacement before cutoff (UnixNano), and j is not a batch job.
func allocCollectable(a *structs.Allocation, j *structs.Job, cutoff int64) bool {
	if j.Type == structs.JobTypeBatch || j.Type == structs.JobTypeSysBatch {
		return false
	}
	if a.DesiredStatus == structs.AllocDesiredStatusRun && a.NextAllocation == "" {
		return false
	}
	return olderThan(a.ModifyTime, cutoff)
}

// olderThan reports whether a modify time (UnixNano, stamped by the
// leader) is before cutoff; an object without one is kept, its age unknown.
func olderThan(modified, cutoff int64) bool {
	return modified > 0 && modified < cutoff
}
