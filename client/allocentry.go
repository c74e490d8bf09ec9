package client

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/droverhq/drover/client/allocrunner"
	"github.com/droverhq/drover/client/health"
	"github.com/droverhq/drover/client/taskenv"
	"github.com/droverhq/drover/structs"
)

// allocEntry is one allocation the client runs (or ran): its runner, the
// servers' latest version of it, and what the client reports of it.
//
// Deployment health is reported only for the deployment it was decided
// in. The runner's own tracker decides for the deployment the allocation
// had when its runner was created; when an in-place update moves the
// allocation into a newer deployment, the entry tracks health for that
// one itself, from the runner's task states.
type allocEntry struct {
	a      *Agent
	id     string
	dir    allocrunner.AllocDir
	runner *allocrunner.AllocRunner // nil if the allocation could not be set up, or had finished

	mu         sync.Mutex
	alloc      *structs.Allocation
	last       allocrunner.Update
	setupErr   error
	killed     bool
	collecting bool // dropped by the servers: being killed and removed
	// deferred: restored without a runner, its tasks never started, to
	// be started on the servers' first answer (see restore).
	deferred  bool
	runnerDep string // deployment the runner's tracker decides for
	// runnerMigrate: the runner's tracker decides for an alloc outside a
	// deployment, by the group's migrate block.
	runnerMigrate bool
	tracker       *health.Tracker
	// trackerSince: the in-place tracker ignores a task's run that
	// started before it (a job restart's old run).
	trackerSince time.Time
	trackerDep   string
	trackerRes   *health.Result
	stopChecks   context.CancelFunc
	failedAt     time.Time // when a failure without health was first reported
	verdict      int8      // health in the last report: 0 none, 1 healthy, 2 unhealthy
	verdictDep   string    // the deployment of the last report
	// checks holds the latest result of each check, by check name
	// (service/check), for AllocChecks.
	checks map[string]health.CheckResult
}

// recordCheck keeps a check's latest result.
func (e *allocEntry) recordCheck(r health.CheckResult) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.checks == nil {
		e.checks = map[string]health.CheckResult{}
	}
	e.checks[r.Name] = r
}

// healthUndecided reports whether the servers have no health for alloc in
// its current deployment.
func healthUndecided(a *structs.Allocation) bool {
	return a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil
}

// runnerTracksHealth reports whether an alloc runner created for alloc
// sets up its own health tracker (see allocrunner.setupHealth).
func runnerTracksHealth(a *structs.Allocation) bool {
	if a.Job == nil || !healthUndecided(a) {
		return false
	}
	return allocrunner.HealthStrategyFor(a, a.Job.LookupTaskGroup(a.TaskGroup)) != nil
}

// onRunnerUpdate is the runner's OnUpdate: record, feed the in-place
// tracker, report.
func (e *allocEntry) onRunnerUpdate(u allocrunner.Update) {
	if u.PersistErr != nil {
		e.a.logger.Warn("writing alloc state file", "alloc_id", e.id, "error", u.PersistErr)
	}
	e.mu.Lock()
	e.last = u
	tr, since := e.tracker, e.trackerSince
	e.mu.Unlock()
	if tr != nil {
		for name, st := range u.TaskStates {
			if !oldRun(st, since) {
				tr.TaskUpdated(name, st)
			}
		}
	}
	e.report()
}

// report builds the allocation's report and queues it. Both happen under
// e.mu, so reports reach the queue in the order of the state they carry.
// A new health verdict and a failure are urgent: a rollout or a
// reschedule waits on them.
func (e *allocEntry) report() {
	e.mu.Lock()
	defer e.mu.Unlock()
	rep := e.reportLocked()
	var verdict int8
	if ds := rep.DeploymentStatus; ds != nil && ds.Healthy != nil {
		verdict = 2
		if *ds.Healthy {
			verdict = 1
		}
	}
	newVerdict := verdict != 0 && (verdict != e.verdict || e.alloc.DeploymentID != e.verdictDep)
	urgent := newVerdict || rep.ClientStatus == structs.AllocClientStatusFailed
	e.verdict, e.verdictDep = verdict, e.alloc.DeploymentID
	e.a.reporter.enqueue(rep, urgent)
}

func (e *allocEntry) reportLocked() *structs.Allocation {
	u := e.last
	rep := &structs.Allocation{ID: e.id, ClientStatus: u.ClientStatus, TaskStates: u.TaskStates, NetworkStatus: u.NetworkStatus}
	if rep.ClientStatus == "" {
		rep.ClientStatus = allocrunner.ClientStatus(u.TaskStates)
	}
	rep.ClientDescription = describe(rep.ClientStatus)
	if u.ClientDescription != "" {
		rep.ClientDescription = u.ClientDescription
	}
	if e.setupErr != nil {
		rep.ClientStatus = structs.AllocClientStatusFailed
		rep.ClientDescription = "Failed to set up the allocation: " + e.setupErr.Error()
	}
	var h *health.Result
	switch dep := e.alloc.DeploymentID; {
	case dep == "" && e.runnerMigrate:
		// A replacement of an alloc moving off a draining node, judged
		// by the group's migrate block.
		h = u.Health
	case dep == "":
	case dep == e.runnerDep:
		h = u.Health
	case dep == e.trackerDep:
		h = e.trackerRes
	}
	if h == nil && rep.ClientStatus == structs.AllocClientStatusFailed && e.alloc.DeploymentID != "" && healthUndecided(e.alloc) {
		// Failed with no health decided (it could not even be set up, so
		// no tracker ran): unhealthy, as Nomad's clients report it, so
		// that the deployment replaces it or fails instead of waiting.
		if e.failedAt.IsZero() {
			e.failedAt = e.a.clock.Now()
		}
		h = &health.Result{Healthy: false, Timestamp: e.failedAt}
	}
	if h != nil {
		healthy := h.Healthy
		rep.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: h.Timestamp}
	}
	return rep
}

