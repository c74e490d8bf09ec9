package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/client/allocrunner"
	"github.com/droverhq/drover/structs"
)

// watchLoop follows the node's allocations with a blocking query of
// their IDs and indexes, fetches those the servers changed since it last
// applied them, and makes the runners match. The client's own reports
// wake the query (they write the allocs) but fetch nothing: the index of
// an alloc moves only with the servers' changes. It starts once the
// node is registered, and keeps going whatever the servers do.
func (a *Agent) watchLoop(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-a.registeredCh:
	}
	var index uint64
	// known is the index of the copy of each alloc last applied.
	known := newKnownAllocs()
	backoff := a.cfg.RetryInterval
	retry := func(what string, err error) bool {
		if ctx.Err() != nil {
			return false
		}
		a.logger.Warn(what+" failed; retrying", "error", err, "in", backoff)
		if !sleep(ctx, a.clock, jitter(backoff)) {
			return false
		}
		backoff = min(2*backoff, MaxRetryInterval)
		return true
	}
	// Bound each call beyond the servers' own wait, against a server
	// that vanished without closing the connection.
	bound := a.cfg.AllocWait + a.cfg.AllocWait/16 + 10e9
	// The servers' allocs-sync answers the index and what changed since
	// the last answer in one round trip; servers without it, the index
	// and then a fetch.
	syncer, _ := a.api.(allocsSyncer)
	for ctx.Err() == nil {
		qctx, cancel := context.WithTimeout(ctx, bound)
		var present allocsIndex
		var idx uint64
		var synced []*structs.Allocation
		var err error
		if syncer != nil {
			var s *apiclient.NodeAllocsSync
			s, idx, err = syncer.AllocsSync(qctx, a.node.ID, index, known.digest(index), a.heldJobs(), index, a.cfg.AllocWait)
			if err == nil {
				present, synced = syncedPresent(s, known.idx, index), s.Changed
			}
			if errors.Is(err, apiclient.ErrSyncUnsupported) {
				// Asked again only after the agent's next pick of a
				// server (the NodeClient answers at once until then).
				var m map[string]uint64
				m, idx, err = a.api.AllocsIndex(qctx, a.node.ID, index, a.cfg.AllocWait)
				present = indexOf(m)
			}
		} else {
			var m map[string]uint64
			m, idx, err = a.api.AllocsIndex(qctx, a.node.ID, index, a.cfg.AllocWait)
			present = indexOf(m)
		}
		cancel()
		if err != nil {
			if !retry("reading the node's allocations", err) {
				return
			}
			continue
		}
		pull, _ := changedAllocs(present, known.idx)
		// What came with the index need not be fetched: only a change
		// the answer left out (one at or below the index asked from,
		// which the agent never applied) is.
		pull, newest := notSynced(pull, present, synced)
		allocs := synced
		if len(pull) > 0 {
			// Ask for a copy at least as new as the index just read: a
			// stale server waits until it has caught up.
			qctx, cancel := context.WithTimeout(ctx, bound)
			fetched, err := a.api.GetAllocs(qctx, pull, a.heldJobs(), newest-1, a.cfg.AllocWait)
			cancel()
			if err != nil {
				if !retry("fetching changed allocations", err) {
					return
				}
				continue
			}
			allocs = append(allocs, fetched...)
		}
		if len(allocs) > 0 {
			a.cfg.Jobs.shareJobs(allocs)
		}
		backoff = a.cfg.RetryInterval
		if behind := a.reconcile(present, allocs, known); behind {
			// A copy older than its index: ask again at the same index,
			// which answers at once.
			if !sleep(ctx, a.clock, jitter(a.cfg.RetryInterval)) {
				return
			}
			continue
		}
		// An index that went back means the servers' state was rebuilt:
		// follow it. Never ask with 0 again, which would not block.
		index = max(idx, 1)
	}
}

