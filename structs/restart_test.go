package structs

import "testing"

// A restart's strategy keeps the group's policies but its own width, wait
// and error action; it never reverts, places no canaries, and in place
// surges nothing.
func TestRestartUpdateFor(t *testing.T) {
	u := DefaultUpdateStrategy()
	u.MaxParallel, u.Canary, u.AutoRevert, u.MaxSurge = 3, 1, true, Count(2)
	u.Checkpoints = []Amount{{Value: 50, Percent: true}}
	for _, c := range []struct {
		name string
		spec RestartSpec
		want func(*UpdateStrategy) bool
	}{
		{"in place", RestartSpec{}, func(g *UpdateStrategy) bool {
			return g.MaxParallel == 3 && g.Canary == 0 && !g.AutoRevert && g.FailureAction() == OnFailureFail &&
				g.MaxSurge == nil && len(g.Checkpoints) == 1
		}},
		{"reschedule keeps surge", RestartSpec{Reschedule: true}, func(g *UpdateStrategy) bool { return g.SurgeFor(10) == 2 }},
		{"batch size", RestartSpec{BatchSize: Percent(50)}, func(g *UpdateStrategy) bool { return g.ParallelFor(10) == 5 }},
		{"batch wait ask", RestartSpec{BatchSize: Count(4), BatchWaitAsk: true}, func(g *UpdateStrategy) bool {
			cps := g.CheckpointsFor(10)
			return len(cps) == 2 && cps[0] == 4 && cps[1] == 8 && g.CheckpointDelay == 0
		}},
		{"on error ask", RestartSpec{OnError: RestartOnErrorAsk}, func(g *UpdateStrategy) bool { return g.FailureAction() == OnFailurePause }},
	} {
		if g := c.spec.UpdateFor(u, 10); !c.want(g) {
			t.Errorf("%s: %+v", c.name, g)
		}
	}
	if u.Canary != 1 || !u.AutoRevert {
		t.Fatal("UpdateFor changed the group's strategy")
	}
	norolling := &UpdateStrategy{}
	if g := (&RestartSpec{}).UpdateFor(norolling, 4); g.ParallelFor(4) != 1 {
		t.Errorf("max_parallel 0: width %d, want 1", g.ParallelFor(4))
	}
}

// A scale is a version whose counts alone changed; anything else is not.
func TestScaledOnly(t *testing.T) {
	job := &Job{ID: "web", Version: 1, CreateIndex: 5, TaskGroups: []*TaskGroup{{Name: "web", Count: 2}}}
	scaled := job.Copy()
	scaled.Version, scaled.TaskGroups[0].Count = 2, 4
	changed := scaled.Copy()
	changed.Meta = map[string]string{"x": "y"}
	recreated := scaled.Copy()
	recreated.CreateIndex = 9
	if !ScaledOnly(job, scaled) || ScaledOnly(job, changed) || ScaledOnly(job, recreated) || ScaledOnly(scaled, job) {
		t.Fatal("ScaledOnly")
	}
}
