package allocrunner

import (
	"fmt"

	"github.com/droverhq/drover/client/health"
	"github.com/droverhq/drover/client/taskenv"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// The allocation's health and checks: the tracker that judges its health
// for a deployment or a migration, the checks it runs, and what a check's
// verdict does (check_restart restarts the task).

// setupHealth creates the health tracker when the allocation's health is
// not yet decided and it is part of a deployment (judged by the group's
// update block) or continues another allocation outside one, as the
// replacement of an allocation moving off a draining node does (judged by
// the group's migrate block: its old allocation stops once it is healthy);
// and the checks when the tracker decides on them or one of them restarts
// tasks (check_restart).
func (ar *AllocRunner) setupHealth(env *taskenv.Env) error {
	a := ar.cfg.Alloc
	u := HealthStrategyFor(a, ar.group)
	track := u != nil && (a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil)
	ar.checksGate = track && u.HealthCheck == structs.UpdateHealthCheckChecks
	ar.gateChecks = sidecarChecks(ar.group)
	if ar.checksGate || groupRestartsOnChecks(ar.group) || len(ar.gateChecks) > 0 {
		var err error
		if err := ar.scriptChecksRunnable(); err != nil {
			return err
		}
		if ar.checks, err = health.AllocChecks(a, ar.group, env.Replace, ar.Exec); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
		ar.restarts = health.NewRestartWatcher(ar.cfg.Clock, ar.checks, ar.restartTask)
	}
	if !track {
		return nil
	}
	names, ephemeral := health.GroupTasks(ar.group)
	var checkNames []string
	if ar.checksGate {
		// Checks with on_update = "ignore" run (and may restart their
		// tasks) but do not decide the deployment's health.
		checkNames = health.DeploymentChecks(ar.checks)
	}
	tr, err := health.NewTracker(health.Config{
		Strategy: u, Tasks: names, Ephemeral: ephemeral, Checks: checkNames, Clock: ar.cfg.Clock, OnResult: ar.onHealth,
	})
	if err != nil {
		return err
	}
	ar.tracker = tr
	return nil
}

// HealthStrategyFor returns what an allocation's health is judged by: the
// group's update block for an allocation of a deployment; the group's
// migrate block for a service allocation outside one that continues
// another (the replacement of an allocation moving off a draining node);
// nil when its health is not tracked.
func HealthStrategyFor(a *structs.Allocation, tg *structs.TaskGroup) *structs.UpdateStrategy {
	switch {
	case tg == nil:
		return nil
	case a.DeploymentID != "":
		return tg.Update
	case a.PreviousAllocation != "" && tg.Migrate != nil && a.Job != nil && a.Job.Type == structs.JobTypeService:
		return tg.Migrate.HealthStrategy()
	}
	return nil
}

// scriptChecksRunnable refuses an allocation with a script check whose
// task's driver cannot run commands in its tasks.
func (ar *AllocRunner) scriptChecksRunnable() error {
	services := ar.group.Services
	for _, t := range ar.group.Tasks {
		services = append(services[:len(services):len(services)], t.Services...)
	}
	for _, svc := range services {
		for _, c := range svc.Checks {
			if c.Type != structs.CheckTypeScript {
				continue
			}
			t := ar.group.LookupTask(health.ScriptTask(svc, c))
			if t == nil {
				return fmt.Errorf("%w: script check %s names no task of the group", ErrInvalidConfig, health.CheckName(svc, c))
			}
			if _, ok := ar.cfg.Drivers[t.Driver].(drivers.ExecTaskDriver); !ok {
				return fmt.Errorf("%w: script check %s: task %q's driver %s cannot run commands in its tasks (%w)",
					ErrInvalidConfig, health.CheckName(svc, c), t.Name, t.Driver, drivers.ErrExecNotSupported)
			}
		}
	}
	return nil
}

// onCheck feeds a check's result to the health tracker (when it decides
// on checks) and to the check restarts.
func (ar *AllocRunner) onCheck(r health.CheckResult) {
	if ar.checksGate && ar.tracker != nil {
		ar.tracker.CheckResult(r)
	}
	ar.restarts.CheckResult(r)
	ar.cfg.OnCheck(r)
	if _, ok := ar.gateChecks[r.Name]; ok {
		ar.mu.Lock()
		if ar.passing == nil {
			ar.passing = map[string]bool{}
		}
		ar.passing[r.Name] = r.Passing()
		ar.mu.Unlock()
		ar.advanceLifecycle()
	}
}

// restartTask restarts a task whose check failed too often.
func (ar *AllocRunner) restartTask(task, reason string) {
	if tr := ar.runners[task]; tr != nil {
		tr.Restart(reason)
	}
}

// groupRestartsOnChecks reports whether a check of the group's services
// (group or task level) has a check_restart with a limit.
func groupRestartsOnChecks(tg *structs.TaskGroup) bool {
	services := tg.Services
	for _, t := range tg.Tasks {
		services = append(services[:len(services):len(services)], t.Services...)
	}
	for _, s := range services {
		for _, c := range s.Checks {
			if c.TriggersRestarts() {
				return true
			}
		}
	}
	return false
}

func (ar *AllocRunner) onHealth(r health.Result) {
	ar.mu.Lock()
	ar.health = &r
	ar.mu.Unlock()
	ar.emit()
}
