package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/scheduler"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// RestartRequest is a job restart (`job restart`), with Nomad's flags.
type RestartRequest struct {
	Namespace, JobID string
	// Groups and Tasks restrict the restart (-group, -task); none: all.
	Groups   []string
	Tasks    []string
	AllTasks bool
	// Reschedule replaces the allocs instead of restarting them in place.
	Reschedule bool
	// BatchSize is -batch-size ("N" or "N%"); "" follows max_parallel.
	BatchSize string
	// BatchWait is -batch-wait; BatchWaitAsk is -batch-wait ask.
	BatchWait    time.Duration
	BatchWaitAsk bool
	// OnError is -on-error ("ask", "fail"); "" follows on_failure.
	OnError string
	// Plan only computes the batches: nothing is written.
	Plan bool
}

// RestartResponse answers a restart: its deployment and evaluation, or
// with Plan the batches it would run.
type RestartResponse struct {
	DeploymentID    string
	EvalID          string
	EvalCreateIndex uint64
	// RestartPlan is the batches the restart runs if nothing fails, in
	// RolloutPlan's shape.
	RestartPlan []structs.RolloutBatch
	Index       uint64
}

// ErrRestartConflict: the job changed, or a deployment of it started,
// between the leader's checks and the write.
var ErrRestartConflict = errors.New("job restart conflicts with a change of the job")

// EvalTriggerJobRestart is the trigger of a restart's first evaluation.
const EvalTriggerJobRestart = "job-restart"

