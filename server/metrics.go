package server

import (
	"context"
	"errors"
	"time"

	metrics "github.com/hashicorp/go-metrics/compat"

	"github.com/droverhq/drover/analysis"
	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/evalbroker"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
)

// The leader's figures (website/api/metrics.md): the eval broker's queues,
// sampled every Config.MetricsInterval and zeroed when the term ends (a
// follower's broker holds nothing); the broker's wait, the scheduler's,
// the plan applier's times, measured as they happen; rollout batches and
// changes of stage, from the event stream.

// DefaultMetricsInterval is how often the leader samples its gauges.
const DefaultMetricsInterval = time.Second

// schedulerTypes are the types whose gauges and timers have a name of
// their own, as Nomad's (nomad.nomad.broker.service_ready…).
var schedulerTypes = []string{structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem, structs.JobTypeSysBatch}

func knownType(typ string) bool {
	for _, t := range schedulerTypes {
		if t == typ {
			return true
		}
	}
	return false
}

// emitBrokerStats sets the broker's gauges; zero sets them to 0.
func emitBrokerStats(b evalbroker.Stats, blocked int) {
	metrics.SetGauge([]string{"nomad", "broker", "total_ready"}, float32(b.Ready))
	metrics.SetGauge([]string{"nomad", "broker", "total_unacked"}, float32(b.Unacked))
	metrics.SetGauge([]string{"nomad", "broker", "total_pending"}, float32(b.Blocked))
	metrics.SetGauge([]string{"nomad", "broker", "total_waiting"}, float32(b.Delayed))
	for _, typ := range schedulerTypes {
		metrics.SetGauge([]string{"nomad", "broker", typ + "_ready"}, float32(b.ReadyByType[typ]))
	}
	metrics.SetGauge([]string{"nomad", "blocked_evals", "total_blocked"}, float32(blocked))
}

// runBrokerMetrics samples the term's broker until the term ends, then
// zeroes the gauges.
func (l *Leader) runBrokerMetrics(t *term) {
	tick := time.NewTicker(l.cfg.MetricsInterval)
	defer tick.Stop()
	defer emitBrokerStats(evalbroker.Stats{}, 0)
	for {
		emitBrokerStats(t.broker.Stats(), t.blocked.Stats().Blocked)
		select {
		case <-t.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// brokerWait is the broker's OnDequeue: nomad.nomad.broker.wait_time.
func brokerWait(e *structs.Evaluation, waited time.Duration) {
	metrics.AddSampleWithLabels([]string{"nomad", "broker", "wait_time"}, float32(waited.Seconds()*1000),
		[]metrics.Label{{Name: "eval_type", Value: labelOr(e.Type, knownType(e.Type))},
			{Name: "triggered_by", Value: labelOr(e.TriggeredBy, len(e.TriggeredBy) <= 32)}})
}

// labelOr bounds a label: v when ok, "other" otherwise.
func labelOr(v string, ok bool) string {
	if ok && v != "" {
		return v
	}
	return "other"
}

// measureScheduler records one reconcile-and-place pass of a job type.
func measureScheduler(typ string, start time.Time) {
	if knownType(typ) {
		metrics.MeasureSince([]string{"nomad", "worker", "invoke_scheduler", typ}, start)
	}
}

// runRolloutMetrics measures rollout batches (deployment.BatchTracker)
// and changes of stage (deployment.StageTracker)
// from the server's event stream while the term lasts: what the entries
// it applies write, read without ever holding the state machine up. A
// subscription dropped for falling behind starts again with a new batch
// tracker (the batches in flight then are not measured) and tells the
// stage tracker of the gap.
func (l *Leader) runRolloutMetrics(ctx context.Context) {
	buf := l.cfg.Events
	stages := deployment.NewStageTracker()
	for ctx.Err() == nil {
		sub := buf.Subscribe(stream.SubscribeRequest{
			Topics:    map[stream.Topic][]string{stream.TopicAllocation: nil, stream.TopicDeployment: nil},
			Namespace: "*", Index: buf.Stats().LastIndex + 1,
		})
		err := l.trackBatches(ctx, sub, deployment.NewBatchTracker(), stages)
		sub.Close()
		stages.Gap()
		if ctx.Err() == nil && !errors.Is(err, stream.ErrSubscriberBehind) && !errors.Is(err, stream.ErrBufferReset) {
			l.logger.Warn("rollout metrics stopped", "error", err)
			return
		}
	}
}

func (l *Leader) trackBatches(ctx context.Context, sub *stream.Subscription, tr *deployment.BatchTracker, st *deployment.StageTracker) error {
	for {
		b, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		var f deployment.BatchFigures
		var sf deployment.StageFigures
		for _, e := range b.Events {
			switch p := e.Payload.(type) {
			case *structs.Allocation:
				tr.ObserveAlloc(e.Index, p, &f)
				st.ObserveAlloc(e.Index, p, &sf)
			case *structs.Deployment:
				tr.ObserveDeployment(p)
				st.ObserveDeployment(p)
			}
		}
		for _, d := range sf.StageStarts {
			metrics.AddSample([]string{"drover", "rollout", "stage_start_time"}, float32(d.Seconds()*1000))
		}
		for _, d := range sf.BatchStarts {
			metrics.AddSample([]string{"drover", "rollout", "batch_start_time"}, float32(d.Seconds()*1000))
		}
		for _, d := range f.AllocHealthy {
			metrics.AddSample([]string{"drover", "rollout", "alloc_healthy_time"}, float32(d.Seconds()*1000))
		}
		for _, d := range f.BatchesHealthy {
			metrics.AddSample([]string{"drover", "rollout", "batch_duration"}, float32(d.Seconds()*1000))
			metrics.IncrCounter([]string{"drover", "rollout", "batches_healthy"}, 1)
		}
		if f.BatchesFailed > 0 {
			metrics.IncrCounter([]string{"drover", "rollout", "batches_failed"}, float32(f.BatchesFailed))
		}
	}
}

// measureAnalysis takes one analysis measurement for the deployment
// watcher with Config.AnalysisMeasure and the servers' default address,
// and counts it by outcome (nomad.drover.analysis.measurements).
func (l *Leader) measureAnalysis(ctx context.Context, req deployment.MeasureRequest, now time.Time) *structs.AnalysisMeasurement {
	refs := analysis.Refs{JobName: req.JobName, JobVersion: req.JobVersion, StableVersion: req.StableVersion,
		Group: req.Group, DeploymentID: req.DeploymentID, Zone: req.Zone}
	start := time.Now()
	m := l.cfg.AnalysisMeasure(ctx, req.Analysis, l.cfg.PrometheusAddress, refs, now)
	metrics.MeasureSince([]string{"drover", "analysis", "measure_time"}, start)
	outcome := structs.AnalysisOutcomeError
	if m != nil {
		outcome = m.Outcome
	}
	metrics.IncrCounterWithLabels([]string{"drover", "analysis", "measurements"}, 1,
		[]metrics.Label{{Name: "outcome", Value: outcome}})
	return m
}
