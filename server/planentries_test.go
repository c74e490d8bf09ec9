package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// enqueueRaft is a fakeRaft that also satisfies Enqueuer: each entry is
// applied when enqueued, and the wait function returns its outcome.
type enqueueRaft struct {
	*fakeRaft
	mu       sync.Mutex
	enqueued int
}

func (r *enqueueRaft) Enqueue(ctx context.Context, t fsm.MessageType, req any) func() (any, uint64, error) {
	r.mu.Lock()
	r.enqueued++
	r.mu.Unlock()
	resp, idx, err := r.Apply(ctx, t, req)
	return func() (any, uint64, error) { return resp, idx, err }
}

func (r *enqueueRaft) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.enqueued
}

func TestPlanRequestsCutLargePlans(t *testing.T) {
	l, err := New(Config{Raft: newFakeRaft(hclog.NewNullLogger()), State: func() *state.Store { return nil }, PlanEntryAllocs: 3})
	must(t, err)
	job := testJob("web", 10, 1)
	alloc := func(i int) *structs.Allocation {
		return &structs.Allocation{ID: fmt.Sprintf("new-%d", i), NodeID: "n", Job: job}
	}
	p := &planSubmission{
		evalID: "e1", job: job,
		replaces: map[string]*structs.AllocStopUpdate{
			"new-1": {AllocID: "old-1"}, "new-2": {AllocID: "old-2"}, "new-4": {AllocID: "old-4"},
		},
		stops:             []*structs.AllocStopUpdate{{AllocID: "gone-1"}, {AllocID: "gone-2"}},
		updated:           []*structs.Allocation{{ID: "inplace-1", Job: job}},
		deployment:        &structs.Deployment{ID: "d1"},
		deploymentUpdates: []*structs.DeploymentStatusUpdate{{DeploymentID: "d0"}},
		followupEvals:     []*structs.Evaluation{{ID: "f1"}},
	}
	var accepted []*structs.Allocation
	for i := range 6 {
		accepted = append(accepted, alloc(i))
	}
	// As checkPlan returns them: the plan's stops, then those replaced by
	// accepted placements.
	stops := append(slices.Clone(p.stops), p.replaces["new-1"], p.replaces["new-2"], p.replaces["new-4"])

	reqs, finished := l.planRequests(p, accepted, stops, false)
	if finished {
		t.Fatal("an incomplete plan reports its outcome written")
	}

	type entry struct{ stopped, updated, placed []string }
	var got []entry
	for i, r := range reqs {
		var e entry
		for _, s := range r.AllocsStopped {
			e.stopped = append(e.stopped, s.AllocID)
		}
		for _, a := range r.AllocsUpdated {
			e.updated = append(e.updated, a.ID)
		}
		for _, a := range r.AllocsPlaced {
			e.placed = append(e.placed, a.ID)
			if a.Job != nil || a.CreateTime != r.UpdatedAt {
				t.Fatalf("entry %d: placed %s carries its job or a foreign time", i, a.ID)
			}
		}
		if n := len(e.stopped) + len(e.updated) + len(e.placed); n > 3 {
			t.Fatalf("entry %d holds %d allocs, want <= 3", i, n)
		}
		if r.Job != job || r.EvalID != "e1" || r.UpdatedAt != reqs[0].UpdatedAt {
			t.Fatalf("entry %d: job %v eval %q time %d", i, r.Job, r.EvalID, r.UpdatedAt)
		}
		if (i == 0) != (r.Deployment != nil) || (i == 0) != (len(r.DeploymentUpdates) == 1) ||
			(i == 0) != (len(r.FollowupEvals) == 1) {
			t.Fatalf("entry %d: deployment %v, updates %v, evals %v: want them in the first entry only",
				i, r.Deployment, r.DeploymentUpdates, r.FollowupEvals)
		}
		got = append(got, e)
	}
	// The exact cut: stops and updates first, each replacement with the
	// stop of the alloc it replaces.
	want := []entry{
		{stopped: []string{"gone-1", "gone-2"}, updated: []string{"inplace-1"}},
		{placed: []string{"new-0", "new-1"}, stopped: []string{"old-1"}},
		{placed: []string{"new-2", "new-3"}, stopped: []string{"old-2"}},
		{placed: []string{"new-4", "new-5"}, stopped: []string{"old-4"}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("entries =\n%v\nwant\n%v", got, want)
	}

	// A plan of several entries leaves its outcome to a write of its own,
	// stamped once the whole plan is in.
	p.outcome = []*structs.Evaluation{{ID: "e1", Status: structs.EvalStatusComplete}}
	reqs, finished = l.planRequests(p, accepted, stops, true)
	if finished || len(reqs) != 4 || len(reqs[0].FollowupEvals) != 1 || len(reqs[3].FollowupEvals) != 0 {
		t.Fatalf("a plan of %d entries: finished %v, evals %v ... %v", len(reqs), finished, reqs[0].FollowupEvals, reqs[len(reqs)-1].FollowupEvals)
	}
}

func TestPlanRequestsOneEntryWhenItFits(t *testing.T) {
	l, err := New(Config{Raft: newFakeRaft(hclog.NewNullLogger()), State: func() *state.Store { return nil }})
	must(t, err)
	job := testJob("web", 2, 1)
	p := &planSubmission{evalID: "e1", job: job, replaces: map[string]*structs.AllocStopUpdate{}}
	accepted := []*structs.Allocation{{ID: "a"}, {ID: "b"}}
	if reqs, _ := l.planRequests(p, accepted, nil, false); len(reqs) != 1 || len(reqs[0].AllocsPlaced) != 2 {
		t.Fatalf("entries = %+v, want one with both placements", reqs)
	}
	if reqs, _ := l.planRequests(p, nil, nil, false); reqs != nil {
		t.Fatalf("an empty plan gives %d entries, want none", len(reqs))
	}

	// Accepted in full, a plan of one entry carries the evaluation's
	// outcome, stamped with the entry's time, after its follow-ups.
	p.followupEvals = []*structs.Evaluation{{ID: "f1"}}
	p.outcome = []*structs.Evaluation{{ID: "e1", Status: structs.EvalStatusComplete, ModifyTime: 1}}
	reqs, finished := l.planRequests(p, accepted, nil, true)
	if !finished || len(reqs) != 1 {
		t.Fatalf("finished %v with %d entries, want one entry carrying the outcome", finished, len(reqs))
	}
	evals := reqs[0].FollowupEvals
	if len(evals) != 2 || evals[0].ID != "f1" || evals[1].ID != "e1" || evals[1].ModifyTime != reqs[0].UpdatedAt {
		t.Fatalf("entry evals %+v, want f1 then e1 stamped %d", evals, reqs[0].UpdatedAt)
	}
	if len(p.followupEvals) != 1 || p.outcome[0].ModifyTime != 1 {
		t.Fatalf("the submission changed: follow-ups %v, outcome %+v", p.followupEvals, p.outcome[0])
	}
	if _, finished := l.planRequests(p, accepted, nil, false); finished {
		t.Fatal("a plan with rejected placements reports its outcome written")
	}
}

// A plan larger than PlanEntryAllocs is committed as several entries, in
// flight together when Raft can enqueue, and every alloc lands.
func TestLargePlanCommittedInBoundedEntries(t *testing.T) {
	for _, enqueue := range []bool{false, true} {
		t.Run(fmt.Sprintf("enqueue=%v", enqueue), func(t *testing.T) {
			var er *enqueueRaft
			h := newHarness(t, func(c *Config) {
				c.PlanEntryAllocs = 7
				if enqueue {
					er = &enqueueRaft{fakeRaft: c.Raft.(*fakeRaft)}
					c.Raft = er
				}
			})
			h.start()
			for _, n := range []string{"a", "b", "c"} {
				_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 4000, 8192))
				must(t, err)
			}
			before := h.raft.entries(fsmPlanType)
			res, err := h.leader.RegisterJob(h.ctx, testJob("web", 50, 10))
			must(t, err)
			h.waitFor("50 allocs and a complete eval", func(s *state.Snapshot) bool {
				e, _ := s.EvalByID(res.EvalID)
				return len(allocsOf(s, "web")) == 50 && e != nil && e.Status == structs.EvalStatusComplete
			})
			if n := h.raft.entries(fsmPlanType) - before; n != 8 {
				t.Fatalf("%d plan entries for 50 placements at 7 per entry, want 8", n)
			}
			if enqueue && er.count() != 8 {
				t.Fatalf("%d entries enqueued, want 8", er.count())
			}
			snap := h.store().Snapshot()
			d, err := snap.LatestDeploymentByJob(structs.DefaultNamespace, "web")
			must(t, err)
			if d == nil || d.TaskGroups["web"] == nil || d.TaskGroups["web"].PlacedAllocs != 50 {
				t.Fatalf("deployment = %+v, want 50 placed", d)
			}
		})
	}
}