// describe is the ClientDescription for a status, as Nomad words it.
func describe(status string) string {
	switch status {
	case structs.AllocClientStatusPending:
		return "No tasks have started"
	case structs.AllocClientStatusRunning:
		return "Tasks are running"
	case structs.AllocClientStatusComplete:
		return "All tasks have completed"
	case structs.AllocClientStatusFailed:
		return "Failed tasks"
	}
	return ""
}

// heldJob is the job of the entry's alloc, as heldJobs counts it.
func (e *allocEntry) heldJob() *structs.Job {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.alloc.Job
}

func (e *allocEntry) isCollecting() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.collecting
}

// update takes the servers' latest version of the allocation: a desired
// stop kills it; a job or deployment change in place is recorded (the
// tasks keep running) and, for a new deployment, tracked for health.
func (e *allocEntry) update(alloc *structs.Allocation) {
	e.mu.Lock()
	prev := e.alloc
	if alloc.Job == nil {
		c := *alloc
		c.Job = prev.Job
		alloc = &c
	}
	e.alloc = alloc
	if alloc.Job != prev.Job {
		// update is called with a.mu held (reconcile).
		e.a.releaseJob(prev.Job)
		e.a.holdJob(alloc.Job)
		e.a.countDisconnects(prev, -1)
		e.a.countDisconnects(alloc, 1)
		e.a.heldChanged()
	}
	stop := (alloc.DesiredStatus == structs.AllocDesiredStatusStop || alloc.DesiredStatus == structs.AllocDesiredStatusEvict) && !e.killed
	if stop {
		e.killed = true
	}
	changed := alloc.AllocModifyIndex != prev.AllocModifyIndex || alloc.JobVersion() != prev.JobVersion() ||
		alloc.DeploymentID != prev.DeploymentID
	track := !e.killed && e.runner != nil && alloc.DesiredStatus == structs.AllocDesiredStatusRun &&
		alloc.DeploymentID != "" && alloc.DeploymentID != e.runnerDep && alloc.DeploymentID != e.trackerDep &&
		healthUndecided(alloc) && !terminal(e.last.ClientStatus)
	restart := restartAsked(prev, alloc) && !e.killed && e.runner != nil &&
		alloc.DesiredStatus == structs.AllocDesiredStatusRun && !terminal(e.last.ClientStatus)
	// An alloc being killed is not saved again: after a restart the
	// servers' first answer stops it again, and its saved copy (with
	// its job, most of the write) would only say so sooner.
	save := changed && !restart && !e.killed
	e.mu.Unlock()

	if save {
		// A restart's alloc is saved once its tasks restarted: a client
		// that stops before then finds the request again on restore.
		if err := saveAlloc(e.dir, alloc, e.a.cfg.Jobs); err != nil {
			e.a.logger.Warn("saving alloc", "alloc_id", e.id, "error", err)
		}
		if prev.JobVersion() != alloc.JobVersion() {
			e.a.logger.Debug("alloc updated in place", "alloc_id", e.id, "job_version", alloc.JobVersion())
		}
	}
	if e.runner != nil && alloc.DesiredTransition.ShouldIgnoreShutdownDelay() {
		e.runner.SkipShutdownDelay()
	}
	if stop {
		e.a.logger.Info("stopping alloc", "alloc_id", e.id, "desired", alloc.DesiredStatus, "reason", alloc.DesiredDescription)
		e.stopTracker()
		if e.runner != nil {
			e.runner.Stop()
		}
	}
	switch {
	case restart:
		// A job restart in place: the tasks restart first, then the
		// health of the restart's deployment is tracked from their new
		// start, so that the old run never counts toward it.
		go func() {
			since := e.a.clock.Now()
			e.restartTasks(alloc.DesiredRestart)
			e.mu.Lock()
			cur, killed, collecting := e.alloc, e.killed, e.collecting
			e.mu.Unlock()
			if collecting {
				// Dropped by the servers meanwhile: its directory goes.
				return
			}
			if err := saveAlloc(e.dir, cur, e.a.cfg.Jobs); err != nil {
				e.a.logger.Warn("saving alloc", "alloc_id", e.id, "error", err)
			}
			if track && !killed && cur.DeploymentID == alloc.DeploymentID {
				e.trackHealth(alloc, since)
			}
		}()
	case track:
		e.trackHealth(alloc, time.Time{})
	}
	if changed && !stop {
		// A new deployment has no health yet: say so at once.
		e.report()
	}
}

