package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/analysis"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// fakeMeasurer answers every measurement with outcome and a recorded
// value, and records what it was asked.
type fakeMeasurer struct {
	mu      sync.Mutex
	outcome string
	addrs   []string
	refs    []analysis.Refs
	at      []time.Time
}

func (m *fakeMeasurer) measure(_ context.Context, a *structs.Analysis, addr string, refs analysis.Refs, now time.Time) *structs.AnalysisMeasurement {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addrs = append(m.addrs, addr)
	m.refs = append(m.refs, refs)
	m.at = append(m.at, now)
	v := 0.001
	if m.outcome == structs.AnalysisOutcomeError {
		return &structs.AnalysisMeasurement{At: now, Outcome: m.outcome, Error: "connection refused"}
	}
	return &structs.AnalysisMeasurement{At: now, Outcome: m.outcome, Result: &v, Results: []float64{v}}
}

func (m *fakeMeasurer) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.refs)
}

func eachBatch(count int, interval time.Duration) *structs.Analysis {
	return &structs.Analysis{Name: "errors", Provider: structs.AnalysisProviderPrometheus, Query: "q",
		Success: "result < 0.01", Failure: "result >= 0.05", When: structs.AnalysisWhenEachBatch,
		Count: count, Interval: interval, ErrorLimit: structs.DefaultAnalysisErrorLimit}
}

func runOf(s *state.Snapshot, version uint64, i int) *structs.AnalysisRun {
	d := deploymentOf(s, "web", version)
	if d == nil || len(d.TaskGroups["web"].Analyses) <= i {
		return nil
	}
	return d.TaskGroups["web"].Analyses[i]
}

// The leader's side effect: the run of the first batch starts once it is
// healthy, each measurement is taken with the refs and the servers'
// address and written through Raft as its own entry, and the next batch
// is placed only once the run succeeded.
func TestLeaderMeasuresAndGatesTheNextBatch(t *testing.T) {
	m := &fakeMeasurer{outcome: structs.AnalysisOutcomeSuccess}
	h := newHarness(t, func(c *Config) {
		c.AnalysisMeasure = m.measure
		c.PrometheusAddress = "http://127.0.0.1:9090"
	})
	h.start()
	for _, n := range []string{"a", "b"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 4000, 4096))
		must(t, err)
	}
	v0 := testJob("web", 3, 100)
	_, err := h.leader.RegisterJob(h.ctx, v0)
	must(t, err)
	h.waitFor("three v0 allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 3 })
	h.markHealthy(allocsOf(h.store().Snapshot(), "web"))
	h.waitFor("v0 successful", func(s *state.Snapshot) bool {
		d := deploymentOf(s, "web", 0)
		return d != nil && d.Status == structs.DeploymentStatusSuccessful
	})
	v1 := v0.Copy()
	v1.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "2h"}
	v1.TaskGroups[0].Update.Analyses = []*structs.Analysis{eachBatch(2, 10*time.Second)}
	_, err = h.leader.RegisterJob(h.ctx, v1)
	must(t, err)
	h.waitFor("the first v1 alloc", func(s *state.Snapshot) bool { return len(byVersion(allocsOf(s, "web"), 1)) == 1 })
	h.idle()
	h.markHealthy(byVersion(allocsOf(h.store().Snapshot(), "web"), 1))

	h.waitFor("the run's first measurement", func(s *state.Snapshot) bool {
		r := runOf(s, 1, 0)
		return r != nil && r.Successes == 1
	})
	h.idle()
	if n := len(byVersion(allocsOf(h.store().Snapshot(), "web"), 1)); n != 1 {
		t.Fatalf("%d v1 allocs while the run of batch 1 runs, want 1\n%s", n, h.dump())
	}
	if got := h.raft.entries(fsm.AnalysisMeasurementRequestType); got != 1 {
		t.Fatalf("%d measurement entries, want 1", got)
	}
	if r := runOf(h.store().Snapshot(), 1, 0); r.Batch != 1 || r.Phase != structs.AnalysisPhaseRunning {
		t.Fatalf("run %+v", r)
	}
	if d := deploymentOf(h.store().Snapshot(), "web", 1); d.TaskGroups["web"].WaitReason != `analysis "errors" running after batch 1: 1 of 2 measurements` {
		t.Fatalf("wait reason %q", d.TaskGroups["web"].WaitReason)
	}

	waitTimer(t, h, 10*time.Second)
	h.clock.Advance(10 * time.Second)
	h.waitFor("the run successful and batch 2 placed", func(s *state.Snapshot) bool {
		r := runOf(s, 1, 0)
		return r != nil && r.Phase == structs.AnalysisPhaseSuccessful && len(byVersion(allocsOf(s, "web"), 1)) == 2
	})
	if got := h.raft.entries(fsm.AnalysisMeasurementRequestType); got != 2 {
		t.Fatalf("%d measurement entries, want 2", got)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.addrs[0] != "http://127.0.0.1:9090" {
		t.Errorf("default address %q", m.addrs[0])
	}
	want := analysis.Refs{JobName: "web", JobVersion: 1, StableVersion: 0, Group: "web",
		DeploymentID: deploymentOf(h.store().Snapshot(), "web", 1).ID}
	if m.refs[0] != want {
		t.Errorf("refs %+v, want %+v", m.refs[0], want)
	}
	if gap := m.at[1].Sub(m.at[0]); gap != 10*time.Second {
		t.Errorf("measurements %v apart, want the interval", gap)
	}
}

