package structs

import (
	"testing"
	"time"
)

func TestApplyMeasurement(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := func(f float64) *float64 { return &f }
	m := func(outcome string, i int) *AnalysisMeasurement {
		x := &AnalysisMeasurement{At: t0.Add(time.Duration(i) * time.Second), Outcome: outcome}
		if outcome == AnalysisOutcomeError {
			x.Error = "connection refused"
		} else {
			x.Result = v(float64(i) / 100)
		}
		return x
	}
	base := Analysis{Name: "errors", When: AnalysisWhenEachBatch, Count: 3, ErrorLimit: 4,
		Success: "result < 0.01", Failure: "result >= 0.05"}
	cases := []struct {
		name     string
		a        func(a *Analysis)
		when     string
		outcomes []string
		// phase after each measurement
		phases []string
		// counters at the end: successes, failures, inconclusives, errors
		s, f, i, e int
	}{
		{name: "count successes", outcomes: []string{"success", "success", "success"},
			phases: []string{"running", "running", "successful"}, s: 3},
		{name: "one failure over limit 0", outcomes: []string{"success", "failure"},
			phases: []string{"running", "failed"}, s: 1, f: 1},
		{name: "failure within limit", a: func(a *Analysis) { a.FailureLimit = 1 }, outcomes: []string{"failure", "success", "success"},
			phases: []string{"running", "running", "successful"}, s: 2, f: 1},
		{name: "failures exceed limit", a: func(a *Analysis) { a.FailureLimit = 1 }, outcomes: []string{"failure", "failure"},
			phases: []string{"running", "failed"}, f: 2},
		{name: "inconclusive over limit", outcomes: []string{"inconclusive"},
			phases: []string{"inconclusive"}, i: 1},
		{name: "inconclusive within limit", a: func(a *Analysis) { a.InconclusiveLimit = 1 }, outcomes: []string{"inconclusive", "success", "success"},
			phases: []string{"running", "running", "successful"}, s: 2, i: 1},
		{name: "errors do not count toward count", a: func(a *Analysis) { a.Count = 1 }, outcomes: []string{"error", "error", "success"},
			phases: []string{"running", "running", "successful"}, s: 1},
		{name: "consecutive errors over limit", a: func(a *Analysis) { a.ErrorLimit = 2 }, outcomes: []string{"error", "error", "error"},
			phases: []string{"running", "running", "inconclusive"}, e: 3},
		{name: "a non-error resets consecutive errors", a: func(a *Analysis) { a.ErrorLimit = 2; a.Count = 5 },
			outcomes: []string{"error", "error", "success", "error", "error"},
			phases:   []string{"running", "running", "running", "running", "running"}, s: 1, e: 2},
		{name: "error limit 0: the first error", a: func(a *Analysis) { a.ErrorLimit = 0 }, outcomes: []string{"error"},
			phases: []string{"inconclusive"}, e: 1},
		{name: "failure wins over inconclusive", a: func(a *Analysis) { a.Count = 1 }, outcomes: []string{"failure"},
			phases: []string{"failed"}, f: 1},
		{name: "background never succeeds", when: AnalysisWhenBackground, outcomes: []string{"success", "success", "success", "success"},
			phases: []string{"running", "running", "running", "running"}, s: 4},
		{name: "background fails", when: AnalysisWhenBackground, outcomes: []string{"success", "failure"},
			phases: []string{"running", "failed"}, s: 1, f: 1},
		{name: "a terminal run is not changed", outcomes: []string{"failure", "success"},
			phases: []string{"failed", "failed"}, f: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := base
			if c.a != nil {
				c.a(&a)
			}
			when := c.when
			if when == "" {
				when = a.When
			}
			a.When = when
			run := &AnalysisRun{Name: a.Name, When: when, Phase: AnalysisPhaseRunning, StartedAt: t0}
			for k, o := range c.outcomes {
				before := run.Copy()
				run = ApplyMeasurement(run, &a, m(o, k+1))
				if run.Phase != c.phases[k] {
					t.Fatalf("after measurement %d (%s): phase %q, want %q", k+1, o, run.Phase, c.phases[k])
				}
				if before.Taken() != 0 && run == before {
					t.Fatal("ApplyMeasurement returned its input")
				}
			}
			if run.Successes != c.s || run.Failures != c.f || run.Inconclusives != c.i || run.Errors != c.e {
				t.Fatalf("counters s/f/i/e = %d/%d/%d/%d, want %d/%d/%d/%d",
					run.Successes, run.Failures, run.Inconclusives, run.Errors, c.s, c.f, c.i, c.e)
			}
		})
	}
}

