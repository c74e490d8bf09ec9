package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// BenchmarkPlacementToRunningJava measures, on one dev agent, the time
// from a one-task job's registration until its allocation runs, for an
// exec task and, beside it, a java task whose jar is an artifact served on
// 127.0.0.1 (fetched, then the JVM started in exec's isolation). Each job
// is purged, untimed, before the next.
//
//	go test ./e2e -run '^$' -bench PlacementToRunningJava -benchtime 10x
func BenchmarkPlacementToRunningJava(b *testing.B) {
	requireIsolation(b)
	requireJava(b)
	base := serveJavaTestdata(b)
	p := startDevAgent(b, "-log-level", "warn")
	c := p.client()
	for _, tc := range []struct {
		driver    string
		config    map[string]any
		artifacts []any
	}{
		{"exec", map[string]any{"command": "/bin/busybox", "args": []string{"sleep", "600"}}, nil},
		{"java", map[string]any{"jar_path": "local/hello.jar", "args": []string{"sleep", "600"}},
			[]any{map[string]any{"GetterSource": base + "/hello.jar"}}},
	} {
		b.Run(tc.driver, func(b *testing.B) {
			i := 0
			for b.Loop() {
				id := fmt.Sprintf("pj-%s-%d", tc.driver, i)
				i++
				job := apiJobMap(id, structs.JobTypeService, 1, tc.driver, tc.config, 50, 256)
				if tc.artifacts != nil {
					task := job["TaskGroups"].([]any)[0].(map[string]any)["Tasks"].([]any)[0].(map[string]any)
					task["Artifacts"] = tc.artifacts
				}
				start := time.Now()
				if _, err := c.Jobs().Register(ctx(b), job); err != nil {
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
