package deployment

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/structs"
)

// recordedMeasurer answers each measurement after delay with the next of
// outcomes (the last one repeats), and records the requests.
type recordedMeasurer struct {
	mu       sync.Mutex
	delay    time.Duration
	outcomes []string
	reqs     []MeasureRequest
	at       []time.Time
}

func (m *recordedMeasurer) measure(ctx context.Context, req MeasureRequest, now time.Time) *structs.AnalysisMeasurement {
	m.mu.Lock()
	i := len(m.reqs)
	m.reqs = append(m.reqs, req)
	m.at = append(m.at, now)
	m.mu.Unlock()
	select {
	case <-time.After(m.delay):
	case <-ctx.Done():
		return &structs.AnalysisMeasurement{At: now, Outcome: structs.AnalysisOutcomeError, Error: ctx.Err().Error()}
	}
	o := m.outcomes[min(i, len(m.outcomes)-1)]
	v := 0.001
	return &structs.AnalysisMeasurement{At: now, Outcome: o, Result: &v, Results: []float64{v}}
}

func (m *recordedMeasurer) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.reqs)
}

func withAnalysis(f *fakeStore, a *structs.Analysis) {
	for _, j := range f.jobs["web"] {
		if j.Version == 1 {
			j.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, Analyses: []*structs.Analysis{a}}
		}
	}
}

// The leader's side: a run starts, each measurement is taken off the pass
// (a query of 3s) and written with its run, the next one at the last one's
// time plus interval; the run's success lets the deployment succeed.
func TestWatcherMeasuresEachBatchRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 1, rpb: 10 * time.Minute})
		withAnalysis(f, &structs.Analysis{Name: "errors", When: structs.AnalysisWhenEachBatch, Count: 2,
			Interval: 10 * time.Second, ErrorLimit: 4})
		m := &recordedMeasurer{delay: 3 * time.Second, outcomes: []string{structs.AnalysisOutcomeSuccess}}
		w, err := NewWatcher(Config{State: f, Writer: f, Measure: m.measure})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		defer func() {
			cancel()
			<-done
		}()

		synctest.Wait()
		if m.calls() != 1 {
			t.Fatalf("%d measurements started at once, want 1", m.calls())
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if m.calls() != 2 {
			t.Fatalf("%d measurements, want count = 2", m.calls())
		}
		if gap := m.at[1].Sub(m.at[0]); gap != 10*time.Second {
			t.Errorf("measurements %v apart, want the interval after the last one's time", gap)
		}
		d := f.deps["d1"]
		if d.Status != structs.DeploymentStatusSuccessful {
			t.Fatalf("deployment %s: %s", d.Status, d.StatusDescription)
		}
		runs := d.TaskGroups["web"].Analyses
		if len(runs) != 1 || runs[0].Phase != structs.AnalysisPhaseSuccessful || runs[0].Successes != 2 || runs[0].Batch != 1 {
			t.Fatalf("runs: %+v", runs)
		}
		if r := m.reqs[0]; r.JobName != "web" || r.JobVersion != 1 || r.StableVersion != 0 || r.Group != "web" || r.DeploymentID != "d1" {
			t.Errorf("refs: %+v", r)
		}
	})
}

// A slow provider holds no other decision: the watcher decides and writes
// while a query runs, and a query that never answers ends as an error
// measurement; errors past error_limit pause the deployment.
func TestWatcherMeasuresOffThePass(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 2, rpb: 5 * time.Second})
		withAnalysis(f, &structs.Analysis{Name: "lat", When: structs.AnalysisWhenBackground,
			Interval: 10 * time.Second, ErrorLimit: 1})
		m := &recordedMeasurer{delay: time.Hour, outcomes: []string{structs.AnalysisOutcomeSuccess}}
		w, err := NewWatcher(Config{State: f, Writer: f, Measure: m.measure})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		defer func() {
			cancel()
			<-done
		}()

		synctest.Wait()
		if m.calls() != 1 {
			t.Fatalf("%d measurements, want 1 (one per run at a time)", m.calls())
		}
		// The progress deadline passes while the query hangs: the
		// deployment fails on time.
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if d := f.deps["d1"]; d.Status != structs.DeploymentStatusFailed {
			t.Fatalf("deployment %s while a query hung", d.Status)
		}
		if m.calls() != 1 {
			t.Fatalf("%d measurements, want the hung one only", m.calls())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 2, rpb: time.Hour})
		withAnalysis(f, &structs.Analysis{Name: "lat", When: structs.AnalysisWhenBackground,
			Interval: 10 * time.Second, ErrorLimit: 1})
		m := &recordedMeasurer{delay: time.Hour, outcomes: []string{structs.AnalysisOutcomeSuccess}}
		w, err := NewWatcher(Config{State: f, Writer: f, Measure: m.measure})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		defer func() {
			cancel()
			<-done
		}()
		time.Sleep(time.Minute)
		synctest.Wait()
		d := f.deps["d1"]
		if d.Status != structs.DeploymentStatusPaused || !structs.IsAnalysisDescription(d.StatusDescription) {
			t.Fatalf("deployment %s: %s; want paused on the inconclusive run", d.Status, d.StatusDescription)
		}
		r := d.TaskGroups["web"].Analyses[0]
		if r.Phase != structs.AnalysisPhaseInconclusive || r.Errors != 2 || r.Successes != 0 {
			t.Fatalf("run %+v", r)
		}
	})
}

