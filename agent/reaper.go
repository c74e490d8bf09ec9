package agent

import (
	"context"
	"fmt"
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
//     current deployment stays while its allocations run;
//   - jobs that are done, once they have been so for
//     server.job_gc_threshold (4 hours, as Nomad's): a stopped job, or a
//     batch job that is dead, all of whose allocations are finished on
//     their clients and all of whose evaluations ended (reapableJobs). They
//     are purged as by `job stop -purge`, each in an entry of its own; their
//     allocations and evaluations then go on the next pass;
//   - nodes down for server.node_gc_threshold (24 hours, as Nomad's) with
//     no allocation that is not terminal, deregistered (reapableNodes).
//
// A job is read again just before its purge, and left for the next pass
// if it changed; but one re-registered, or a node back, between that read
// and the entry's commit is still collected, as by Nomad's GC: the entries
// name what to delete, not the state it was read in. A client whose node
// was deregistered registers again.
//
// Job versions are bounded apart, when a version is stored
// (server.job_tracked_versions). Each deletion is logged at info with its
// counts and counted in nomad.drover.reaper.* (website/api/metrics.md).
const (
	// reapInterval is how often the reaper looks.
	reapInterval = 2 * time.Second
	// reapBatch bounds the IDs of one entry.
	reapBatch = 1024
	// reapJobBatch bounds the jobs purged in one pass, one entry each.
	reapJobBatch = 128
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
		n, err := reap(ctx, a.raft.Apply, a.fsm.State(), time.Now(), a.gcThresholds())
		if err != nil && ctx.Err() == nil {
			a.logger.Warn("reaper: collecting", "error", err)
		}
		if n.empty() {
			continue
		}
		a.logger.Info("reaper: collected", "allocs", n.Allocs, "evals", n.Evals, "deployments", n.Deployments,
			"jobs", n.Jobs, "nodes", n.Nodes)
		metrics.IncrCounter([]string{"drover", "reaper", "allocs"}, float32(n.Allocs))
		metrics.IncrCounter([]string{"drover", "reaper", "evals"}, float32(n.Evals))
		metrics.IncrCounter([]string{"drover", "reaper", "deployments"}, float32(n.Deployments))
		metrics.IncrCounter([]string{"drover", "reaper", "jobs"}, float32(n.Jobs))
		metrics.IncrCounter([]string{"drover", "reaper", "nodes"}, float32(n.Nodes))
	}
}

// gcThresholds are the reaper's ages: server.eval_gc_threshold,
// deployment_gc_threshold, job_gc_threshold and node_gc_threshold.
type gcThresholds struct {
	Eval, Deployment, Job, Node time.Duration
}

// gcThresholds returns the configured thresholds, each 0 replaced by its
// default (Nomad's).
func (a *Agent) gcThresholds() gcThresholds {
	or := func(d, def time.Duration) time.Duration {
		if d > 0 {
			return d
		}
		return def
	}
	return gcThresholds{
		Eval:       or(a.cfg.EvalGCThreshold, time.Hour),
		Deployment: or(a.cfg.DeploymentGCThreshold, time.Hour),
		Job:        or(a.cfg.JobGCThreshold, 4*time.Hour),
		Node:       or(a.cfg.NodeGCThreshold, 24*time.Hour),
	}
}

// reapCounts is what one pass of the reaper deleted.
type reapCounts struct {
	Allocs, Evals, Deployments, Jobs, Nodes int
}

func (n reapCounts) empty() bool { return n == reapCounts{} }

// applyFunc writes an entry through Raft (cluster.Server.Apply).
type applyFunc func(ctx context.Context, t fsm.MessageType, req any) (any, uint64, error)

