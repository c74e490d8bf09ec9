package deployment

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/structs"
)

// MeasureRequest is one measurement the leader takes for a run: the
// analysis and the runtime references its query may name (E.1).
type MeasureRequest struct {
	Analysis      *structs.Analysis
	JobName       string
	JobVersion    uint64
	StableVersion uint64
	Group         string
	DeploymentID  string
	Zone          string
}

// MeasureFunc takes one measurement at now (the leader's stamp). It never
// fails: a provider that cannot answer gives a measurement with Outcome
// "error". ctx bounds the query.
type MeasureFunc func(ctx context.Context, req MeasureRequest, now time.Time) *structs.AnalysisMeasurement

// measureTimeout bounds one measurement and its write: the query's own
// timeout and some time for the write.
const measureTimeout = structs.AnalysisQueryTimeout + 5*time.Second

// runKey names one run of a deployment.
type runKey struct {
	deployment, group string
	index             int
}

// startMeasurements takes the decision's due measurements, each in its own
// goroutine so that a slow provider holds no other deployment's pass; a
// measurement already being taken, or already written (a pass that read
// the run before the write), is not taken again: Watcher.measuring holds,
// per run, the time of the last measurement the latest one followed. Each
// writes its run when done (RecordAnalysisMeasurement), which wakes the
// watcher.
func (w *Watcher) startMeasurements(ctx context.Context, obs Observation, due []MeasureDue) {
	if len(due) == 0 || w.measure == nil {
		return
	}
	d := obs.Deployment
	for _, m := range due {
		k := runKey{d.ID, m.Group, m.Index}
		after := m.Run.LastAt()
		w.mu.Lock()
		if prev, ok := w.measuring[k]; ok && !after.After(prev) {
			w.mu.Unlock()
			continue
		}
		w.measuring[k] = after
		w.mu.Unlock()
		req := MeasureRequest{Analysis: m.Analysis, JobName: d.JobID, JobVersion: d.JobVersion,
			Group: m.Group, DeploymentID: d.ID, Zone: m.Run.Zone}
		if obs.StableJob != nil {
			req.StableVersion = obs.StableJob.Version
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			eval := func(at time.Time) *structs.Evaluation { return w.newEval(obs, at) }
			if err := w.measureOne(ctx, k, after, req, m, eval); err != nil && ctx.Err() == nil {
				// Not written: the next pass measures again.
				w.mu.Lock()
				if w.measuring[k].Equal(after) {
					delete(w.measuring, k)
				}
				w.mu.Unlock()
				w.logger.Warn("analysis measurement", "deployment_id", k.deployment, "group", k.group, "analysis", m.Run.Name, "error", err)
			}
		}()
	}
}

// measureOne takes one measurement and writes the run with it.
// eval makes the evaluation a cleared run asks for, at the measurement's
// time.
func (w *Watcher) measureOne(ctx context.Context, k runKey, after time.Time, req MeasureRequest, m MeasureDue, eval func(time.Time) *structs.Evaluation) error {
	mctx, cancel := context.WithTimeout(ctx, measureTimeout)
	defer cancel()
	at := w.clock.Now()
	if !at.After(after) {
		// A new leader whose clock is behind the old one's: the
		// measurements stay in order.
		at = after.Add(time.Nanosecond)
	}
	meas := w.measure(mctx, req, at)
	if meas == nil {
		meas = &structs.AnalysisMeasurement{Outcome: structs.AnalysisOutcomeError, Error: "no measurement"}
	}
	meas.At = at
	run := structs.ApplyMeasurement(m.Run, m.Analysis, meas)
	upd := &structs.AnalysisRunUpdate{Group: m.Group, Index: m.Index, Run: run,
		PrevPhase: m.Run.Phase, PrevAt: after}
	wreq := &structs.DeploymentAnalysisRequest{DeploymentID: k.deployment,
		Updates: []*structs.AnalysisRunUpdate{upd}, UpdatedAt: at.UnixNano()}
	switch {
	case run.When != structs.AnalysisWhenEachBatch:
	case run.Phase == structs.AnalysisPhaseRunning:
		wreq.WaitReasons = map[string]string{m.Group: structs.AnalysisRunningReason(m.Analysis, run)}
	case run.Cleared():
		// The batch is cleared: the scheduling pass that starts the
		// next one, in the same entry (the group's health did not
		// change, so nothing else would ask for it), and the run no
		// longer holds the group.
		wreq.Eval = eval(at)
		wreq.WaitReasons = map[string]string{m.Group: ""}
	}
	if err := w.writer.RecordAnalysisMeasurement(mctx, wreq); err != nil {
		return fmt.Errorf("writing measurement: %w", err)
	}
	return nil
}

// forgetMeasured drops the measurement records of deployments no longer
// active.
func (w *Watcher) forgetMeasured(active map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.measuring {
		if !active[k.deployment] {
			delete(w.measuring, k)
		}
	}
}
