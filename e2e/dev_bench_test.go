package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// BenchmarkDevAgent measures a dev agent process (server and client in
// one) with the mock driver at scale and raw_exec at small scale:
//
//   - a batch job of 2,000 mock allocs (cpu 1, memory 10, run_for 10m):
//     time from registration until all are placed and until all are
//     reported running, and the agent's RSS with them;
//   - five cycles of run, stop and purge of that job: RSS after each;
//   - a fresh service job of 10 raw_exec tasks (before the batches): time
//     until all run;
//   - the time from SIGINT to exit with 2,000 allocs running.
//
// Figures only (b.ReportMetric); nothing is asserted. Run it with
// `make bench` or `go test ./e2e -run '^$' -bench DevAgent -benchtime 1x`.
func BenchmarkDevAgent(b *testing.B) {
	cfg := filepath.Join(b.TempDir(), "big-node.hcl")
	// 2,000 allocs of 10 MB do not fit a small machine's fingerprint.
	if err := os.WriteFile(cfg, []byte("client {\n  cpu_total_compute = 100000\n  memory_total_mb = 100000\n}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		p := startDevAgent(b, "-config", cfg, "-log-level", "warn")
		c := p.client()

		start := time.Now()
		svcJob := apiJobMap("svc", structs.JobTypeService, 10, "raw_exec",
			map[string]any{"command": "/bin/sleep", "args": []string{"600"}}, 10, 16)
		if _, err := c.Jobs().Register(ctx(b), svcJob); err != nil {
			b.Fatal(err)
		}
		waitRunning(b, c, "svc", 10)
		svc := time.Since(start)
		b.ReportMetric(svc.Seconds(), "s-running-raw_exec-10")
		b.Logf("10 raw_exec tasks running in %s", svc)
		stopJob(b, c, "svc")

		const n = 2000
		placed, running := timeBatch(b, c, "bench-0", n)
		b.ReportMetric(placed.Seconds(), "s-placed-2000")
		b.ReportMetric(running.Seconds(), "s-running-2000")
		rss := rssMB(b, p)
		b.ReportMetric(rss, "MB-rss-2000")
		b.Logf("2,000 mock allocs: placed in %s, running in %s; RSS %.0f MB", placed, running, rss)
		stopJob(b, c, "bench-0")

		var cycles []string
		for k := 1; k <= 5; k++ {
			id := fmt.Sprintf("bench-%d", k)
			timeBatch(b, c, id, n)
			stopJob(b, c, id)
			r := rssMB(b, p)
			cycles = append(cycles, fmt.Sprintf("%.0f", r))
			if k == 5 {
				b.ReportMetric(r, "MB-rss-after-5-cycles")
			}
		}
		b.Logf("RSS after each run/stop/purge cycle (MB): %s", strings.Join(cycles, ", "))

		timeBatch(b, c, "bench-exit", n)
		start = time.Now()
		if code := p.interrupt(); code != 0 {
			b.Fatalf("agent exited %d", code)
		}
		exit := time.Since(start)
		b.ReportMetric(exit.Seconds(), "s-exit-2000")
		b.Logf("SIGINT to exit with 2,000 allocs running: %s", exit)
	}
}

// timeBatch registers a batch job of n mock allocs and returns how long
// until all were placed and until all were reported running.
func timeBatch(b *testing.B, c *apiclient.Client, id string, n int) (placed, running time.Duration) {
	b.Helper()
	job := apiJobMap(id, structs.JobTypeBatch, n, "mock", map[string]any{"run_for": "10m"}, 1, 10)
	start := time.Now()
	if _, err := c.Jobs().Register(ctx(b), job); err != nil {
		b.Fatal(err)
	}
	deadline := start.Add(5 * time.Minute)
	for placed == 0 || running == 0 {
		if time.Now().After(deadline) {
			b.Fatalf("job %s: not all %d allocs running after 5 minutes", id, n)
		}
		s, _, err := c.Jobs().Summary(ctx(b), id, nil)
		if err == nil {
			g := s.Summary["g"]
			if placed == 0 && g.Queued == 0 && g.Starting+g.Running+g.Complete+g.Failed >= n {
				placed = time.Since(start)
			}
			if g.Running >= n {
				running = time.Since(start)
				if placed == 0 {
					placed = running
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return placed, running
}

// waitRunning polls until n allocs of the job run.
func waitRunning(b *testing.B, c *apiclient.Client, id string, n int) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		allocs, err := jobAllocs(b, c, id)
		if err == nil && len(runningAllocs(allocs, 0)) >= n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("job %s: not %d running after 2 minutes", id, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stopJob purges the job and waits until its allocs are gone from the
// node (stopped by the client, then reaped by the leader).
func stopJob(b *testing.B, c *apiclient.Client, id string) {
	b.Helper()
	if _, err := c.Jobs().Deregister(ctx(b), id, true); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		s, _, err := c.Jobs().Summary(ctx(b), id, nil)
		if apiclient.IsNotFound(err) || (err == nil && s.Summary["g"].Running == 0) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("job %s still running after 2 minutes", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
	nodes, _, err := c.Nodes().List(ctx(b), nil)
	if err != nil || len(nodes) == 0 {
		b.Fatalf("nodes: %v", err)
	}
	for time.Now().Before(deadline) {
		allocs, _, err := c.Nodes().Allocations(ctx(b), nodes[0].ID, nil)
		left := 0
		for _, a := range allocs {
			if a.JobID == id {
				left++
			}
		}
		if err == nil && left == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatalf("job %s: allocs still on the node after 2 minutes", id)
}

// apiJobMap is a one-group, one-task job in Nomad's API JSON.
func apiJobMap(id, typ string, n int, driver string, config map[string]any, cpu, mem int) map[string]any {
	return map[string]any{
		"ID": id, "Name": id, "Type": typ, "Datacenters": []string{"dc1"},
		"TaskGroups": []any{map[string]any{
			"Name": "g", "Count": n,
			// Nomad's default of 300 MB would fill the node's disk.
			"EphemeralDisk": map[string]any{"SizeMB": 10},
			"Tasks": []any{map[string]any{
				"Name": "t", "Driver": driver, "Config": config,
				"Resources": map[string]any{"CPU": cpu, "MemoryMB": mem},
			}},
		}},
	}
}

// rssMB reads the agent process's resident set size.
func rssMB(b *testing.B, p *agentProc) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