// reap makes one pass of the reaper over store's state at now: it
// deletes, each through a Raft entry, what reapable, reapableJobs and
// reapableNodes find, and returns what was deleted. A failed entry is reported (the
// first error) and the rest of the pass goes on; what it would have
// deleted is found again on the next pass.
func reap(ctx context.Context, apply applyFunc, store *state.Store, now time.Time, th gcThresholds) (reapCounts, error) {
	var n reapCounts
	snap := store.Snapshot()
	var first error
	fail := func(what string, err error) {
		if first == nil {
			first = fmt.Errorf("%s: %w", what, err)
		}
	}
	req, err := reapable(snap, reapBatch, now, th.Eval, th.Deployment)
	if err != nil {
		return n, fmt.Errorf("reading state: %w", err)
	}
	if len(req.Allocs) > 0 || len(req.Evals) > 0 || len(req.Deployments) > 0 {
		if _, _, err := apply(ctx, fsm.EvalReapRequestType, req); err != nil {
			fail("deleting allocs, evals and deployments", err)
		} else {
			n.Allocs, n.Evals, n.Deployments = len(req.Allocs), len(req.Evals), len(req.Deployments)
		}
	}
	jobs, err := reapableJobs(snap, reapJobBatch, now, th.Job)
	if err != nil {
		return n, fmt.Errorf("reading state: %w", err)
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		// A job changed since the pass read it (run again, say, while
		// the jobs before it were purged) waits for the next pass.
		if cur, err := store.Snapshot().JobByID(j.Namespace, j.ID); err != nil {
			fail("reading job "+j.ID, err)
			continue
		} else if cur == nil || cur.ModifyIndex != j.ModifyIndex {
			continue
		}
		// The purge deletes the job and its versions; its allocations
		// and evaluations, all terminal, go on the next pass (those of a
		// purged job go at once), its deployments after
		// deployment_gc_threshold.
		if _, _, err := apply(ctx, fsm.JobDeregisterRequestType, &structs.JobDeregisterRequest{
			Namespace: j.Namespace, JobID: j.ID, Purge: true, SubmitTime: now.UnixNano()}); err != nil {
			fail("purging job "+j.ID, err)
			continue
		}
		n.Jobs++
	}
	nodes, err := reapableNodes(snap, reapBatch, now, th.Node)
	if err != nil {
		return n, fmt.Errorf("reading state: %w", err)
	}
	if len(nodes) > 0 {
		if _, _, err := apply(ctx, fsm.NodeDeregisterRequestType, &structs.NodeDeregisterRequest{NodeIDs: nodes}); err != nil {
			fail("deregistering nodes", err)
		} else {
			n.Nodes = len(nodes)
		}
	}
	return n, first
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

// reapableJobs returns up to limit jobs to purge, as Nomad's job GC
// (server.job_gc_threshold, age): a job that is stopped, or a batch or
// sysbatch job that is dead, whose allocations its clients are all done
// with (complete, failed or lost) and whose evaluations have all ended,
// and has been so for age: its current version was submitted (for a
// stopped job, stopped), and each of its allocations and evaluations last
// changed, before now - age. A periodic or parameterized parent is
// collected only once stopped, as Nomad's: while registered it launches
// children, whatever its own status; its children are jobs of their own,
// collected by the same rule.
func reapableJobs(snap *state.Snapshot, limit int, now time.Time, age time.Duration) ([]*structs.Job, error) {
	cutoff := now.Add(-age).UnixNano()
	jobs, err := snap.Jobs()
	if err != nil {
		return nil, err
	}
	var out []*structs.Job
	for _, j := range jobs {
		if len(out) >= limit {
			break
		}
		if !jobGCable(j) || !olderThan(j.SubmitTime, cutoff) {
			continue
		}
		ok, err := jobHistoryDone(snap, j, cutoff)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, j)
		}
	}
	return out, nil
}

// jobGCable reports whether j is of a kind the job GC collects (Nomad's
// jobIsGCable): a stopped job, or a batch or sysbatch job that is dead and
// not a periodic or parameterized parent.
func jobGCable(j *structs.Job) bool {
	if j.Stop {
		return true
	}
	if j.IsParent() || j.Status != structs.JobStatusDead {
		return false
	}
	return j.Type == structs.JobTypeBatch || j.Type == structs.JobTypeSysBatch
}

// jobHistoryDone reports whether every allocation of j is finished on its
// client and every evaluation of j has ended, each last changed before
// cutoff (UnixNano).
func jobHistoryDone(snap *state.Snapshot, j *structs.Job, cutoff int64) (bool, error) {
	evals, err := snap.EvalsByJob(j.Namespace, j.ID)
	if err != nil {
		return false, err
	}
	for _, e := range evals {
		if !e.Terminal() || !olderThan(e.ModifyTime, cutoff) {
			return false, nil
		}
	}
	allocs, err := snap.AllocsByJob(j.Namespace, j.ID)
	if err != nil {
		return false, err
	}
	for _, a := range allocs {
		if !a.ClientTerminalStatus() || !olderThan(a.ModifyTime, cutoff) {
			return false, nil
		}
	}
	return true, nil
}

// reapableNodes returns up to limit IDs of nodes to deregister, as Nomad's
// node GC (server.node_gc_threshold, age): nodes down since before
// now - age with no allocation that is not terminal (the servers stopped
// it, or its client finished or it was lost). A node that comes back
// after it was deregistered registers again.
func reapableNodes(snap *state.Snapshot, limit int, now time.Time, age time.Duration) ([]string, error) {
	cutoff := now.Add(-age).UnixNano()
	nodes, err := snap.Nodes()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range nodes {
		if len(out) >= limit {
			break
		}
		if n.Status != structs.NodeStatusDown || !olderThan(n.StatusUpdatedAt, cutoff) {
			continue
		}
		allocs, err := snap.AllocsByNode(n.ID)
		if err != nil {
			return nil, err
		}
		live := false
		for _, a := range allocs {
			if !a.TerminalStatus() {
				live = true
				break
			}
		}
		if !live {
			out = append(out, n.ID)
		}
	}
	return out, nil
}