// Errors past error_limit pause the deployment (never fail or revert it,
// even with auto_revert); a resume accepts the run and the rollout goes
// on.
func TestLeaderPausesOnInconclusiveAndResumeAccepts(t *testing.T) {
	m := &fakeMeasurer{outcome: structs.AnalysisOutcomeError}
	h := newHarness(t, func(c *Config) { c.AnalysisMeasure = m.measure })
	h.start()
	for _, n := range []string{"a", "b"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 4000, 4096))
		must(t, err)
	}
	v0 := testJob("web", 2, 100)
	_, err := h.leader.RegisterJob(h.ctx, v0)
	must(t, err)
	h.waitFor("two v0 allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 2 })
	h.markHealthy(allocsOf(h.store().Snapshot(), "web"))
	h.waitFor("v0 successful", func(s *state.Snapshot) bool {
		d := deploymentOf(s, "web", 0)
		return d != nil && d.Status == structs.DeploymentStatusSuccessful
	})
	v1 := v0.Copy()
	v1.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "2h"}
	v1.TaskGroups[0].Update.AutoRevert = true
	a := eachBatch(1, time.Second)
	a.ErrorLimit = 1
	v1.TaskGroups[0].Update.Analyses = []*structs.Analysis{a}
	_, err = h.leader.RegisterJob(h.ctx, v1)
	must(t, err)
	h.waitFor("the first v1 alloc", func(s *state.Snapshot) bool { return len(byVersion(allocsOf(s, "web"), 1)) == 1 })
	h.idle()
	h.markHealthy(byVersion(allocsOf(h.store().Snapshot(), "web"), 1))
	h.waitFor("one error", func(s *state.Snapshot) bool {
		r := runOf(s, 1, 0)
		return r != nil && r.Errors == 1
	})
	waitTimer(t, h, time.Second)
	h.clock.Advance(time.Second)
	h.waitFor("paused on the inconclusive run", func(s *state.Snapshot) bool {
		d := deploymentOf(s, "web", 1)
		return d.Status == structs.DeploymentStatusPaused &&
			d.StatusDescription == `analysis "errors" inconclusive: 2 consecutive errors, last: connection refused`
	})
	d := deploymentOf(h.store().Snapshot(), "web", 1)
	_, err = h.leader.PauseDeployment(h.ctx, d.ID, false)
	must(t, err)
	h.waitFor("accepted, and batch 2 placed", func(s *state.Snapshot) bool {
		r := runOf(s, 1, 0)
		d := deploymentOf(s, "web", 1)
		return r.Phase == structs.AnalysisPhaseAccepted && d.Status == structs.DeploymentStatusRunning &&
			len(byVersion(allocsOf(s, "web"), 1)) == 2
	})
}

// waitTimer waits until the watcher armed its timer for the next
// measurement, d from now, so that advancing the fake clock fires it.
func waitTimer(t *testing.T, h *harness, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		for _, p := range h.clock.pending() {
			if p == d {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no timer %v ahead; pending %v", d, h.clock.pending())
}

// A promotion by hand ends the running canary run as "skipped" and
// promotes; auto_promote alone would have waited for the run.
func TestLeaderPromoteByHandSkipsCanaryRun(t *testing.T) {
	m := &fakeMeasurer{outcome: structs.AnalysisOutcomeSuccess}
	h := newHarness(t, func(c *Config) { c.AnalysisMeasure = m.measure })
	h.start()
	for _, n := range []string{"a", "b"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 4000, 4096))
		must(t, err)
	}
	v0 := testJob("web", 2, 100)
	_, err := h.leader.RegisterJob(h.ctx, v0)
	must(t, err)
	h.waitFor("two v0 allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 2 })
	h.markHealthy(allocsOf(h.store().Snapshot(), "web"))
	h.waitFor("v0 successful", func(s *state.Snapshot) bool {
		d := deploymentOf(s, "web", 0)
		return d != nil && d.Status == structs.DeploymentStatusSuccessful
	})
	v1 := v0.Copy()
	v1.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "2h"}
	u := v1.TaskGroups[0].Update
	u.Canary, u.AutoPromote = 1, true
	a := eachBatch(3, time.Minute)
	a.When = structs.AnalysisWhenCanary
	u.Analyses = []*structs.Analysis{a}
	_, err = h.leader.RegisterJob(h.ctx, v1)
	must(t, err)
	h.waitFor("the canary", func(s *state.Snapshot) bool { return len(byVersion(allocsOf(s, "web"), 1)) == 1 })
	h.idle()
	h.markHealthy(byVersion(allocsOf(h.store().Snapshot(), "web"), 1))
	h.waitFor("the canary run's first measurement", func(s *state.Snapshot) bool {
		r := runOf(s, 1, 0)
		return r != nil && r.Successes == 1
	})
	h.idle()
	d := deploymentOf(h.store().Snapshot(), "web", 1)
	if d.TaskGroups["web"].Promoted {
		t.Fatal("auto_promote did not wait for the canary run")
	}
	_, err = h.leader.PromoteDeployment(h.ctx, d.ID, nil, true)
	must(t, err)
	h.waitFor("skipped and promoted", func(s *state.Snapshot) bool {
		r := runOf(s, 1, 0)
		d := deploymentOf(s, "web", 1)
		return r.Phase == structs.AnalysisPhaseSkipped && d.TaskGroups["web"].Promoted
	})
}
