package deployment

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/structs"
)

// TestWaitReason is the table of sentences: one case per policy that
// can hold a group, and the order in which they win.
func TestWaitReason(t *testing.T) {
	running := func(f waitFacts) waitFacts {
		f.Status, f.Description, f.Now, f.Group = structs.DeploymentStatusRunning, structs.DeploymentStatusDescriptionRunning, t0, "web"
		f.MaxParallel, f.MinHealthyTime = 2, 10*time.Second
		return f
	}
	paused := func(desc string, f waitFacts) waitFacts {
		f = running(f)
		f.Status, f.Description = structs.DeploymentStatusPaused, desc
		return f
	}
	for _, tc := range []struct {
		name string
		f    waitFacts
		want string
	}{
		{"terminal", waitFacts{Status: structs.DeploymentStatusSuccessful}, ""},
		{"done", running(waitFacts{Done: true, InFlight: 3}), ""},
		{"batch in flight", running(waitFacts{InFlight: 2}),
			"batch in flight: new allocations healthy for min_healthy_time 10s (max_parallel 2)"},
		{"stagger", running(waitFacts{Stagger: 30 * time.Second}), "stagger: 30s between batches"},
		{"stagger, batch in flight", running(waitFacts{Stagger: 30 * time.Second, InFlight: 1}),
			"batch in flight: new allocations healthy for min_healthy_time 10s (max_parallel 2)"},
		{"first batch", running(waitFacts{FirstBatch: 3, Healthy: 2, InFlight: 1}), "first batch: 2 of 3 healthy"},
		{"first batch not all placed yet", running(waitFacts{FirstBatch: 3, Healthy: 1, InFlight: 1}),
			"batch in flight: new allocations healthy for min_healthy_time 10s (max_parallel 2)"},
		{"first batch healthy", running(waitFacts{FirstBatch: 3, Healthy: 3, Stagger: time.Minute}), "stagger: 1m between batches"},
		{"zone budget", running(waitFacts{InFlight: 1, Zone: &zoneWait{Name: "b", Budget: 1, InUse: 1}}),
			`zone "b" waits: 1 of 1 allowed unavailable in use`},
		{"zone pause", running(waitFacts{Zone: &zoneWait{Name: "b", Pause: time.Minute, PauseUntil: t0.Add(90 * time.Second)}}),
			`zone "b" waits: pause_between_zones 1m, until 00:01:30 UTC`},
		{"zone threshold", running(waitFacts{Zone: &zoneWait{Name: "b", After: "a", AfterHealthy: 1, AfterSize: 3, Threshold: "50%"}}),
			`zone "b" waits for zone "a": 1 of 3 healthy, success_threshold 50%`},
		{"first batch before zone", running(waitFacts{FirstBatch: 1, InFlight: 1, Zone: &zoneWait{Name: "b", Budget: 1, InUse: 1}}),
			"first batch: 0 of 1 healthy"},
		{"canaries", running(waitFacts{AwaitingPromotion: true, Canaries: 2, HealthyCanaries: 1}), "canaries: 1 of 2 healthy"},
		{"canaries promotion", running(waitFacts{AwaitingPromotion: true, Canaries: 2, HealthyCanaries: 2}),
			"canaries: 2 of 2 healthy, waiting for promotion (deployment promote)"},
		{"canaries auto promotion", running(waitFacts{AwaitingPromotion: true, AutoPromote: true, Canaries: 1, HealthyCanaries: 1}),
			"canaries: 1 of 1 healthy, waiting for automatic promotion"},
		{"group order", running(waitFacts{WaitsFor: "api", AwaitingPromotion: true, Canaries: 1}),
			"group_order: waits for group api to be done"},
		{"group order pause", running(waitFacts{WaitsFor: "api", PauseBetweenGroups: 2 * time.Minute, WaitsUntil: t0.Add(time.Minute)}),
			"group_order: pause_between_groups 2m after group api, until 00:01:00 UTC"},
		{"group order pause over", running(waitFacts{WaitsFor: "api", PauseBetweenGroups: 2 * time.Minute, WaitsUntil: t0}),
			"group_order: waits for group api to be done"},
		{"analysis", running(waitFacts{Analysis: `analysis "errors" running after batch 2: 1 of 3 measurements`,
			AwaitingPromotion: true, Canaries: 1, HealthyCanaries: 1, InFlight: 1}),
			`analysis "errors" running after batch 2: 1 of 3 measurements`},
		{"group order before analysis", running(waitFacts{WaitsFor: "api", Analysis: "x"}), "group_order: waits for group api to be done"},
		{"checkpoint", paused(structs.CheckpointDescription("50%", "web", 5, 10), waitFacts{Checkpoint: "50%"}),
			"checkpoint 50% reached: resume to continue"},
		{"checkpoint delay", paused(structs.CheckpointDescription("50%", "web", 5, 10), waitFacts{Checkpoint: "50%", ResumeAt: t0.Add(time.Hour)}),
			"checkpoint 50% reached: resumes at 01:00:00 UTC (checkpoint_delay)"},
		{"another group's checkpoint", paused(structs.CheckpointDescription("10%", "api", 1, 10), waitFacts{Checkpoint: "50%"}),
			"deployment paused at checkpoint 10% of group api (1/10 healthy): resume to continue"},
		{"operator", paused(structs.DeploymentStatusDescriptionPaused, waitFacts{Checkpoint: "50%", InFlight: 1}),
			"deployment paused by an operator: resume to continue"},
		{"max_unhealthy", paused(structs.MaxUnhealthyPauseDescription(3, 10, "web", 2), waitFacts{}),
			"paused: 3 of 10 allocations of group web are not serving, over max_unhealthy 2: resume to continue"},
		{"zone budget reached", paused(structs.ZoneBudgetPauseDescription(2, "a", 2), waitFacts{}),
			"paused: 2 allocations failed in zone a, reaching its disruption budget 2: resume to continue"},
		{"progress deadline", paused(structs.DeploymentStatusDescriptionPausedProgressDeadline, waitFacts{}),
			"paused due to progress deadline: resume to continue"},
		{"paused, done", paused(structs.DeploymentStatusDescriptionPaused, waitFacts{Done: true}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := waitReason(tc.f); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A steady deployment writes its sentence once: passes that find the same
// sentence (new health, a timer) write none, and the sentence is cleared
// in the write that ends the deployment.
func TestWatcherWritesWaitReasonOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 3, rpb: 10 * time.Minute})
		u := structs.DefaultUpdateStrategy()
		u.MaxParallel = 2
		for _, j := range f.jobs["web"] {
			j.TaskGroups[0].Update = u
		}
		stop := startWatcher(t, f)
		defer stop()
		synctest.Wait()
		sentence := "web: batch in flight: new allocations healthy for min_healthy_time 10s (max_parallel 2)"
		log, reasons := f.waitReasonWrites()
		if !slices.Equal(log, []string{"wait-reasons"}) || !slices.Equal(reasons, []string{sentence}) {
			t.Fatalf("first pass: log %q, reasons %q", log, reasons)
		}
		if got := f.deployment("d1").TaskGroups["web"].WaitReason; "web: "+got != sentence {
			t.Fatalf("stored %q", got)
		}

		f.setHealth("a2", true, time.Now())
		synctest.Wait()
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		log, reasons = f.waitReasonWrites()
		if !slices.Equal(log, []string{"wait-reasons", "eval"}) || len(reasons) != 1 {
			t.Fatalf("steady: log %q, reasons %q", log, reasons)
		}

		f.setHealth("a3", true, time.Now())
		synctest.Wait()
		log, reasons = f.waitReasonWrites()
		if !slices.Equal(log, []string{"wait-reasons", "eval", "stable", "status successful: Deployment completed successfully"}) ||
			!slices.Equal(reasons, []string{sentence, "web: "}) {
			t.Fatalf("end: log %q, reasons %q", log, reasons)
		}
		if got := f.deployment("d1").TaskGroups["web"].WaitReason; got != "" {
			t.Errorf("stored %q after the end", got)
		}
	})
}

// The sentence of a canary run that holds a group's promotion: the latest
// canary run still running; a background run, or one that ended, holds
// nothing (an each_batch run's is analysisWaitReason's).
func TestAnalysisHold(t *testing.T) {
	as := []*structs.Analysis{{Name: "errors", When: structs.AnalysisWhenCanary, Count: 3, Interval: 10 * time.Second}}
	g := &groupView{name: "web", analyses: as, state: &structs.DeploymentState{Analyses: []*structs.AnalysisRun{
		{Name: "errors", When: structs.AnalysisWhenCanary, Phase: structs.AnalysisPhaseSuccessful},
		{Name: "latency", When: structs.AnalysisWhenBackground, Phase: structs.AnalysisPhaseRunning},
	}}}
	if got := analysisHold(g); got != "" {
		t.Fatalf("held by a background run or an ended one: %q", got)
	}
	g.state.Analyses = append(g.state.Analyses, &structs.AnalysisRun{Name: "errors", When: structs.AnalysisWhenCanary, Phase: structs.AnalysisPhaseRunning})
	if got, want := analysisHold(g), `analysis "errors" gates promotion: 3 measurements, every 10s`; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}
