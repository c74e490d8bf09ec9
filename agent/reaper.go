package agent

import (
	"context"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The reaper is a leader service that deletes what nothing can use any
// more: the allocations and evaluations of purged jobs, once they are
// terminal (allocations: the client reported them complete, failed or
// lost; evaluations: complete, failed or canceled). Without it every alloc
// ever placed stays in the state, in every snapshot and in the clients'
// allocation queries, and a server's memory grows with each job run and
// purged. Nomad's core GC does this after thresholds (job_gc_threshold and
// friends) for stopped jobs too; only purged jobs are collected here, and
// at once, for a purge says the history is not wanted.
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
		req, err := reapable(a.fsm.State().Snapshot(), reapBatch)
		if err != nil {
			a.logger.Warn("reaper: reading state", "error", err)
			continue
		}
		if len(req.Allocs) == 0 && len(req.Evals) == 0 {
			continue
		}
		if _, _, err := a.raft.Apply(ctx, fsm.EvalReapRequestType, req); err != nil {
			if ctx.Err() == nil {
				a.logger.Warn("reaper: deleting allocs and evals of purged jobs", "error", err)
			}
			continue
		}
		a.logger.Debug("reaped allocs and evals of purged jobs", "allocs", len(req.Allocs), "evals", len(req.Evals))
	}
}

// reapable returns up to limit IDs of terminal allocations and
// evaluations whose job is gone.
func reapable(snap *state.Snapshot, limit int) (*structs.EvalReapRequest, error) {
	req := &structs.EvalReapRequest{}
	gone := map[[2]string]bool{}
	jobGone := func(ns, id string) (bool, error) {
		k := [2]string{ns, id}
		if g, ok := gone[k]; ok {
			return g, nil
		}
		j, err := snap.JobByID(ns, id)
		if err != nil {
			return false, err
		}
		gone[k] = j == nil
		return j == nil, nil
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
		if g, err := jobGone(al.Namespace, al.JobID); err != nil {
			return nil, err
		} else if g {
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
		if g, err := jobGone(e.Namespace, e.JobID); err != nil {
			return nil, err
		} else if g {
			req.Evals = append(req.Evals, e.ID)
		}
	}
	return req, nil
}
