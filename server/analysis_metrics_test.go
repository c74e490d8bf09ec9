package server

import (
	"context"
	"testing"
	"time"

	metrics "github.com/hashicorp/go-metrics/compat"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/structs"
)

// Every measurement the leader takes is counted by outcome
// (nomad.drover.analysis.measurements) and timed.
func TestAnalysisMeasurementsCountedByOutcome(t *testing.T) {
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	cfg := metrics.DefaultConfig("nomad")
	cfg.EnableHostname, cfg.EnableRuntimeMetrics = false, false
	if _, err := metrics.NewGlobal(cfg, sink); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = metrics.NewGlobal(cfg, &metrics.BlackholeSink{}) })

	m := &fakeMeasurer{outcome: structs.AnalysisOutcomeSuccess}
	h := newHarness(t, func(c *Config) { c.AnalysisMeasure = m.measure })
	req := deployment.MeasureRequest{Analysis: eachBatch(1, time.Second), JobName: "web", Group: "web"}
	for _, o := range []string{structs.AnalysisOutcomeSuccess, structs.AnalysisOutcomeSuccess, structs.AnalysisOutcomeError} {
		m.outcome = o
		if got := h.leader.measureAnalysis(context.Background(), req, time.Now()); got.Outcome != o {
			t.Fatalf("measurement %+v, want outcome %s", got, o)
		}
	}
	counts := map[string]int{}
	timed := 0
	for _, iv := range sink.Data() {
		iv.RLock()
		for name, c := range iv.Counters {
			counts[name] += int(c.Sum)
		}
		for name, s := range iv.Samples {
			if name == "nomad.drover.analysis.measure_time" {
				timed += s.Count
			}
		}
		iv.RUnlock()
	}
	if counts["nomad.drover.analysis.measurements;outcome=success"] != 2 || counts["nomad.drover.analysis.measurements;outcome=error"] != 1 {
		t.Fatalf("counters %v", counts)
	}
	if timed != 3 {
		t.Fatalf("%d measurements timed, want 3", timed)
	}
}
