package agent

import (
	"context"
	"time"

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
//     what says its work is done.
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
		req, err := reapable(a.fsm.State().Snapshot(), reapBatch, time.Now(), a.evalGCThreshold())
		if err != nil {
			a.logger.Warn("reaper: reading state", "error", err)
			continue
		}
		if len(req.Allocs) == 0 && len(req.Evals) == 0 {
			continue
		}
		if _, _, err := a.raft.Apply(ctx, fsm.EvalReapRequestType, req); err != nil {
			if ctx.Err() == nil {
				a.logger.Warn("reaper: deleting allocs and evals", "error", err)
			}
			continue
		}
		a.logger.Debug("reaped allocs and evals", "allocs", len(req.Allocs), "evals", len(req.Evals))
	}
}

// evalGCThreshold is the configured server.eval_gc_threshold, or its
// default.
func (a *Agent) evalGCThreshold() time.Duration {
	if a.cfg.EvalGCThreshold > 0 {
		return a.cfg.EvalGCThreshold
	}
	return time.Hour
}

// reapable returns up to limit IDs of allocations and evaluations to
// delete: the terminal ones of purged jobs, and those of registered jobs
// terminal since before now - age (see the reaper's rules above).
func reapable(snap *state.Snapshot, limit int, now time.Time, age time.Duration) (*structs.EvalReapRequest, error) {
	req := &structs.EvalReapRequest{}
	cutoff := now.Add(-age).UnixNano()
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
