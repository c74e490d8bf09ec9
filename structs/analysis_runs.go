package structs

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Analysis runs (website/rollouts.md, "Analysis runs"): which analyses a deployment
// runs, what holds a group's next batch, how a measurement moves a run,
// and the replicated write of run changes. The deployment watcher decides
// when runs start and measure; the scheduler holds a group's batches by
// the same rule (AnalysisHold), so that no scheduling pass, whatever
// triggered it, starts a batch a run has not cleared.

// AnalysesFor returns the analyses of the group's update block u that the
// deployment d of job version job runs: none for a revert's deployment
// (C.5) or a restart, only background ones for a job's first version
// (C.9), else all.
func AnalysesFor(d *Deployment, job *Job, u *UpdateStrategy) []*Analysis {
	if d == nil || u == nil || len(u.Analyses) == 0 || d.Restart != nil || d.RevertOf != nil {
		return nil
	}
	if job != nil && job.Version == d.JobVersion && job.RevertOf != nil {
		return nil
	}
	if d.JobVersion > 0 {
		return u.Analyses
	}
	var out []*Analysis
	for _, a := range u.Analyses {
		if a != nil && a.When == AnalysisWhenBackground {
			out = append(out, a)
		}
	}
	return out
}

// LatestRun returns the group's latest run of the named analysis, or nil.
func (s *DeploymentState) LatestRun(name string) *AnalysisRun {
	if s == nil {
		return nil
	}
	for i := len(s.Analyses) - 1; i >= 0; i-- {
		if r := s.Analyses[i]; r != nil && r.Name == name {
			return r
		}
	}
	return nil
}

// Cleared reports whether the run lets the rollout go on: successful, or
// accepted by an operator (an inconclusive or failed run resumed), or
// skipped by a promotion by hand.
func (r *AnalysisRun) Cleared() bool {
	if r == nil {
		return false
	}
	switch r.Phase {
	case AnalysisPhaseSuccessful, AnalysisPhaseAccepted, AnalysisPhaseSkipped:
		return true
	}
	return false
}

// BatchCovered is the number of the group's healthy new allocs the runs
// of an each_batch analysis have covered so far: the latest run's Healthy,
// and at least the group's canaries (their own analysis, and promotion,
// were their check).
func (s *DeploymentState) BatchCovered(last *AnalysisRun) int {
	n := s.DesiredCanaries
	if last != nil && last.Healthy > n {
		n = last.Healthy
	}
	return n
}

// AnalysisHold reports whether an each_batch analysis of analyses (as
// AnalysesFor gives them) holds the group's next batch: its latest run is
// not cleared (still running, failed, inconclusive), or more new allocs of
// the group are healthy than its latest run covered (a batch is healthy
// and its run has not cleared it yet). It returns the first such analysis
// and its latest run (nil when the run is yet to start).
func AnalysisHold(s *DeploymentState, analyses []*Analysis) (*Analysis, *AnalysisRun, bool) {
	if s == nil {
		return nil, nil, false
	}
	for _, a := range analyses {
		if a == nil || a.When != AnalysisWhenEachBatch {
			continue
		}
		last := s.LatestEachBatchRun(a.Name)
		if last != nil && !last.Cleared() {
			return a, last, true
		}
		if s.LiveHealthyAllocs > s.BatchCovered(last) {
			return a, nil, true
		}
	}
	return nil, nil, false
}

// LatestEachBatchRun returns the group's latest each_batch run of the
// named analysis, or nil.
func (s *DeploymentState) LatestEachBatchRun(name string) *AnalysisRun {
	for i := len(s.Analyses) - 1; i >= 0; i-- {
		if r := s.Analyses[i]; r != nil && r.Name == name && r.When == AnalysisWhenEachBatch {
			return r
		}
	}
	return nil
}

// Taken is the number of the run's measurements that were not errors:
// those count toward the analysis' count.
func (r *AnalysisRun) Taken() int { return r.Successes + r.Failures + r.Inconclusives }

// LastAt is the time of the run's last measurement, zero when none.
func (r *AnalysisRun) LastAt() time.Time {
	if r == nil || len(r.Measurements) == 0 {
		return time.Time{}
	}
	return r.Measurements[len(r.Measurements)-1].At
}