// BenchmarkWatcherPassAnalysis is one watcher pass over 100 running
// deployments of 4 allocs (two healthy, two in flight), without analysis
// and with a running each_batch run and a running background run in
// each, no measurement due: the cost analysis adds to every pass of the
// leader's watcher.
func BenchmarkWatcherPassAnalysis(b *testing.B) {
	for _, with := range []bool{false, true} {
		name := "none"
		if with {
			name = "runs"
		}
		b.Run(name, func(b *testing.B) {
			f := newFakeStore()
			for i := range 100 {
				id := fmt.Sprintf("j%03d", i)
				u := &structs.UpdateStrategy{MaxParallel: 2}
				if with {
					u.Analyses = []*structs.Analysis{
						{Name: "errors", When: structs.AnalysisWhenEachBatch, Count: 3, Interval: time.Minute, ErrorLimit: 4},
						{Name: "lat", When: structs.AnalysisWhenBackground, Interval: time.Minute, ErrorLimit: 4},
					}
				}
				job := &structs.Job{ID: id, Namespace: "default", Type: structs.JobTypeService, Version: 1,
					TaskGroups: []*structs.TaskGroup{{Name: "web", Count: 4, Update: u,
						ReschedulePolicy: &structs.ReschedulePolicy{Unlimited: true}}}}
				f.jobs[id] = []*structs.Job{job}
				s := &structs.DeploymentState{DesiredTotal: 4, ProgressDeadline: 10 * time.Minute,
					RequireProgressBy: t0.Add(10 * time.Minute)}
				f.evals = append(f.evals, &structs.Evaluation{ID: "e" + id, JobID: id, CreateIndex: 2, ModifyIndex: 2})
				if with {
					v := 0.001
					last := []*structs.AnalysisMeasurement{{At: t0.Add(5 * time.Second), Result: &v, Results: []float64{v},
						Outcome: structs.AnalysisOutcomeSuccess}}
					s.Analyses = []*structs.AnalysisRun{
						{Name: "lat", When: structs.AnalysisWhenBackground, Phase: structs.AnalysisPhaseRunning, StartedAt: t0,
							Successes: 1, Measurements: last},
						{Name: "errors", When: structs.AnalysisWhenEachBatch, Batch: 1, Healthy: 2, Phase: structs.AnalysisPhaseRunning, StartedAt: t0,
							Successes: 1, Measurements: last},
					}
					s.WaitReason = structs.AnalysisRunningReason(u.Analyses[0], s.Analyses[1])
				}
				did := "d" + id
				f.deps[did] = &structs.Deployment{ID: did, Namespace: "default", JobID: id, JobVersion: 1,
					Status: structs.DeploymentStatusRunning, StatusDescription: structs.DeploymentStatusDescriptionRunning,
					TaskGroups: map[string]*structs.DeploymentState{"web": s}}
				for k := range 4 {
					var h *bool
					if k < 2 {
						h = boolp(true)
					}
					aid := fmt.Sprintf("%s-%d", id, k)
					f.allocs[aid] = &structs.Allocation{ID: aid, JobID: id, Job: job, TaskGroup: "web", DeploymentID: did,
						DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
						DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: h, ModifyIndex: 1}}
				}
			}
			f.index = 2
			f.refigure()
			w, err := NewWatcher(Config{State: f, Writer: f, Clock: fixedClock{t0.Add(10 * time.Second)},
				Measure: func(context.Context, MeasureRequest, time.Time) *structs.AnalysisMeasurement {
					b.Fatal("no measurement is due")
					return nil
				}})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			w.RunOnce(ctx)
			if n := len(f.writes()); n != 0 {
				b.Fatalf("%d writes in the first pass: %q", n, f.writes())
			}
			b.ReportAllocs()
			for b.Loop() {
				w.RunOnce(ctx)
			}
		})
	}
}