// RestartJob starts a job restart as a deployment of the job's current
// version (structs/restart.go), or with req.Plan answers its batches. It
// is refused (ErrInvalidRequest, a 400) for an unknown group or task, a
// zero batch size, a job with no running allocs, a batch job with
// Reschedule, a job that is not a service, or while a deployment of the
// job is active; ErrJobNotFound for an unknown job.
func (l *Leader) RestartJob(ctx context.Context, req RestartRequest) (*RestartResponse, error) {
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	snap := l.store().Snapshot()
	job, err := snap.JobByID(ns, req.JobID)
	if err != nil {
		return nil, err
	}
	if job == nil {
		return nil, fmt.Errorf("%w: %q", ErrJobNotFound, req.JobID)
	}
	spec, err := restartSpec(job, req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	allocs, err := snap.LiveAllocsByJob(ns, job.ID)
	if err != nil {
		return nil, err
	}
	running := 0
	for _, a := range allocs {
		if spec.Restarts(a.TaskGroup) && a.DesiredStatus == structs.AllocDesiredStatusRun && a.ClientStatus == structs.AllocClientStatusRunning {
			running++
		}
	}
	if running == 0 {
		return nil, fmt.Errorf("%w: job %q has no running allocations to restart", ErrInvalidRequest, job.ID)
	}
	latest, err := snap.LatestDeploymentByJob(ns, job.ID)
	if err != nil {
		return nil, err
	}
	if latest.Active() {
		return nil, fmt.Errorf("%w: %s", ErrInvalidRequest, structs.RestartConflictDescription(latest.ID, latest.Status, latest.IsRestart()))
	}
	now := l.clock.Now()
	d := &structs.Deployment{
		ID: l.newID(), Namespace: ns, JobID: job.ID, JobVersion: job.Version, JobModifyIndex: job.ModifyIndex,
		JobSpecModifyIndex: job.JobModifyIndex, JobCreateIndex: job.CreateIndex,
		TaskGroups: map[string]*structs.DeploymentState{}, Status: structs.DeploymentStatusRunning,
		StatusDescription: structs.RestartDescription(spec.Reschedule),
		CreateTime:        now.UnixNano(), ModifyTime: now.UnixNano(), Restart: spec,
	}
	if req.Plan {
		idx, err := snap.MaxIndex(state.TableJobs, state.TableAllocs, state.TableDeployments)
		if err != nil {
			return nil, err
		}
		// As if written now: after every alloc of the job.
		d.CreateIndex = idx + 1
		in := scheduler.Input{Job: job, JobID: job.ID, Allocs: allocs, Deployment: d, Now: now, EvalPriority: job.Priority}
		if in.Nodes, err = snap.Nodes(); err != nil {
			return nil, err
		}
		out := scheduler.PlanRollout(in)
		if out == nil {
			out = []structs.RolloutBatch{}
		}
		return &RestartResponse{RestartPlan: out, Index: idx}, nil
	}
	eval := l.jobEval(ns, job.ID, job.Type, job.Priority, EvalTriggerJobRestart, now.UnixNano())
	eval.DeploymentID, eval.JobModifyIndex = d.ID, job.JobModifyIndex
	_, index, err := l.apply(ctx, fsm.JobRestartRequestType, &structs.JobRestartRequest{Deployment: d, Eval: eval, UpdatedAt: now.UnixNano()})
	if errors.Is(err, state.ErrConflict) {
		return nil, fmt.Errorf("%w: %w", ErrRestartConflict, err)
	}
	if err != nil {
		return nil, err
	}
	return &RestartResponse{DeploymentID: d.ID, EvalID: eval.ID, EvalCreateIndex: index, Index: index}, nil
}

// restartSpec checks a restart request against the job and resolves it:
// the groups it restarts (all, or those named; with tasks named, those
// that have one of them), its batch size and error action.
func restartSpec(job *structs.Job, req RestartRequest) (*structs.RestartSpec, error) {
	switch {
	case job.Stop:
		return nil, fmt.Errorf("job %q is stopped", job.ID)
	case job.IsParent():
		return nil, fmt.Errorf("job %q is periodic or parameterized: restart its children", job.ID)
	case req.Reschedule && job.Type == structs.JobTypeBatch:
		return nil, fmt.Errorf("-reschedule is not supported for batch jobs")
	case job.Type != structs.JobTypeService:
		return nil, fmt.Errorf("job %q is a %s job: a restart rolls service jobs only", job.ID, job.Type)
	case req.AllTasks && len(req.Tasks) > 0:
		return nil, fmt.Errorf("-task and -all-tasks cannot be used together")
	case req.Reschedule && (req.AllTasks || len(req.Tasks) > 0):
		return nil, fmt.Errorf("-reschedule replaces whole allocations: it cannot be used with -task or -all-tasks")
	case req.BatchWait < 0:
		return nil, fmt.Errorf("-batch-wait must not be negative")
	}
	spec := &structs.RestartSpec{
		Tasks: slices.Clone(req.Tasks), AllTasks: req.AllTasks, Reschedule: req.Reschedule,
		BatchWait: req.BatchWait, BatchWaitAsk: req.BatchWaitAsk,
	}
	switch req.OnError {
	case "", structs.RestartOnErrorAsk, structs.RestartOnErrorFail:
		spec.OnError = req.OnError
	default:
		return nil, fmt.Errorf("-on-error must be %q or %q, not %q", structs.RestartOnErrorAsk, structs.RestartOnErrorFail, req.OnError)
	}
	if req.BatchSize != "" {
		a, err := structs.ParseAmount(req.BatchSize)
		if err != nil || a.Value <= 0 || !a.ValidPercent() {
			return nil, fmt.Errorf("-batch-size must be a count above 0 or a percent from 1%% to 100%%, not %q", req.BatchSize)
		}
		spec.BatchSize = &a
	}
	for _, g := range req.Groups {
		if job.LookupTaskGroup(g) == nil {
			return nil, fmt.Errorf("group %q not found in job %q", g, job.ID)
		}
	}
	for _, t := range req.Tasks {
		found := false
		for _, tg := range job.TaskGroups {
			if tg != nil && (len(req.Groups) == 0 || slices.Contains(req.Groups, tg.Name)) && tg.LookupTask(t) != nil {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("task %q not found in the restarted groups of job %q", t, job.ID)
		}
	}
	for _, tg := range job.TaskGroups {
		if tg == nil || len(req.Groups) > 0 && !slices.Contains(req.Groups, tg.Name) {
			continue
		}
		if len(req.Tasks) > 0 && !slices.ContainsFunc(req.Tasks, func(t string) bool { return tg.LookupTask(t) != nil }) {
			continue
		}
		spec.Groups = append(spec.Groups, tg.Name)
	}
	if len(spec.Groups) == 0 {
		return nil, fmt.Errorf("no group of job %q to restart (%s)", job.ID, strings.Join(req.Groups, ", "))
	}
	return spec, nil
}
