package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// BenchmarkPlacementToRunning measures, on one dev agent, the time from a
// one-task job's registration (placement is immediate on an idle node)
// until its allocation runs, for a raw_exec task and for an exec task
// (a root of its own, namespaces, a cgroup, the binary re-executed as
// its init). Each job is purged, untimed, before the next.
//
//	go test ./e2e -run '^$' -bench PlacementToRunning -benchtime 10x
func BenchmarkPlacementToRunning(b *testing.B) {
	requireIsolation(b)
	p := startDevAgent(b, "-log-level", "warn")
	c := p.client()
	for _, tc := range []struct {
		driver string
		config map[string]any
	}{
		{"raw_exec", map[string]any{"command": "/bin/sleep", "args": []string{"600"}}},
		{"exec", map[string]any{"command": "/bin/busybox", "args": []string{"sleep", "600"}}},
	} {
		b.Run(tc.driver, func(b *testing.B) {
			i := 0
			for b.Loop() {
				id := fmt.Sprintf("p-%s-%d", tc.driver, i)
				i++
				start := time.Now()
				if _, err := c.Jobs().Register(ctx(b), apiJobMap(id, structs.JobTypeService, 1, tc.driver, tc.config, 20, 32)); err != nil {
					b.Fatal(err)
				}
				waitRunning(b, c, id, 1)
				elapsed := time.Since(start)
				b.StopTimer()
				b.Logf("%s running in %s", tc.driver, elapsed)
				stopJob(b, c, id)
				b.StartTimer()
			}
		})
	}
}