// heldJobs returns the distinct job versions of the allocs the agent
// runs: the servers need not send them again with an alloc. The list is
// kept until an alloc is added or removed or takes another job
// (heldChanged), and built then from the count of each version's allocs
// (heldRefs), not by looking at every alloc: each sync asks for it, and a
// node keeps its finished allocs too. The caller must not change it.
func (a *Agent) heldJobs() []*structs.Job {
	a.mu.Lock()
	defer a.mu.Unlock()
	gen := a.heldGen.Load()
	if a.heldFor == gen+1 {
		return a.held
	}
	a.held, a.heldFor = a.listHeldJobs(), gen+1
	return a.held
}

// heldChanged marks the list of heldJobs out of date.
func (a *Agent) heldChanged() { a.heldGen.Add(1) }

// heldJob is a job version the agent holds allocs of: one of its copies
// (the JobCache's, mostly the only one) and how many allocs hold it.
type heldJob struct {
	job *structs.Job
	n   int
}

// holdJob counts an alloc of j (nil: none) added to a.allocs, or that
// took j. Called with a.mu held, as every change of a.allocs and of an
// alloc's job is made.
func (a *Agent) holdJob(j *structs.Job) {
	if j == nil {
		return
	}
	if a.heldRefs == nil {
		a.heldRefs = map[structs.JobRef]*heldJob{}
	}
	ref := j.Ref()
	if h := a.heldRefs[ref]; h != nil {
		h.n++
		return
	}
	a.heldRefs[ref] = &heldJob{job: j, n: 1}
	a.heldChanged()
}

// releaseJob takes back holdJob(j): the alloc is gone from a.allocs, or
// took another job. Called with a.mu held.
func (a *Agent) releaseJob(j *structs.Job) {
	if j == nil {
		return
	}
	ref := j.Ref()
	h := a.heldRefs[ref]
	if h == nil {
		return
	}
	// The copy listed stays while other allocs hold the version, even
	// if this alloc's was that copy: it is the same version (the servers
	// read its ref), and the JobCache's one mostly.
	if h.n--; h.n <= 0 {
		delete(a.heldRefs, ref)
		a.heldChanged()
	}
}

// listHeldJobs lists heldJobs. Called with a.mu held.
func (a *Agent) listHeldJobs() []*structs.Job {
	var out []*structs.Job
	for _, h := range a.heldRefs {
		out = append(out, h.job)
	}
	return out
}

// changedAllocs returns, sorted, the IDs of the allocs whose index is
// past the one last applied (or that are new), and the highest of their
// indexes.
func changedAllocs(present allocsIndex, known map[string]uint64) ([]string, uint64) {
	var pull []string
	var newest uint64
	present.each(func(id string, idx uint64) {
		if k, ok := known[id]; !ok || idx > k {
			pull = append(pull, id)
			newest = max(newest, idx)
		}
	})
	slices.Sort(pull)
	return pull, newest
}

// notSynced returns, of pull (sorted), the IDs that synced does not carry
// at the index present gives, and the highest index among them.
func notSynced(pull []string, present allocsIndex, synced []*structs.Allocation) ([]string, uint64) {
	at := func(id string) uint64 { i, _ := present.get(id); return i }
	if len(synced) == 0 {
		var newest uint64
		for _, id := range pull {
			newest = max(newest, at(id))
		}
		return pull, newest
	}
	have := make(map[string]bool, len(synced))
	for _, a := range synced {
		if a != nil && allocIndex(a) >= at(a.ID) {
			have[a.ID] = true
		}
	}
	var out []string
	var newest uint64
	for _, id := range pull {
		if !have[id] {
			out = append(out, id)
			newest = max(newest, at(id))
		}
	}
	return out, newest
}

// allocIndex is the index of the servers' last change to an alloc, as
// the servers' index map gives it.
func allocIndex(a *structs.Allocation) uint64 { return a.ServersIndex() }

