package e2e

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkRolloutAnalysisSpeed measures a 10-batch rollout gated by an
// each_batch analysis (interval 1s, count 2) on a real dev agent, real
// tasks and a real Prometheus, from the register of the new version to
// the deployment's success, against its bound: the batches'
// min_healthy_time plus each run's initial_delay + (count − 1) × interval
// (10 × (1s + 1s) = 20s). It reports the ratio and where each batch's
// time goes beyond the bound (means over the batches, in ms):
//
//	placed_to_healthy_minus_mht  alloc placed (CreateTime) → healthy (DeploymentStatus.Timestamp) − min_healthy_time
//	healthy_to_run               healthy → the batch's run started (StartedAt)
//	run_to_first                 run started → its first measurement (At)
//	first_to_last_minus_interval first → second measurement − interval
//	last_to_next_placed          the run's last measurement → the next batch's alloc placed
//
// Figures are reported, not asserted.
func BenchmarkRolloutAnalysisSpeed(b *testing.B) {
	const (
		batches  = 10
		mht      = time.Second
		interval = time.Second
		count    = 2
		bound    = batches * (mht + (count-1)*interval)
	)
	e := startProm(b)
	p := analysisAgent(b, e)
	c := p.client()
	s := rolloutSpec{ID: "an-speed", Count: batches, Version: "0",
		Update: "      max_parallel = 1\n" + analysisBlock(`success  = "result < 0.01"`, `failure  = "result >= 0.05"`,
			fmt.Sprintf("interval = %q", interval), fmt.Sprintf("count    = %d", count)) + `      health_check      = "task_states"
      min_healthy_time  = "1s"
      healthy_deadline  = "30s"
      progress_deadline = "2m"`}
	rollV0(b, e, c, s)
	var total time.Duration
	var stages [5]time.Duration
	var gaps int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		v := uint64(i + 1)
		e.set(b, s.ID, v, 0.001)
		s.Version = fmt.Sprint(v)
		b.StartTimer()
		start := time.Now()
		s.run(b, c)
		waitRolloutFast(b, p, s.ID, v)
		total += time.Since(start)
		b.StopTimer()

		d, err := latestDeployment(b, c, s.ID)
		if err != nil {
			b.Fatal(err)
		}
		runs := runsOf(b, d)
		allocs := newAllocs(b, c, s.ID, v)
		if len(runs) != batches || len(allocs) != batches {
			b.Fatalf("%d runs and %d allocs, want %d of each", len(runs), len(allocs), batches)
		}
		for k, r := range runs {
			a := allocs[k]
			if a.DeploymentStatus == nil || len(r.Measurements) != count {
				b.Fatalf("batch %d: alloc %s, run %s", k+1, jsonString(a.DeploymentStatus), jsonString(r))
			}
			placed := time.Unix(0, a.CreateTime)
			first, last := r.Measurements[0].At, r.Measurements[count-1].At
			stages[0] += a.DeploymentStatus.Timestamp.Sub(placed) - mht
			stages[1] += r.StartedAt.Sub(a.DeploymentStatus.Timestamp)
			stages[2] += first.Sub(r.StartedAt)
			stages[3] += last.Sub(first) - (count-1)*interval
			if k+1 < batches {
				stages[4] += time.Unix(0, allocs[k+1].CreateTime).Sub(last)
				gaps++
			}
		}
		b.StartTimer()
	}
	b.StopTimer()
	per := total / time.Duration(b.N)
	b.ReportMetric(per.Seconds(), "s/rollout")
	b.ReportMetric(float64(per)/float64(bound), "x-bound")
	n := time.Duration(b.N * batches)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(stages[0]/n), "ms-placed_to_healthy_minus_mht")
	b.ReportMetric(ms(stages[1]/n), "ms-healthy_to_run")
	b.ReportMetric(ms(stages[2]/n), "ms-run_to_first")
	b.ReportMetric(ms(stages[3]/n), "ms-first_to_last_minus_interval")
	if gaps > 0 {
		b.ReportMetric(ms(stages[4]/time.Duration(gaps)), "ms-last_to_next_placed")
	}
}
