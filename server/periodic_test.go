package server

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// periodicJob is a batch job launched every minute.
func periodicJob(id string, overlap bool) *structs.Job {
	j := testJob(id, 1, 100)
	j.Type = structs.JobTypeBatch
	j.Update = nil
	j.TaskGroups[0].Update = nil
	j.Periodic = &structs.PeriodicConfig{Enabled: true, SpecType: structs.PeriodicSpecCron,
		Specs: []string{"* * * * *"}, ProhibitOverlap: overlap}
	return j
}

// children lists the IDs of a periodic job's children, sorted.
func children(s *state.Snapshot, id string) []string {
	jobs, _ := s.PeriodicChildren(structs.DefaultNamespace, id)
	var out []string
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	slices.Sort(out)
	return out
}

// waitArmed waits until the dispatcher has armed a timer for about d.
func (h *harness) waitArmed(d time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		for _, p := range h.clock.pending() {
			if p > d-2*time.Second && p <= d {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("no timer armed for %s: %v", d, h.clock.pending())
}

// The dispatcher launches a child at each cron time, once, from the
// replicated state alone: a new leader neither launches a made launch
// again nor makes more than one missed launch.
func TestPeriodicLaunchesOnceAcrossLeaders(t *testing.T) {
	h := newHarness(t)
	h.start()
	start := h.clock.Now() // 12:00:00
	resp, err := h.leader.RegisterJob(h.ctx, periodicJob("backup", false))
	if err != nil {
		t.Fatal(err)
	}
	if resp.EvalID != "" {
		t.Fatalf("a periodic job got an evaluation %s", resp.EvalID)
	}
	if j, _ := h.store().Snapshot().JobByID("default", "backup"); j.Status != structs.JobStatusRunning {
		t.Fatalf("periodic job status %q", j.Status)
	}
	h.waitArmed(time.Minute)
	h.clock.Advance(time.Minute)
	first := structs.PeriodicChildID("backup", start.Add(time.Minute))
	h.waitFor("the first launch", func(s *state.Snapshot) bool { return slices.Equal(children(s, "backup"), []string{first}) })
	child, _ := h.store().Snapshot().JobByID("default", first)
	if child.ParentID != "backup" || child.Periodic != nil || child.Name != first || child.Type != structs.JobTypeBatch {
		t.Fatalf("child %+v", child)
	}
	evals, _ := h.store().Snapshot().EvalsByJob("default", first)
	launches := 0
	for _, e := range evals {
		if e.TriggeredBy == structs.EvalTriggerPeriodicJob {
			launches++
		}
	}
	if launches != 1 {
		t.Fatalf("%d periodic-job evaluations of the child, want 1", launches)
	}

	// A new term (a leader change) launches nothing that was launched.
	h.stop()
	h.start()
	h.waitArmed(time.Minute)
	if got := children(h.store().Snapshot(), "backup"); len(got) != 1 {
		t.Fatalf("a new leader launched again: %v", got)
	}

	// Ten minutes without a leader: one launch, at the latest due time.
	h.stop()
	h.clock.Advance(10 * time.Minute)
	h.start()
	last := structs.PeriodicChildID("backup", start.Add(11*time.Minute))
	h.waitFor("the missed launch", func(s *state.Snapshot) bool { return len(children(s, "backup")) == 2 })
	if got := children(h.store().Snapshot(), "backup"); got[1] != last {
		t.Fatalf("children after an outage %v, want the launch of %s", got, last)
	}
	rec, _ := h.store().Snapshot().PeriodicLaunchByID("default", "backup")
	if rec == nil || !time.Unix(0, rec.Launch).Equal(start.Add(11*time.Minute)) {
		t.Fatalf("launch record %+v", rec)
	}
}

// prohibit_overlap skips a launch while a child is not dead; force
// launches anyway.
func TestPeriodicProhibitOverlapAndForce(t *testing.T) {
	h := newHarness(t)
	h.start()
	if _, err := h.leader.RegisterJob(h.ctx, periodicJob("report", true)); err != nil {
		t.Fatal(err)
	}
	h.waitArmed(time.Minute)
	h.clock.Advance(time.Minute)
	h.waitFor("the first launch", func(s *state.Snapshot) bool { return len(children(s, "report")) == 1 })
	// No client runs it: the child stays pending, so the next launch is
	// skipped.
	h.waitArmed(time.Minute)
	h.clock.Advance(time.Minute)
	h.waitArmed(time.Minute)
	if got := children(h.store().Snapshot(), "report"); len(got) != 1 {
		t.Fatalf("prohibit_overlap launched beside a running child: %v", got)
	}
	forced, err := h.leader.ForcePeriodic(h.ctx, "", "report")
	if err != nil || forced.EvalID == "" {
		t.Fatalf("force: %v %+v", err, forced)
	}
	if got := children(h.store().Snapshot(), "report"); len(got) != 2 {
		t.Fatalf("force did not launch: %v", got)
	}
	if _, err := h.leader.ForcePeriodic(h.ctx, "", "nope"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("force of an unknown job: %v", err)
	}
	if _, err := h.leader.RegisterJob(h.ctx, testJob("plain", 1, 100)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.leader.ForcePeriodic(h.ctx, "", "plain"); err == nil || !strings.Contains(err.Error(), "not periodic") {
		t.Fatalf("force of a job that is not periodic: %v", err)
	}
}