func TestApplyMeasurementKeepsLast20(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := &Analysis{Name: "lat", When: AnalysisWhenBackground, Interval: time.Second, ErrorLimit: 4}
	run := &AnalysisRun{Name: "lat", When: a.When, Phase: AnalysisPhaseRunning, StartedAt: t0}
	for i := 1; i <= 25; i++ {
		orig := run
		run = ApplyMeasurement(run, a, &AnalysisMeasurement{At: t0.Add(time.Duration(i) * time.Second), Outcome: AnalysisOutcomeSuccess})
		if len(orig.Measurements) == i {
			t.Fatal("the input run was changed")
		}
	}
	if len(run.Measurements) != AnalysisMeasurementsKept || run.Successes != 25 {
		t.Fatalf("kept %d measurements, %d successes; want %d, 25", len(run.Measurements), run.Successes, AnalysisMeasurementsKept)
	}
	if first := run.Measurements[0].At; !first.Equal(t0.Add(6 * time.Second)) {
		t.Fatalf("oldest kept at %v, want the 6th", first)
	}
	if next := run.NextMeasurement(a); !next.Equal(t0.Add(26 * time.Second)) {
		t.Fatalf("next measurement at %v, want the last one's time plus interval", next)
	}
}

func TestAnalysisDescriptions(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	a := &Analysis{Name: "errors", Success: "result < 0.01", Failure: "result >= 0.05", ErrorLimit: 1}
	r := &AnalysisRun{Name: "errors", Failures: 2, Successes: 1, Measurements: []*AnalysisMeasurement{
		{Outcome: AnalysisOutcomeFailure, Result: f(0.07)},
		{Outcome: AnalysisOutcomeSuccess, Result: f(0.001)},
		{Outcome: AnalysisOutcomeFailure, Result: f(0.09)},
	}}
	want := `analysis "errors" failed: 2 of 3 measurements failed: result 0.07, 0.09; failure: result >= 0.05`
	if got := AnalysisFailedDescription(a, r); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	r = &AnalysisRun{Name: "errors", Errors: 2, Measurements: []*AnalysisMeasurement{
		{Outcome: AnalysisOutcomeError, Error: "a"}, {Outcome: AnalysisOutcomeError, Error: `Get "http://127.0.0.1:9/api/v1/query": connection refused`},
	}}
	want = `analysis "errors" inconclusive: 2 consecutive errors, last: Get "http://127.0.0.1:9/api/v1/query": connection refused`
	if got := AnalysisInconclusiveDescription(a, r); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestAnalysisRunUpdateApplies(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := &AnalysisRun{Name: "errors", Phase: AnalysisPhaseRunning, Measurements: []*AnalysisMeasurement{{At: t0}}}
	runs := []*AnalysisRun{run}
	next := &AnalysisRun{Name: "errors", Phase: AnalysisPhaseRunning}
	cases := []struct {
		name string
		u    AnalysisRunUpdate
		want bool
	}{
		{"new run at the end", AnalysisRunUpdate{Index: 1, Run: next}, true},
		{"new run where one is", AnalysisRunUpdate{Index: 0, Run: next}, false},
		{"past the end", AnalysisRunUpdate{Index: 2, Run: next}, false},
		{"measurement after the last", AnalysisRunUpdate{Index: 0, Run: next, PrevPhase: AnalysisPhaseRunning, PrevAt: t0}, true},
		{"measurement already written (a former leader's)", AnalysisRunUpdate{Index: 0, Run: next, PrevPhase: AnalysisPhaseRunning}, false},
		{"run ended meanwhile", AnalysisRunUpdate{Index: 0, Run: next, PrevPhase: AnalysisPhaseInconclusive, PrevAt: t0}, false},
		{"other analysis", AnalysisRunUpdate{Index: 0, Run: &AnalysisRun{Name: "latency"}, PrevPhase: AnalysisPhaseRunning, PrevAt: t0}, false},
	}
	for _, c := range cases {
		if got := c.u.Applies(runs); got != c.want {
			t.Errorf("%s: Applies = %v, want %v", c.name, got, c.want)
		}
	}
}
