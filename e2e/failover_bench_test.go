package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkFailoverSIGKILL measures, per run on a fresh three-process
// cluster, the time from SIGKILL of the leader to a job write acknowledged
// by the survivors, and reports the median and worst (use -benchtime=Nx).
func BenchmarkFailoverSIGKILL(b *testing.B) {
	var took []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		servers := startCluster(b)
		leader := waitAgreedLeader(b, servers)
		acked := map[string]bool{}
		register(b, leader, "before", acked)
		var survivor *server
		for _, s := range servers {
			if s != leader {
				survivor = s
			}
		}
		b.StartTimer()
		start := time.Now()
		leader.kill()
		for {
			if _, err := survivor.client().Jobs().Register(ctx(b), jobJSON(fmt.Sprint("after-", i))); err == nil {
				break
			}
			if time.Since(start) > 30*time.Second {
				b.Fatal("no write accepted within 30s of the leader's death")
			}
			time.Sleep(5 * time.Millisecond)
		}
		took = append(took, time.Since(start))
		b.StopTimer()
		for _, s := range servers {
			s.kill()
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(took[len(took)-1].Milliseconds()), "max-ms")
}
