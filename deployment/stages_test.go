package deployment

import (
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// stageRow is a running deployment "d1" of one group whose zones have
// the given states.
func stageRow(at time.Time, states ...string) *structs.Deployment {
	s := &structs.DeploymentState{DesiredTotal: 4}
	for i, st := range states {
		s.Zones = append(s.Zones, &structs.ZoneState{Name: string(rune('a' + i)), Size: 2, State: st})
	}
	return &structs.Deployment{ID: "d1", Status: structs.DeploymentStatusRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": s}, ModifyTime: at.UnixNano()}
}

// reported is a as a report at index stamped at at recorded it healthy.
func reported(a *structs.Allocation, index uint64, at time.Time) *structs.Allocation {
	c := healthy(a, at, true)
	c.DeploymentStatus.ModifyIndex = index
	c.ModifyIndex, c.ModifyTime = index, at.UnixNano()
	return c
}

// A zone change is timed from the report that completed the zone before
// it to the plan placing in the next; a batch change from the first
// report after a plan to the next plan; a checkpoint resume from the end
// of its delay.
func TestStageTracker(t *testing.T) {
	tr := NewStageTracker()
	var f StageFigures
	ms := func(n int) time.Time { return bt0.Add(time.Duration(n) * time.Millisecond) }
	tr.ObserveDeployment(stageRow(ms(0), structs.ZoneStateRolling, structs.ZoneStateWaiting))
	a1, a2 := placed("a1", "d1", 10, ms(0)), placed("a2", "d1", 10, ms(0))
	tr.ObserveAlloc(10, a1, &f)
	tr.ObserveAlloc(10, a2, &f)
	tr.ObserveAlloc(11, reported(a1, 11, ms(1000)), &f)
	tr.ObserveAlloc(12, reported(a2, 12, ms(1100)), &f)
	if len(f.StageStarts)+len(f.BatchStarts) != 0 {
		t.Fatalf("before any next placement: %+v", f)
	}
	// The watcher starts zone b; its plan places 7 ms after the report.
	tr.ObserveDeployment(stageRow(ms(1102), structs.ZoneStateDone, structs.ZoneStateRolling))
	b1, b2 := placed("b1", "d1", 14, ms(1107)), placed("b2", "d1", 14, ms(1107))
	tr.ObserveAlloc(14, b1, &f)
	tr.ObserveAlloc(14, b2, &f) // the same entry: measured once
	if !slices.Equal(f.StageStarts, []time.Duration{7 * time.Millisecond}) || len(f.BatchStarts) != 0 {
		t.Fatalf("zone change: %+v", f)
	}
	// Within the zone: a report, then the next plan 5 ms later.
	tr.ObserveAlloc(15, reported(b1, 15, ms(2100)), &f)
	tr.ObserveAlloc(16, reported(b2, 16, ms(2103)), &f)
	tr.ObserveAlloc(17, placed("b3", "d1", 17, ms(2105)), &f)
	if !slices.Equal(f.BatchStarts, []time.Duration{5 * time.Millisecond}) {
		t.Fatalf("batch change: %+v", f)
	}
	// A plan with no report since is no batch change.
	tr.ObserveAlloc(18, placed("b4", "d1", 18, ms(2200)), &f)
	if len(f.BatchStarts) != 1 || len(f.StageStarts) != 1 {
		t.Fatalf("a plan without a report: %+v", f)
	}
	// A checkpoint delay that ends at 3000, resumed by the watcher at
	// 3002; its plan at 3010.
	paused := stageRow(ms(2500), structs.ZoneStateDone, structs.ZoneStateRolling)
	paused.Status, paused.ResumeAt = structs.DeploymentStatusPaused, ms(3000)
	tr.ObserveDeployment(paused)
	tr.ObserveDeployment(stageRow(ms(3002), structs.ZoneStateDone, structs.ZoneStateRolling))
	tr.ObserveAlloc(20, placed("b5", "d1", 20, ms(3010)), &f)
	if !slices.Equal(f.StageStarts, []time.Duration{7 * time.Millisecond, 10 * time.Millisecond}) {
		t.Fatalf("resume: %+v", f)
	}
	// Allocations of a deployment never seen written are not measured;
	// one that is over is forgotten.
	tr.ObserveAlloc(21, placed("x1", "other", 21, ms(4000)), &f)
	done := stageRow(ms(5000), structs.ZoneStateDone, structs.ZoneStateDone)
	done.Status = structs.DeploymentStatusSuccessful
	tr.ObserveDeployment(done)
	if tr.Tracked() != 0 || len(f.StageStarts) != 2 || len(f.BatchStarts) != 1 {
		t.Fatalf("end: tracked %d, %+v", tr.Tracked(), f)
	}
}

// An ordered group that starts rolling is a stage start.
func TestStageTrackerOrderedGroups(t *testing.T) {
	tr := NewStageTracker()
	var f StageFigures
	row := func(at time.Time, api, web string) *structs.Deployment {
		return &structs.Deployment{ID: "d1", Status: structs.DeploymentStatusRunning, ModifyTime: at.UnixNano(),
			TaskGroups: map[string]*structs.DeploymentState{
				"api": {Order: 1, State: api, DesiredTotal: 1}, "web": {Order: 2, State: web, DesiredTotal: 1}}}
	}
	tr.ObserveDeployment(row(bt0, structs.GroupStateRolling, structs.GroupStateWaiting))
	a := placed("a1", "d1", 10, bt0)
	a.TaskGroup = "api"
	tr.ObserveAlloc(10, a, &f)
	tr.ObserveAlloc(11, reported(a, 11, bt0.Add(time.Second)), &f)
	tr.ObserveDeployment(row(bt0.Add(time.Second+time.Millisecond), structs.GroupStateDone, structs.GroupStateRolling))
	tr.ObserveAlloc(13, placed("w1", "d1", 13, bt0.Add(time.Second+4*time.Millisecond)), &f)
	if !slices.Equal(f.StageStarts, []time.Duration{4 * time.Millisecond}) {
		t.Fatalf("group change: %+v", f)
	}
}

// After a gap in what it was fed, the tracker measures no change whose
// start it may have missed, and still recognises the stages that start
// later.
func TestStageTrackerGap(t *testing.T) {
	tr := NewStageTracker()
	var f StageFigures
	ms := func(n int) time.Time { return bt0.Add(time.Duration(n) * time.Millisecond) }
	tr.ObserveDeployment(stageRow(ms(0), structs.ZoneStateRolling, structs.ZoneStateWaiting, structs.ZoneStateWaiting))
	a := placed("a1", "d1", 10, ms(0))
	tr.ObserveAlloc(10, a, &f)
	tr.ObserveAlloc(11, reported(a, 11, ms(1000)), &f)
	tr.Gap() // zone b's start and its report were missed
	tr.ObserveDeployment(stageRow(ms(1002), structs.ZoneStateDone, structs.ZoneStateRolling, structs.ZoneStateWaiting))
	b := placed("b1", "d1", 14, ms(1005))
	tr.ObserveAlloc(14, b, &f)
	if len(f.StageStarts)+len(f.BatchStarts) != 0 {
		t.Fatalf("measured across a gap: %+v", f)
	}
	tr.ObserveAlloc(15, reported(b, 15, ms(2000)), &f)
	tr.ObserveDeployment(stageRow(ms(2001), structs.ZoneStateDone, structs.ZoneStateDone, structs.ZoneStateRolling))
	tr.ObserveAlloc(17, placed("c1", "d1", 17, ms(2006)), &f)
	if !slices.Equal(f.StageStarts, []time.Duration{6 * time.Millisecond}) {
		t.Fatalf("after the gap: %+v", f)
	}
}