// reconcile makes the runners match the servers' allocations: present
// lists them all, pulled holds those that changed. New ones that should
// run are started, existing ones updated (or killed when the servers
// want them stopped), and those the servers no longer list are killed
// and their directories removed. It records in known the index of each
// pulled alloc, and reports whether one came back older than present
// says (a server behind the one that gave the index); that one is left
// for the next round.
func (a *Agent) reconcile(present allocsIndex, pulled []*structs.Allocation, known *knownAllocs) (behind bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ctx.Err() != nil {
		return false
	}
	// Whether every alloc known is listed, asked before the pulled ones
	// are recorded (their indexes are past the one the index was read
	// from, and they are listed).
	allListed := present.holdsAllKnown(known)
	var fresh []*structs.Allocation
	for _, alloc := range pulled {
		if alloc == nil || alloc.ID == "" {
			continue
		}
		want, listed := present.get(alloc.ID)
		if !listed {
			continue
		}
		if allocIndex(alloc) < want {
			behind = true
			continue
		}
		known.set(alloc.ID, allocIndex(alloc))
		if alloc.NodeID != "" && alloc.NodeID != a.node.ID {
			continue
		}
		if e := a.allocs[alloc.ID]; e != nil {
			if e.deferred && !alloc.TerminalStatus() && alloc.Job != nil {
				// Restored to wait for this answer: it starts now, as a
				// new alloc, after the updates of this answer (its
				// previous alloc's stop among them).
				a.releaseJob(e.heldJob())
				a.countDisconnects(e.alloc, -1)
				delete(a.allocs, alloc.ID)
				fresh = append(fresh, alloc)
				continue
			}
			if e.deferred {
				e.neverStarted(alloc, a.clock.Now())
				continue
			}
			if !e.isCollecting() {
				e.update(alloc)
			}
			continue
		}
		if alloc.TerminalStatus() || alloc.Job == nil {
			continue
		}
		fresh = append(fresh, alloc)
	}
	for i, e := range a.startAllocs(fresh) {
		a.allocs[fresh[i].ID] = e
		a.holdJob(e.heldJob())
		a.countDisconnects(fresh[i], 1)
	}
	if len(fresh) > 0 {
		a.heldChanged()
		signal(a.allocsAdded)
	}
	if allListed && known.runnersKnown {
		// Every alloc known is listed, and so is every alloc the agent
		// holds but those it collects already: none to forget. (A node's
		// allocs are a few hundred at most, but it syncs on each change.)
		return behind
	}
	for id := range known.idx {
		if !present.has(id) {
			known.remove(id)
		}
	}
	known.runnersKnown = true
	for id, e := range a.allocs {
		if !present.has(id) {
			a.collect(e)
		} else if _, ok := known.idx[id]; !ok {
			known.runnersKnown = false
		}
	}
	return behind
}

// startParallelism bounds how many new allocations are set up at once.
// Setting one up is mostly file system calls (its directories, the saved
// allocation, the first state file) and the driver's start, so a few
// dozen in flight keep the disk and the cores busy.
const startParallelism = 32

// startAllocs starts new allocations concurrently and returns their
// entries in the same order. Called with a.mu held: the entries join
// a.allocs only once they are complete, so nothing sees one half made.
func (a *Agent) startAllocs(allocs []*structs.Allocation) []*allocEntry {
	out := make([]*allocEntry, len(allocs))
	if len(allocs) == 1 {
		out[0] = a.startAlloc(allocs[0], nil)
		return out
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, startParallelism)
	for i, alloc := range allocs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = a.startAlloc(alloc, nil)
		}()
	}
	wg.Wait()
	return out
}

