package analysis

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/promtest"
	"github.com/droverhq/drover/structs"
)

// BenchmarkEvaluate: one measurement's conditions over ten samples.
func BenchmarkEvaluate(b *testing.B) {
	values := []float64{0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008, 0.009, 0.01}
	for i := 0; i < b.N; i++ {
		if _, err := Evaluate("max(results...) < 0.05", "anytrue([for r in results : r >= 0.1])", values); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMeasure: one whole measurement (query, substitution,
// conditions) against a real Prometheus on 127.0.0.1.
func BenchmarkMeasure(b *testing.B) {
	exp := promtest.NewExporter(b)
	exp.Set("errors_ratio", map[string]string{"job": "web", "version": "2"}, 0.002)
	srv := promtest.Start(b, exp.Target())
	srv.WaitFor(`errors_ratio`, 30*time.Second)
	a := &structs.Analysis{Query: `errors_ratio{job="${job.name}",version="${job.version}"}`, Success: "result < 0.01"}
	refs := Refs{JobName: "web", JobVersion: 2}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if m := Measure(context.Background(), a, srv.Address(), refs, time.Now()); m.Outcome != structs.AnalysisOutcomeSuccess {
			b.Fatalf("%+v", m)
		}
	}
}