// restartAsked reports whether the servers' alloc asks for a restart in
// place (structs.DesiredRestart) that its previous version did not: each
// job restart restarts an alloc once, and a client that restores the
// alloc from disk has the request it already acted on.
func restartAsked(prev, alloc *structs.Allocation) bool {
	want := alloc.DesiredRestart
	if want == nil || want.DeploymentID == "" {
		return false
	}
	return prev == nil || prev.DesiredRestart == nil || prev.DesiredRestart.DeploymentID != want.DeploymentID
}

// restartTasks restarts the tasks a job restart names (every running one
// by default, every task with AllTasks), as `alloc restart` does: not
// counted against the restart policy. A task that cannot restart is
// logged; the health tracker then finds the alloc unhealthy.
func (e *allocEntry) restartTasks(r *structs.DesiredRestart) {
	e.a.logger.Info("restarting alloc for a job restart", "alloc_id", e.id, "deployment_id", r.DeploymentID, "tasks", r.Tasks)
	var errs []error
	if len(r.Tasks) == 0 {
		errs = append(errs, e.runner.RestartTasks(e.a.ctx, "", r.AllTasks))
	}
	for _, t := range r.Tasks {
		errs = append(errs, e.runner.RestartTasks(e.a.ctx, t, false))
	}
	if err := errors.Join(errs...); err != nil {
		e.a.logger.Warn("job restart: restarting tasks", "alloc_id", e.id, "error", err)
	}
}

func terminal(clientStatus string) bool {
	switch clientStatus {
	case structs.AllocClientStatusComplete, structs.AllocClientStatusFailed, structs.AllocClientStatusLost:
		return true
	}
	return false
}

// trackHealth starts a health tracker for the deployment alloc moved
// into, fed by the runner's task states and the group's checks. A task
// that runs since before notBefore (a restart's old run, whose stop the
// runner may not have reported yet) is not counted until it reports
// again.
func (e *allocEntry) trackHealth(alloc *structs.Allocation, notBefore time.Time) {
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil || tg.Update == nil || len(tg.Tasks) == 0 {
		return
	}
	dep := alloc.DeploymentID
	names, ephemeral := health.GroupTasks(tg)
	var checks []health.Check
	var checkNames []string
	if tg.Update.HealthCheck == structs.UpdateHealthCheckChecks {
		t := tg.Tasks[0]
		env := taskenv.Build(taskenv.Input{
			Alloc: alloc, Task: t, Node: e.a.node, AllocDir: e.dir.SharedDir(),
			TaskDir: e.dir.TaskLocalDir(t.Name), SecretsDir: e.dir.TaskSecretsDir(t.Name), HostEnv: e.a.cfg.HostEnv,
		})
		var exec health.ScriptExec
		if e.runner != nil {
			exec = e.runner.Exec
		}
		var err error
		if checks, err = health.AllocChecks(alloc, tg, env.Replace, exec); err != nil {
			e.a.logger.Warn("alloc checks", "alloc_id", e.id, "error", err)
			return
		}
		checkNames = health.DeploymentChecks(checks)
	}
	tr, err := health.NewTracker(health.Config{
		Strategy: tg.Update, Tasks: names, Ephemeral: ephemeral, Checks: checkNames, Clock: e.a.clock,
		OnResult: func(r health.Result) { e.onTrackerResult(dep, r) },
	})
	if err != nil {
		e.a.logger.Warn("health tracker", "alloc_id", e.id, "error", err)
		return
	}
	e.stopTracker()
	ctx, cancel := context.WithCancel(context.Background())
	e.mu.Lock()
	e.tracker, e.trackerDep, e.trackerRes, e.stopChecks, e.trackerSince = tr, dep, nil, cancel, notBefore
	states := e.last.TaskStates
	e.mu.Unlock()
	tr.Start()
	for name, st := range states {
		if !oldRun(st, notBefore) {
			tr.TaskUpdated(name, st)
		}
	}
	if len(checks) > 0 {
		health.RunChecks(ctx, e.a.clock, checks, func(r health.CheckResult) {
			e.recordCheck(r)
			tr.CheckResult(r)
		})
	}
}

// oldRun reports a task state of a run that started before since.
func oldRun(st *structs.TaskState, since time.Time) bool {
	return st != nil && st.State == structs.TaskStateRunning && !since.IsZero() && st.StartedAt.Before(since)
}

func (e *allocEntry) onTrackerResult(dep string, r health.Result) {
	e.mu.Lock()
	if e.trackerDep != dep {
		e.mu.Unlock()
		return
	}
	e.trackerRes = &r
	e.mu.Unlock()
	e.report()
}

// stopTracker stops the in-place health tracker and its checks, if any.
func (e *allocEntry) stopTracker() {
	e.mu.Lock()
	tr, cancel := e.tracker, e.stopChecks
	e.tracker, e.stopChecks = nil, nil
	e.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if tr != nil {
		tr.Stop()
	}
}
