package health

import (
	"testing"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/structs"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type fixture struct {
	clock   *clock.Fake
	tracker *Tracker
	results []Result
}

func newFixture(t *testing.T, mode string, checks ...string) *fixture {
	t.Helper()
	f := &fixture{clock: clock.NewFake(t0)}
	s := structs.DefaultUpdateStrategy()
	s.HealthCheck = mode
	s.MinHealthyTime = 10 * time.Second
	s.HealthyDeadline = time.Minute
	tr, err := NewTracker(Config{
		Strategy: s, Tasks: []string{"web", "side"}, Checks: checks, Clock: f.clock,
		OnResult: func(r Result) { f.results = append(f.results, r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	f.tracker = tr
	tr.Start()
	return f
}

func (f *fixture) running(task string) {
	f.tracker.TaskUpdated(task, &structs.TaskState{State: structs.TaskStateRunning, StartedAt: f.clock.Now()})
}

func (f *fixture) advanceTo(d time.Duration) { f.clock.Set(t0.Add(d)) }

func (f *fixture) want(t *testing.T, healthy bool, at time.Duration) {
	t.Helper()
	if len(f.results) != 1 {
		t.Fatalf("results %+v, want exactly one", f.results)
	}
	r := f.results[0]
	if r.Healthy != healthy || !r.Timestamp.Equal(t0.Add(at)) {
		t.Fatalf("result %+v, want healthy=%v at +%v", r, healthy, at)
	}
}

func (f *fixture) wantNone(t *testing.T) {
	t.Helper()
	if len(f.results) != 0 {
		t.Fatalf("premature result %+v", f.results)
	}
}

func TestTaskStatesHealthyAfterMinHealthyTime(t *testing.T) {
	f := newFixture(t, structs.UpdateHealthCheckTaskStates)
	f.running("web")
	f.advanceTo(2 * time.Second)
	f.running("side")
	f.advanceTo(12*time.Second - time.Nanosecond)
	f.wantNone(t)
	f.advanceTo(12 * time.Second)
	f.want(t, true, 12*time.Second)
	f.advanceTo(time.Hour) // decided once, never again
	f.want(t, true, 12*time.Second)
}

func TestRestartResetsMinHealthyTime(t *testing.T) {
	f := newFixture(t, structs.UpdateHealthCheckTaskStates)
	f.running("web")
	f.running("side")
	f.advanceTo(5 * time.Second)
	f.tracker.TaskUpdated("web", &structs.TaskState{State: structs.TaskStatePending, Restarts: 1})
	f.advanceTo(6 * time.Second)
	f.running("web")
	f.advanceTo(15 * time.Second)
	f.wantNone(t)
	f.advanceTo(16 * time.Second)
	f.want(t, true, 16*time.Second)
}

func TestDeadTaskUnhealthyAtOnce(t *testing.T) {
	f := newFixture(t, structs.UpdateHealthCheckTaskStates)
	f.running("web")
	f.running("side")
	f.advanceTo(3 * time.Second)
	f.tracker.TaskUpdated("side", &structs.TaskState{State: structs.TaskStateDead, Failed: true})
	// Reported inside the call, not at the next tick.
	f.want(t, false, 3*time.Second)
}

func TestHealthyDeadline(t *testing.T) {
	f := newFixture(t, structs.UpdateHealthCheckTaskStates)
	f.running("web") // "side" never runs
	f.advanceTo(time.Minute - time.Nanosecond)
	f.wantNone(t)
	f.advanceTo(2 * time.Minute)
	f.want(t, false, time.Minute)
}

func TestMinHealthyBeyondDeadlineIsUnhealthy(t *testing.T) {
	f := newFixture(t, structs.UpdateHealthCheckTaskStates)
	f.advanceTo(55 * time.Second)
	f.running("web")
	f.running("side")
	f.advanceTo(70 * time.Second)
	f.want(t, false, time.Minute)
}

func TestChecksMustPassForMinHealthyTime(t *testing.T) {
	f := newFixture(t, structs.UpdateHealthCheckChecks, "api/http")
	f.running("web")
	f.running("side")
	f.advanceTo(3 * time.Second)
	f.tracker.CheckUpdated("api/http", true, "ok")
	f.advanceTo(5 * time.Second)
	f.tracker.CheckUpdated("api/http", false, "HTTP 500")
	f.advanceTo(7 * time.Second)
	f.tracker.CheckUpdated("api/http", true, "ok")
	f.advanceTo(12 * time.Second)
	f.tracker.CheckUpdated("api/http", true, "ok") // a repeated pass keeps the streak
	f.advanceTo(17*time.Second - time.Nanosecond)
	f.wantNone(t)
	f.advanceTo(17 * time.Second)
	f.want(t, true, 17*time.Second)
}

func TestTaskStatesIgnoresChecks(t *testing.T) {
	f := newFixture(t, structs.UpdateHealthCheckTaskStates, "api/http")
	f.running("web")
	f.running("side")
	f.tracker.CheckUpdated("api/http", false, "down")
	f.advanceTo(10 * time.Second)
	f.want(t, true, 10*time.Second)
}

func TestManualNeverDecides(t *testing.T) {
	f := newFixture(t, structs.UpdateHealthCheckManual)
	f.running("web")
	f.tracker.TaskUpdated("side", &structs.TaskState{State: structs.TaskStateDead})
	f.advanceTo(time.Hour)
	f.wantNone(t)
	if f.clock.Pending() != 0 {
		t.Fatal("manual tracker armed a timer")
	}
}

func TestStopSilences(t *testing.T) {
	f := newFixture(t, structs.UpdateHealthCheckTaskStates)
	f.running("web")
	f.running("side")
	f.tracker.Stop()
	f.advanceTo(time.Hour)
	f.wantNone(t)
}

func TestNewTrackerRejectsBadMode(t *testing.T) {
	s := structs.DefaultUpdateStrategy()
	s.HealthCheck = "vibes"
	if _, err := NewTracker(Config{Strategy: s}); err == nil {
		t.Fatal("accepted unknown health_check")
	}
	if _, err := NewTracker(Config{}); err == nil {
		t.Fatal("accepted nil strategy")
	}
}
