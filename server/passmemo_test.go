package server

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/droverhq/drover/scheduler"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// TestRolloutPassesFromMemoMatchFull rolls a job out through the leader's
// workers, health reports arriving in batches of varied size, and checks
// every pass's plan from the job's memo against the full pass's plan of
// the same input: equal, and most of the rollout's passes from the memo,
// most of those reading only the allocs written since the job's last pass
// (the hook also checks that those are the job index's allocs).
func TestRolloutPassesFromMemoMatchFull(t *testing.T) {
	h := newHarness(t)
	var mu sync.Mutex
	passes, fromMemo := 0, 0
	var mismatch string
	h.leader.memoPlans = func(memo, full *scheduler.Plan, plain bool) {
		mu.Lock()
		defer mu.Unlock()
		if memo == nil && full == nil && mismatch == "" {
			mismatch = "the allocs read from the memo are not the job index's"
			return
		}
		passes++
		if plain {
			fromMemo++
		}
		if mismatch == "" && !reflect.DeepEqual(memo, full) {
			mismatch = "memo:\n" + memo.String() + "\nfull:\n" + full.String()
		}
	}
	h.start()
	for _, n := range []string{"a", "b", "c", "d"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 8000, 8192))
		must(t, err)
	}
	const count = 24
	v0 := testJob("web", count, 100)
	v0.TaskGroups[0].Update.MaxParallel = 5
	_, err := h.leader.RegisterJob(h.ctx, v0)
	must(t, err)
	h.waitFor("the v0 allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == count })
	h.markHealthy(allocsOf(h.store().Snapshot(), "web"))
	h.waitFor("v0 successful", func(s *state.Snapshot) bool {
		d := deploymentOf(s, "web", 0)
		return d != nil && d.Status == structs.DeploymentStatusSuccessful
	})
	v1 := v0.Copy()
	v1.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "2h"}
	_, err = h.leader.RegisterJob(h.ctx, v1)
	must(t, err)
	for step := 0; ; step++ {
		if step > 100 {
			t.Fatalf("the rollout did not finish\n%s", h.dump())
		}
		h.idle()
		snap := h.store().Snapshot()
		if d := deploymentOf(snap, "web", 1); d != nil && d.Status == structs.DeploymentStatusSuccessful {
			break
		}
		unhealthy := func(s *state.Snapshot) []*structs.Allocation {
			var out []*structs.Allocation
			for _, a := range byVersion(allocsOf(s, "web"), 1) {
				if !a.IsHealthy() {
					out = append(out, a)
				}
			}
			return out
		}
		waiting := unhealthy(snap)
		if len(waiting) == 0 {
			// Every placed alloc is healthy: what comes next is the
			// deployment watcher's (its own goroutine), which idle does
			// not wait for — the success, or the pass of the next batch.
			h.waitFor("the watcher's next step", func(s *state.Snapshot) bool {
				d := deploymentOf(s, "web", 1)
				return d != nil && d.Status == structs.DeploymentStatusSuccessful || len(unhealthy(s)) > 0
			})
			continue
		}
		// Reports come in batches of one to three.
		if n := 1 + step%3; len(waiting) > n {
			waiting = waiting[:n]
		}
		h.markHealthy(waiting)
	}
	h.idle()
	mu.Lock()
	defer mu.Unlock()
	if mismatch != "" {
		t.Fatalf("a pass's plan from the memo differs from the full pass's\n%s", mismatch)
	}
	if fromMemo < passes/2 {
		t.Fatalf("%d of %d passes from the memo, want most", fromMemo, passes)
	}
	read := h.leader.memos.incremental.Load()
	if read < int64(fromMemo)/2 {
		t.Fatalf("%d passes read only the allocs written since the job's last pass, of %d from the memo", read, fromMemo)
	}
	t.Logf("%d passes, %d from the memo, %d reading only the allocs written since", passes, fromMemo, read)
}

// TestPassMemosBounded checks that the leader keeps memos of rolling jobs
// only, within its bounds.
func TestPassMemosBounded(t *testing.T) {
	var p passMemos
	if m := p.take("default", "a"); m == nil || m.Active() {
		t.Fatalf("take of an unknown job: %v, want a new empty memo", m)
	}
	p.put("default", "a", &jobMemo{Memo: &scheduler.Memo{}})
	if len(p.m) != 0 {
		t.Fatalf("an inactive memo was kept")
	}
	// Memos of rolling jobs (a running deployment of the job's version):
	// at most maxPassMemos of them.
	for i := range maxPassMemos + 6 {
		job := testJob(fmt.Sprint("job-", i), 1, 100)
		d := &structs.Deployment{ID: fmt.Sprint("d-", i), JobID: job.ID, Status: structs.DeploymentStatusRunning,
			TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1}}}
		m := p.take("default", job.ID)
		scheduler.ReconcileMemo(scheduler.Input{Job: job, Deployment: d, IDs: func() string { return "x" }}, m.Memo)
		if !m.Active() {
			t.Fatalf("job %d: the memo of a rolling job is not active", i)
		}
		p.put("default", job.ID, m)
	}
	if len(p.m) != maxPassMemos {
		t.Fatalf("%d memos kept, want %d", len(p.m), maxPassMemos)
	}
}