// NextMeasurement is when a running run takes its next measurement: its
// start plus initial_delay for the first, then the last one's time plus
// interval (so that a new leader goes on at the old one's pace).
func (r *AnalysisRun) NextMeasurement(a *Analysis) time.Time {
	if len(r.Measurements) == 0 {
		return r.StartedAt.Add(a.InitialDelay)
	}
	interval := a.Interval
	if interval <= 0 {
		interval = DefaultAnalysisInterval
	}
	return r.LastAt().Add(interval)
}

// ApplyMeasurement returns run with the measurement m added (a copy; run
// is not changed): its counters, the last AnalysisMeasurementsKept
// measurements, and its phase by a's limits (E.2): failed once failures
// exceed failure_limit; else inconclusive once inconclusive measurements
// exceed inconclusive_limit or consecutive errors exceed error_limit;
// else successful once count measurements that were not errors are taken
// (never for a background run, which measures until its deployment
// ends). A run that is not running is returned unchanged.
func ApplyMeasurement(run *AnalysisRun, a *Analysis, m *AnalysisMeasurement) *AnalysisRun {
	c := run.Copy()
	if c == nil || m == nil || c.Phase != AnalysisPhaseRunning {
		return c
	}
	switch m.Outcome {
	case AnalysisOutcomeSuccess:
		c.Successes++
		c.Errors = 0
	case AnalysisOutcomeFailure:
		c.Failures++
		c.Errors = 0
	case AnalysisOutcomeInconclusive:
		c.Inconclusives++
		c.Errors = 0
	default:
		c.Errors++
	}
	c.Measurements = append(c.Measurements, m.Copy())
	if n := len(c.Measurements) - AnalysisMeasurementsKept; n > 0 {
		c.Measurements = append([]*AnalysisMeasurement(nil), c.Measurements[n:]...)
	}
	count := a.Count
	if count < 1 {
		count = DefaultAnalysisCount
	}
	switch {
	case c.Failures > a.FailureLimit:
		c.Phase = AnalysisPhaseFailed
	case c.Inconclusives > a.InconclusiveLimit || c.Errors > a.ErrorLimit:
		c.Phase = AnalysisPhaseInconclusive
	case c.When != AnalysisWhenBackground && c.Taken() >= count:
		c.Phase = AnalysisPhaseSuccessful
	}
	return c
}

// AnalysisFailedDescription is the description of a deployment whose run
// of analysis a failed: `analysis "errors" failed: 2 of 3 measurements
// failed: result 0.07, 0.09; failure: result >= 0.05`.
func AnalysisFailedDescription(a *Analysis, r *AnalysisRun) string {
	var vals []string
	for _, m := range r.Measurements {
		if m != nil && m.Outcome == AnalysisOutcomeFailure {
			vals = append(vals, formatResult(m))
		}
	}
	cond := "failure: " + a.Failure
	if a.Failure == "" {
		cond = "success: " + a.Success
	}
	return fmt.Sprintf("analysis %q failed: %d of %d measurements failed: result %s; %s",
		r.Name, r.Failures, r.Taken(), strings.Join(vals, ", "), cond)
}

// AnalysisInconclusiveDescription is the description of a deployment
// paused on an inconclusive run of analysis a: the last error, or the
// last value against the conditions.
func AnalysisInconclusiveDescription(a *Analysis, r *AnalysisRun) string {
	var last *AnalysisMeasurement
	if n := len(r.Measurements); n > 0 {
		last = r.Measurements[n-1]
	}
	switch {
	case last == nil:
		return fmt.Sprintf("analysis %q inconclusive", r.Name)
	case last.Outcome == AnalysisOutcomeError:
		return fmt.Sprintf("analysis %q inconclusive: %d consecutive errors, last: %s", r.Name, r.Errors, last.Error)
	}
	var conds []string
	if a.Success != "" {
		conds = append(conds, "success: "+a.Success)
	}
	if a.Failure != "" {
		conds = append(conds, "failure: "+a.Failure)
	}
	return fmt.Sprintf("analysis %q inconclusive: %d of %d measurements inconclusive, last result %s; %s",
		r.Name, r.Inconclusives, r.Taken(), formatResult(last), strings.Join(conds, "; "))
}