// startAlloc creates and runs the allocation's runner; restored are the
// task states found on disk, nil for a new allocation. An allocation that
// cannot be set up is reported failed. Called with a.mu held, possibly
// for several allocations at once (startAllocs): it touches only the new
// entry and what is safe for concurrent use.
func (a *Agent) startAlloc(alloc *structs.Allocation, restored map[string]*structs.TaskState) *allocEntry {
	e := &allocEntry{a: a, id: alloc.ID, dir: allocrunner.NewAllocDir(a.cfg.DataDir, alloc.ID), alloc: alloc}
	if runnerTracksHealth(alloc) {
		e.runnerDep = alloc.DeploymentID
		e.runnerMigrate = alloc.DeploymentID == ""
	}
	if restored == nil {
		// A new allocation: its directory first, with one mkdir (its
		// first save would find it missing, make it and try again). An
		// error is saveAlloc's to report.
		_ = e.dir.MakeRoot()
	}
	if err := saveAlloc(e.dir, alloc, a.cfg.Jobs); err != nil {
		e.setupErr = fmt.Errorf("saving the allocation: %w", err)
	}
	if e.setupErr == nil {
		ar, err := allocrunner.New(allocrunner.Config{
			Alloc: alloc, Node: a.node, DataDir: a.cfg.DataDir, Drivers: a.drivers,
			Clock: a.clock, HostEnv: a.cfg.HostEnv, OnUpdate: e.onRunnerUpdate, OnCheck: e.recordCheck,
			Templates: a.templates, ArtifactLimits: a.cfg.ArtifactLimits,
			Networks: a.networks, OnNetworkError: func(err error) {
				a.logger.Warn("removing the alloc's network", "alloc_id", alloc.ID, "error", err)
			},
			Previous: a.previousOnNode(alloc),
		})
		e.runner, e.setupErr = ar, err
	}
	if e.setupErr != nil {
		a.logger.Error("cannot run alloc", "alloc_id", alloc.ID, "error", e.setupErr)
		e.last = allocrunner.Update{AllocID: alloc.ID, TaskStates: restored}
		e.report()
		return e
	}
	if restored == nil {
		a.logger.Info("starting alloc", "alloc_id", alloc.ID, "job", alloc.JobID, "group", alloc.TaskGroup)
	} else {
		a.logger.Info("re-attaching to alloc", "alloc_id", alloc.ID, "job", alloc.JobID, "group", alloc.TaskGroup)
	}
	e.runner.Run()
	return e
}

// previousOnNode is the allocation alloc replaces when it runs on this
// node too, the servers stopped it, and alloc's group keeps its
// ephemeral disk (sticky or migrate): the new tasks wait for it and take
// over its data (allocrunner.Previous). A previous allocation the servers
// did not stop (a surge replacement's, which stops once this one is
// healthy) is nil: nothing to wait for. Called with a.mu held.
func (a *Agent) previousOnNode(alloc *structs.Allocation) *allocrunner.Previous {
	if !continuesSticky(alloc) {
		return nil
	}
	e := a.allocs[alloc.PreviousAllocation]
	if e == nil {
		return nil
	}
	e.mu.Lock()
	stopped := e.killed || e.collecting || e.runner == nil || terminal(e.last.ClientStatus)
	e.mu.Unlock()
	if !stopped {
		return nil
	}
	if e.runner != nil {
		return &allocrunner.Previous{ID: e.id, Dir: e.dir, Done: e.runner.Done()}
	}
	done := make(chan struct{})
	close(done)
	return &allocrunner.Previous{ID: e.id, Dir: e.dir, Done: done}
}

// neverStarted ends a deferred entry (restore) that the servers stopped
// before its tasks started: each task dead, killed before it started, as
// its runner would have reported it, and the alloc complete.
func (e *allocEntry) neverStarted(alloc *structs.Allocation, now time.Time) {
	states := map[string]*structs.TaskState{}
	if tg := e.alloc.Job.LookupTaskGroup(e.alloc.TaskGroup); tg != nil {
		for _, t := range tg.Tasks {
			const msg = "Task killed before it started"
			states[t.Name] = &structs.TaskState{State: structs.TaskStateDead, FinishedAt: now,
				Events: []*structs.TaskEvent{{Type: structs.TaskKilled, Time: now.UnixNano(), Message: msg, DisplayMessage: msg}}}
		}
	}
	e.mu.Lock()
	e.deferred = false
	e.last = allocrunner.Update{AllocID: e.id, TaskStates: states}
	e.mu.Unlock()
	e.update(alloc)
	e.report()
}

