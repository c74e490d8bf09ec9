package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// BenchmarkBridgePlacementToRunning measures, on one dev agent, the time
// from a one-task job's registration until its allocation runs, for an
// exec task on the host's network and for the same task in a bridge
// group (the allocation's namespace made and wired by the CNI plugins,
// one port mapped, before the task starts). Each job is purged, untimed,
// before the next; its namespace goes with it.
//
//	go test ./e2e -run '^$' -bench BridgePlacementToRunning -benchtime 10x
func BenchmarkBridgePlacementToRunning(b *testing.B) {
	requireBridge(b)
	ids := cleanupBridge(b)
	p := startDevAgent(b, "-log-level", "warn")
	c := p.client()
	for _, mode := range []string{"host", "bridge"} {
		b.Run(mode, func(b *testing.B) {
			i := 0
			for b.Loop() {
				id := fmt.Sprintf("bridge-bench-%s-%d", mode, i)
				i++
				job := apiJobMap(id, structs.JobTypeService, 1, "exec", map[string]any{"command": "/bin/busybox", "args": []string{"sleep", "600"}}, 20, 32)
				tg := job["TaskGroups"].([]any)[0].(map[string]any)
				tg["Networks"] = []any{map[string]any{"Mode": mode, "DynamicPorts": []any{map[string]any{"Label": "http", "To": 8080}}}}
				start := time.Now()
				if _, err := c.Jobs().Register(ctx(b), job); err != nil {
					b.Fatal(err)
				}
				waitRunning(b, c, id, 1)
				elapsed := time.Since(start)
				b.StopTimer()
				b.Logf("%s running in %s", mode, elapsed)
				if allocs, err := jobAllocs(b, c, id); err == nil {
					for _, a := range allocs {
						*ids = append(*ids, a.ID)
					}
				}
				stopJob(b, c, id)
				b.StartTimer()
			}
		})
	}
}
