package server

import (
	"errors"
	"testing"

	"github.com/droverhq/drover/structs"
)

func int64p(n int64) *int64 { return &n }

// ScaleJob writes the group's new count as a new version with a job-scaling
// evaluation and a scaling event, in one entry; an event without a count
// changes nothing else; what Nomad refuses is refused and writes nothing.
func TestScaleJob(t *testing.T) {
	h := newHarness(t)
	h.start()
	if _, err := h.leader.RegisterJob(h.ctx, testJob("web", 2, 100)); err != nil {
		t.Fatal(err)
	}
	group := testJob("web", 2, 100).TaskGroups[0].Name

	resp, err := h.leader.ScaleJob(h.ctx, ScaleRequest{JobID: "web", Group: group, Count: int64p(5), Message: "more"})
	if err != nil {
		t.Fatal(err)
	}
	snap := h.store().Snapshot()
	job, _ := snap.JobByID("default", "web")
	if job.Version != 1 || job.TaskGroups[0].Count != 5 || resp.JobVersion != 1 {
		t.Fatalf("scaled job: v%d count %d (resp v%d)", job.Version, job.TaskGroups[0].Count, resp.JobVersion)
	}
	eval, _ := snap.EvalByID(resp.EvalID)
	if eval == nil || eval.TriggeredBy != structs.EvalTriggerJobScaling {
		t.Fatalf("evaluation %+v", eval)
	}
	events, _ := snap.ScalingEventsByJob("default", "web")
	if events == nil || len(events.ScalingEvents[group]) != 1 {
		t.Fatalf("events %+v", events)
	}
	ev := events.ScalingEvents[group][0]
	if *ev.Count != 5 || ev.PreviousCount != 2 || ev.Message != "more" || ev.EvalID == nil || *ev.EvalID != resp.EvalID ||
		ev.Time == 0 || ev.CreateIndex == 0 {
		t.Fatalf("event %+v", ev)
	}

	// An event without a count: recorded, no new version.
	if _, err := h.leader.ScaleJob(h.ctx, ScaleRequest{JobID: "web", Group: group, Error: true, Message: "autoscaler failed"}); err != nil {
		t.Fatal(err)
	}
	snap = h.store().Snapshot()
	if job, _ := snap.JobByID("default", "web"); job.Version != 1 {
		t.Fatalf("an event without a count made version %d", job.Version)
	}
	events, _ = snap.ScalingEventsByJob("default", "web")
	if evs := events.ScalingEvents[group]; len(evs) != 2 || !evs[0].Error || evs[0].Count != nil || evs[1].Message != "more" {
		t.Fatalf("events newest first: %+v", evs)
	}

	for _, c := range []struct {
		name string
		req  ScaleRequest
	}{
		{"no group", ScaleRequest{JobID: "web", Count: int64p(1)}},
		{"unknown group", ScaleRequest{JobID: "web", Group: "db", Count: int64p(1)}},
		{"negative", ScaleRequest{JobID: "web", Group: group, Count: int64p(-1)}},
		{"nothing to record", ScaleRequest{JobID: "web", Group: group}},
	} {
		if _, err := h.leader.ScaleJob(h.ctx, c.req); !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	if _, err := h.leader.ScaleJob(h.ctx, ScaleRequest{JobID: "nope", Group: group, Count: int64p(1)}); !errors.Is(err, ErrJobNotFound) {
		t.Fatalf("unknown job: %v", err)
	}
	if job, _ := h.store().Snapshot().JobByID("default", "web"); job.Version != 1 || job.TaskGroups[0].Count != 5 {
		t.Fatalf("a refused scaling changed the job: v%d count %d", job.Version, job.TaskGroups[0].Count)
	}
}

// A group keeps its latest 20 events, and a purged job loses them.
func TestScalingEventsAreBoundedAndPurged(t *testing.T) {
	h := newHarness(t)
	h.start()
	if _, err := h.leader.RegisterJob(h.ctx, testJob("web", 1, 100)); err != nil {
		t.Fatal(err)
	}
	group := testJob("web", 1, 100).TaskGroups[0].Name
	for i := range 25 {
		if _, err := h.leader.ScaleJob(h.ctx, ScaleRequest{JobID: "web", Group: group, Count: int64p(int64(i%3 + 1))}); err != nil {
			t.Fatal(err)
		}
	}
	events, _ := h.store().Snapshot().ScalingEventsByJob("default", "web")
	evs := events.ScalingEvents[group]
	if len(evs) != structs.JobTrackedScalingEvents || *evs[0].Count != int64(24%3+1) || evs[0].CreateIndex <= evs[1].CreateIndex {
		t.Fatalf("%d events, newest count %d", len(evs), *evs[0].Count)
	}
	if _, err := h.leader.DeregisterJob(h.ctx, "", "web", true); err != nil {
		t.Fatal(err)
	}
	if events, _ := h.store().Snapshot().ScalingEventsByJob("default", "web"); events != nil {
		t.Fatalf("a purged job kept its events: %+v", events)
	}
}