// continuesSticky reports whether alloc continues another one and its
// group's ephemeral disk is sticky (or migrates).
func continuesSticky(alloc *structs.Allocation) bool {
	if alloc.PreviousAllocation == "" || alloc.Job == nil {
		return false
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	return tg != nil && tg.EphemeralDisk != nil && (tg.EphemeralDisk.Sticky || tg.EphemeralDisk.Migrate)
}

// collect kills an allocation the servers no longer list and, once its
// tasks are dead, removes its directory and forgets it. Called with a.mu
// held.
func (a *Agent) collect(e *allocEntry) {
	e.mu.Lock()
	if e.collecting {
		e.mu.Unlock()
		return
	}
	e.collecting, e.killed = true, true
	e.mu.Unlock()
	a.logger.Info("collecting alloc", "alloc_id", e.id)
	e.stopTracker()
	if e.runner != nil {
		e.runner.SkipShutdownDelay()
		e.runner.Kill()
	}
	a.gcs.Add(1)
	go func() {
		defer a.gcs.Done()
		if e.runner != nil {
			<-e.runner.Done()
		}
		a.mu.Lock()
		if a.allocs[e.id] == e {
			delete(a.allocs, e.id)
			a.releaseJob(e.heldJob())
			a.countDisconnects(e.alloc, -1)
			a.reporter.forget(e.id)
			a.heldChanged()
		}
		a.mu.Unlock()
		if err := e.dir.Destroy(); err != nil {
			a.logger.Warn("removing alloc dir", "alloc_id", e.id, "error", err)
		}
	}()
}

// restore re-creates the runners of the allocations saved on disk whose
// tasks had not all ended; they re-attach to the tasks that still run.
// Finished ones are remembered without a runner, to be collected when
// the servers drop them. The servers' first answer decides the rest.
func (a *Agent) restore() {
	saved, err := loadAllocs(a.cfg.DataDir)
	if err != nil {
		a.logger.Warn("reading saved allocs", "error", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	defer a.heldChanged()
	var later []savedAlloc // restored once the others are (takesOver)
	for _, s := range saved {
		s.alloc.Job = a.cfg.Jobs.Share(s.alloc.Job)
		if old := a.allocs[s.alloc.ID]; old != nil {
			a.releaseJob(old.heldJob())
			a.countDisconnects(old.alloc, -1)
		}
		a.holdJob(s.alloc.Job)
		a.countDisconnects(s.alloc, 1)
		if s.finished() {
			a.allocs[s.alloc.ID] = &allocEntry{a: a, id: s.alloc.ID, dir: allocrunner.NewAllocDir(a.cfg.DataDir, s.alloc.ID),
				alloc: s.alloc, last: allocrunner.Update{AllocID: s.alloc.ID, TaskStates: s.states}}
			continue
		}
		if takesOver(s) {
			later = append(later, s)
			continue
		}
		a.allocs[s.alloc.ID] = a.startAlloc(s.alloc, s.states)
	}
	for _, s := range later {
		if e := a.allocs[s.alloc.PreviousAllocation]; e != nil && e.runner != nil && !e.killed && !terminal(e.last.ClientStatus) {
			// Its previous alloc was restored running: whether the
			// servers stopped it (and this one waits for it) or it runs
			// beside this one (a surge) is the servers' first answer to
			// say. The saved copy of an alloc being stopped says run.
			a.allocs[s.alloc.ID] = &allocEntry{a: a, id: s.alloc.ID, dir: allocrunner.NewAllocDir(a.cfg.DataDir, s.alloc.ID),
				alloc: s.alloc, deferred: true}
			continue
		}
		a.allocs[s.alloc.ID] = a.startAlloc(s.alloc, s.states)
	}
}

// takesOver reports whether a saved alloc would take over the data of an
// alloc it replaces on this node (see previousOnNode) and none of its
// tasks started yet.
func takesOver(s savedAlloc) bool {
	if !continuesSticky(s.alloc) {
		return false
	}
	for _, st := range s.states {
		if st != nil && (st.State != structs.TaskStatePending || !st.StartedAt.IsZero()) {
			return false
		}
	}
	return true
}
