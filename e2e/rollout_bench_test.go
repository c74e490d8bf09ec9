package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// BenchmarkRolloutSpeed measures a rollout on a real dev agent from the
// register of the new version to the deployment's success, against its
// lower bound ceil(count/max_parallel) × min_healthy_time, and reports
// the ratio. Figures are reported, not asserted.
func BenchmarkRolloutSpeed(b *testing.B) {
	cases := []struct {
		name   string
		update string
		// bound is the lower bound of one rollout.
		bound time.Duration
	}{
		{"rolling/count=10,mp=2", "      max_parallel = 2\n", 5 * time.Second},
		// Canaries (one batch of 2), then the 8 others at 2 a time.
		{"canary=2,auto_promote", "      max_parallel = 2\n      canary = 2\n      auto_promote = true\n", 5 * time.Second},
		// Create-before-destroy: each batch of 2 starts beside the allocs
		// it replaces, which stop once it is healthy; same bound.
		{"surge/count=10,mp=2,surge=2", "      max_parallel = 2\n      max_surge = 2\n", 5 * time.Second},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			p := startDevAgent(b)
			c := p.client()
			s := rolloutSpec{ID: "speed", Count: 10, Version: "0", Update: bc.update + `      health_check      = "task_states"
      min_healthy_time  = "1s"
      healthy_deadline  = "30s"
      progress_deadline = "2m"`}
			stopJobProcs(b, c, s.ID)
			s.run(b, c)
			waitRollout(b, c, s.ID, 0, structs.DeploymentStatusSuccessful, 60*time.Second)
			var total time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.Version = fmt.Sprint(i + 1)
				start := time.Now()
				s.run(b, c)
				waitRolloutFast(b, p, s.ID, uint64(i+1))
				total += time.Since(start)
			}
			b.StopTimer()
			per := total / time.Duration(b.N)
			b.ReportMetric(per.Seconds(), "s/rollout")
			b.ReportMetric(float64(per)/float64(bc.bound), "x-lower-bound")
		})
	}
}

// waitRolloutFast polls every 10ms (rather than eventually's 100ms) so
// that the measurement adds little.
func waitRolloutFast(b *testing.B, p *agentProc, jobID string, version uint64) {
	b.Helper()
	c := p.client()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		d, err := latestDeployment(b, c, jobID)
		if err == nil && d.JobVersion == version {
			switch d.Status {
			case structs.DeploymentStatusSuccessful:
				return
			case structs.DeploymentStatusFailed, structs.DeploymentStatusCancelled:
				b.Fatalf("deployment v%d %s: %s", version, d.Status, d.StatusDescription)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.Fatalf("deployment v%d not successful within 2m", version)
}
