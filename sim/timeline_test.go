package sim

import (
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

func TestRolloutStages(t *testing.T) {
	base := time.Unix(1000, 0)
	at := func(ms int) int64 { return base.Add(time.Duration(ms) * time.Millisecond).UnixNano() }
	yes := true
	// alloc i: placed at p, started at p+10ms, healthy 1s later (+5ms),
	// report applied 20ms after that; placed by eval e.
	alloc := func(id string, version uint64, p int, eval string) *structs.AllocationListStub {
		return &structs.AllocationListStub{
			ID: id, JobVersion: version, EvalID: eval, CreateTime: at(p), ModifyTime: at(p + 1035),
			TaskStates: map[string]*structs.TaskState{"t": {StartedAt: time.Unix(0, at(p+10))}},
			DeploymentStatus: &structs.AllocDeploymentStatus{
				Healthy: &yes, Timestamp: time.Unix(0, at(p+1015)),
			},
		}
	}
	allocs := []*structs.AllocationListStub{
		alloc("a", 1, 0, "e1"), alloc("b", 1, 0, "e1"),
		// Placed 100ms after a and b turned healthy (at 1015), by e2
		// created 50ms after their reports were applied (at 1035).
		alloc("c", 1, 1115, "e2"), alloc("d", 1, 1115, "e2"),
		alloc("old", 0, 0, "e0"), // another version: ignored
	}
	evals := []*structs.Evaluation{
		{ID: "e1", CreateTime: at(-30)},
		{ID: "e2", CreateTime: at(1085)},
	}
	s := rolloutStages(allocs, evals, 1, 2, time.Second)
	want := Stages{
		PlacedToStarted: 10 * time.Millisecond, StartedToHealthy: 5 * time.Millisecond,
		HealthyToApplied: 20 * time.Millisecond, AppliedToEval: 50 * time.Millisecond,
		EvalToPlaced: 30 * time.Millisecond, HealthyToNextPlaced: 100 * time.Millisecond, Cycles: 2,
		FirstPlaced: time.Unix(0, at(0)), LastHealthy: time.Unix(0, at(1115+1015)),
	}
	if !s.FirstPlaced.Equal(want.FirstPlaced) || !s.LastHealthy.Equal(want.LastHealthy) {
		t.Fatalf("first placed %v, last healthy %v; want %v, %v", s.FirstPlaced, s.LastHealthy, want.FirstPlaced, want.LastHealthy)
	}
	s.FirstPlaced, s.LastHealthy, want.FirstPlaced, want.LastHealthy = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if s != want {
		t.Fatalf("stages = %+v\nwant     %+v", s, want)
	}
	if d := sinceIf(time.Time{}, base); d != 0 {
		t.Fatalf("sinceIf with an unknown start = %v", d)
	}
	if got := rolloutStages(nil, nil, 1, 2, time.Second); got != (Stages{}) {
		t.Fatalf("no allocs: %+v", got)
	}
}

func TestFirstPlacedAfter(t *testing.T) {
	at := time.Unix(100, 0)
	stub := func(v uint64, created time.Time) *structs.AllocationListStub {
		return &structs.AllocationListStub{JobVersion: v, CreateTime: created.UnixNano()}
	}
	allocs := []*structs.AllocationListStub{
		stub(2, at.Add(-time.Second)),          // before the kill
		stub(1, at.Add(100*time.Millisecond)),  // another version
		stub(2, at.Add(1500*time.Millisecond)), // the new leader's second
		stub(2, at.Add(1200*time.Millisecond)), // its first
	}
	if got := firstPlacedAfter(allocs, 2, at); got != 1200*time.Millisecond {
		t.Fatalf("gap = %v, want 1.2s", got)
	}
	if got := firstPlacedAfter(allocs[:2], 2, at); got != 0 {
		t.Fatalf("gap without later placements = %v, want 0", got)
	}
}
