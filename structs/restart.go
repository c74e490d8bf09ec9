package structs

import (
	"fmt"
	"slices"
	"time"
)

// A job restart (drover's `job restart`, website/commands/job-restart.md)
// is a deployment of the job's current version whose Restart is set: the
// scheduler treats every alloc of a restarted group that the deployment has
// not yet reached (its DeploymentID is another's) as it treats an alloc of
// an older version, so the update block's width, surge, zones,
// checkpoints, thresholds and group order apply unchanged. In place, an
// alloc is reached by an in-place update that moves it into the deployment
// and sets its DesiredRestart, which its client acts on; with Reschedule it
// is replaced, as a destructive update would replace it.

// Restart error actions (RestartSpec.OnError), as Nomad's -on-error.
const (
	RestartOnErrorAsk  = "ask"
	RestartOnErrorFail = "fail"
)

// RestartSpec is what a job restart restarts and how; it is stored in its
// deployment and never changes.
type RestartSpec struct {
	// Groups are the restarted groups, in the job's order; the leader
	// names every group of the job when the request names none.
	Groups []string
	// Tasks restricts an in-place restart to these tasks (each must be in
	// every restarted group that has it; groups without them are not
	// restarted); empty: the running tasks, or every task with AllTasks.
	Tasks    []string `json:",omitempty"`
	AllTasks bool     `json:",omitempty"`
	// Reschedule replaces the allocs instead of restarting them in place.
	Reschedule bool `json:",omitempty"`
	// BatchSize, when set, is the width of each batch instead of the
	// group's max_parallel (-batch-size N or N%).
	BatchSize *Amount `json:",omitempty"`
	// BatchWait, when set, is the wait between batches instead of the
	// group's stagger (-batch-wait D); BatchWaitAsk pauses the deployment
	// after each batch until an operator resumes it (-batch-wait ask).
	BatchWait    time.Duration `json:",omitempty"`
	BatchWaitAsk bool          `json:",omitempty"`
	// OnError, when set, overrides the groups' on_failure: "fail" fails
	// the restart, "ask" pauses it for an operator to resume or fail.
	OnError string `json:",omitempty"`
}

// Copy returns a deep copy.
func (s *RestartSpec) Copy() *RestartSpec {
	if s == nil {
		return nil
	}
	c := *s
	c.Groups = copySlice(s.Groups)
	c.Tasks = copySlice(s.Tasks)
	c.BatchSize = copyAmount(s.BatchSize)
	return &c
}

// Restarts reports whether the restart covers the group.
func (s *RestartSpec) Restarts(group string) bool {
	return s != nil && slices.Contains(s.Groups, group)
}

// UpdateFor returns the update strategy a group's restart runs by: the
// group's own (every policy of it), with the restart's batch size, wait
// and error action in place of max_parallel, stagger and on_failure. A
// restart places no canaries, never reverts (on_failure "revert" and
// auto_revert fail it) and, in place, surges nothing; a group that does
// not roll (max_parallel = 0) restarts one alloc at a time, as Nomad's
// default batch size. count is the group's count.
func (s *RestartSpec) UpdateFor(u *UpdateStrategy, count int) *UpdateStrategy {
	if u == nil {
		u = DefaultUpdateStrategy()
	} else {
		u = u.Copy()
	}
	u.Canary, u.AutoPromote = 0, false
	// A restart has no older version to go back to: a failure fails it
	// (or pauses it), never reverts the job.
	u.AutoRevert = false
	if u.OnFailure == OnFailureRevert {
		u.OnFailure = OnFailureFail
	}
	if !s.Reschedule {
		u.MaxSurge = nil
	}
	if !u.Rolling() {
		u.MaxParallel = 1
	}
	if b := s.BatchSize; b != nil {
		u.MaxParallelPercent, u.FirstBatch = nil, nil
		u.MaxParallel = max(1, b.Of(count, true))
	}
	if s.BatchWait > 0 {
		u.Stagger, u.StaggerSet = s.BatchWait, true
	}
	if s.BatchWaitAsk {
		// A pause after every batch: a checkpoint at each multiple of
		// the width, resumed by an operator.
		u.Checkpoints, u.CheckpointDelay = nil, 0
		w := u.ParallelFor(count)
		for n := w; n < count; n += w {
			u.Checkpoints = append(u.Checkpoints, Amount{Value: n})
		}
	}
	switch s.OnError {
	case RestartOnErrorFail:
		u.OnFailure = OnFailureFail
	case RestartOnErrorAsk:
		u.OnFailure = OnFailurePause
	}
	return u
}

// ApplyTo returns the job as its restart rolls it: a copy whose restarted
// groups have UpdateFor's strategy. The scheduler and the deployment
// watcher decide a restart on it; allocs keep the job itself.
func (s *RestartSpec) ApplyTo(job *Job) *Job {
	if s == nil || job == nil {
		return job
	}
	c := *job
	c.TaskGroups = make([]*TaskGroup, len(job.TaskGroups))
	for i, tg := range job.TaskGroups {
		c.TaskGroups[i] = tg
		if tg != nil && s.Restarts(tg.Name) {
			g := *tg
			g.Update = s.UpdateFor(tg.Update, tg.Count)
			c.TaskGroups[i] = &g
		}
	}
	return &c
}

// ScaledOnly reports whether later is a newer version of job that differs
// from it in its groups' counts alone (a `job scale`): a restart of job
// goes on through it, leaving the allocs the scale adds alone.
func ScaledOnly(job, later *Job) bool {
	if job == nil || later == nil || later.CreateIndex != job.CreateIndex || later.Version <= job.Version ||
		len(later.TaskGroups) != len(job.TaskGroups) {
		return false
	}
	c := later.Copy()
	for _, tg := range c.TaskGroups {
		old := job.LookupTaskGroup(tg.Name)
		if old == nil {
			return false
		}
		tg.Count = old.Count
	}
	return !job.SpecChanged(c)
}

// DesiredRestart asks an alloc's client to restart its tasks in place, once
// per deployment: the client restarts them when DeploymentID is one it has
// not acted on yet.
type DesiredRestart struct {
	DeploymentID string
	Tasks        []string `json:",omitempty"`
	AllTasks     bool     `json:",omitempty"`
}

// Copy returns a deep copy.
func (r *DesiredRestart) Copy() *DesiredRestart {
	if r == nil {
		return nil
	}
	c := *r
	c.Tasks = copySlice(r.Tasks)
	return &c
}

// AllocRestartReplaced is the desired description of an alloc a job
// restart with -reschedule replaced.
const AllocRestartReplaced = "alloc is being replaced by a job restart"

// RestartDescription is the running description of a job restart.
func RestartDescription(reschedule bool) string {
	if reschedule {
		return "Restart is running: allocations are replaced"
	}
	return "Restart is running: allocations are restarted in place"
}

// Job restart request and response.

// JobRestartRequest is the Raft entry that starts a job restart: the
// deployment (ID, times and group states stamped by the leader) and its
// first evaluation, written in one transaction. The store refuses it
// (ErrConflict) when the job changed version since the leader read it or
// has an active deployment.
type JobRestartRequest struct {
	Deployment *Deployment
	Eval       *Evaluation
	// UpdatedAt is the leader's clock, UnixNano.
	UpdatedAt int64
}

// RestartConflictDescription says why a restart cannot start while a
// deployment of the job runs.
func RestartConflictDescription(id, status string, restart bool) string {
	what := "deployment"
	if restart {
		what = "restart"
	}
	return fmt.Sprintf("job has an active %s %s (%s): wait for it, or fail it first", what, id, status)
}