// IsAnalysisDescription reports whether desc is the description of a
// deployment failed or paused by an analysis run.
func IsAnalysisDescription(desc string) bool { return strings.HasPrefix(desc, "analysis \"") }

// AnalysisRunningReason is a group's wait reason while an each_batch run
// holds its next batch: `analysis "errors" running after batch 2: 1 of 3
// measurements`.
func AnalysisRunningReason(a *Analysis, r *AnalysisRun) string {
	count := a.Count
	if count < 1 {
		count = DefaultAnalysisCount
	}
	where := fmt.Sprintf("after batch %d", r.Batch)
	if r.Zone != "" {
		where += " in zone " + r.Zone
	}
	return fmt.Sprintf("analysis %q %s %s: %d of %d measurements", r.Name, r.Phase, where, r.Taken(), count)
}

func formatResult(m *AnalysisMeasurement) string {
	if m.Result == nil {
		return "none"
	}
	return strconv.FormatFloat(*m.Result, 'g', -1, 64)
}

// AnalysisRunUpdate is one change of a group's runs: a run started (Index
// equal to the number of runs the group has, PrevPhase empty) or a run
// changed (a measurement, a phase). The store applies it only while the
// run at Index still has PrevPhase and its last measurement at PrevAt, so
// that an update the leader built from an older read, or one a former
// leader wrote meanwhile, is dropped rather than applied twice.
type AnalysisRunUpdate struct {
	Group     string
	Index     int
	Run       *AnalysisRun
	PrevPhase string    `json:",omitempty"`
	PrevAt    time.Time `json:",omitzero"`
}

// Applies reports whether u applies to the group's runs as stored.
func (u *AnalysisRunUpdate) Applies(runs []*AnalysisRun) bool {
	if u == nil || u.Run == nil || u.Index < 0 {
		return false
	}
	if u.Index == len(runs) {
		return u.PrevPhase == ""
	}
	if u.Index > len(runs) {
		return false
	}
	cur := runs[u.Index]
	return cur != nil && cur.Name == u.Run.Name && cur.Phase == u.PrevPhase && cur.LastAt().Equal(u.PrevAt)
}

// DeploymentAnalysisRequest writes changes of an active deployment's
// analysis runs: runs started, a measurement taken, phases set by an
// operator's verb. UpdatedAt is the leader's stamp.
type DeploymentAnalysisRequest struct {
	DeploymentID string
	Updates      []*AnalysisRunUpdate
	// WaitReasons sets the named groups' WaitReason: an analysis run that
	// holds the group's next batch, or "" once it no longer does.
	WaitReasons map[string]string `json:",omitempty"`
	// Eval, when set, is stored with the changes, if any applied: a
	// measurement that clears an each_batch run asks for the scheduling
	// pass that starts the next batch.
	Eval      *Evaluation `json:",omitempty"`
	UpdatedAt int64
}

// ApplyAnalysisRequest applies req to d, a copy its caller owns, and
// reports whether a run or a wait reason changed: each update that still
// applies to its group's runs (AnalysisRunUpdate.Applies) sets or appends
// its run, the others are dropped; WaitReasons set the named groups'
// (unknown groups are ignored).
func ApplyAnalysisRequest(d *Deployment, req *DeploymentAnalysisRequest) bool {
	changed := false
	for _, u := range req.Updates {
		if u == nil {
			continue
		}
		g := d.TaskGroups[u.Group]
		if g == nil || !u.Applies(g.Analyses) {
			continue
		}
		run := u.Run.Copy()
		if u.Index == len(g.Analyses) {
			g.Analyses = append(g.Analyses, run)
		} else {
			g.Analyses[u.Index] = run
		}
		changed = true
	}
	for name, reason := range req.WaitReasons {
		if g := d.TaskGroups[name]; g != nil && g.WaitReason != reason {
			g.WaitReason = reason
			changed = true
		}
	}
	return changed
}
