package deployment

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/structs"
)

// seedOpts shapes the state seed builds.
type seedOpts struct {
	total       int
	rpb         time.Duration // require_progress_by relative to start
	autoRevert  bool
	canaries    int
	autoPromote bool
}

// seed stores job web (version 0 stable, version 1 current), deployment d1
// of version 1 with group web, alloc a1 healthy before the latest eval and
// allocs a2.. with no health yet. Canaries, if any, are c1...
func seed(start time.Time, o seedOpts) *fakeStore {
	f := newFakeStore()
	v0 := &structs.Job{ID: "web", Namespace: "default", Type: structs.JobTypeService, Priority: 50,
		Version: 0, Stable: true, Meta: map[string]string{"v": "0"},
		TaskGroups: []*structs.TaskGroup{{Name: "web", Count: o.total, ReschedulePolicy: &structs.ReschedulePolicy{Unlimited: true}}}}
	v1 := v0.Copy()
	v1.Version, v1.Stable, v1.Meta = 1, false, map[string]string{"v": "1"}
	f.jobs["web"] = []*structs.Job{v0, v1}
	s := &structs.DeploymentState{DesiredTotal: o.total, DesiredCanaries: o.canaries, AutoRevert: o.autoRevert,
		AutoPromote: o.autoPromote, ProgressDeadline: 10 * time.Minute, RequireProgressBy: start.Add(o.rpb)}
	f.deps["d1"] = &structs.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobVersion: 1,
		Status: structs.DeploymentStatusRunning, StatusDescription: runningDescription(&structs.Deployment{
			TaskGroups: map[string]*structs.DeploymentState{"web": s}}),
		TaskGroups: map[string]*structs.DeploymentState{"web": s}}
	add := func(id string, canary bool, healthy *bool) {
		f.allocs[id] = &structs.Allocation{ID: id, JobID: "web", Job: v1, TaskGroup: "web", DeploymentID: "d1",
			DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Canary: canary, Healthy: healthy, ModifyIndex: 1}}
		if canary {
			s.PlacedCanaries = append(s.PlacedCanaries, id)
		}
	}
	if o.canaries > 0 {
		for _, id := range []string{"c1", "c2", "c3"}[:o.canaries] {
			add(id, true, nil)
		}
	} else {
		add("a1", false, boolp(true))
		for _, id := range []string{"a2", "a3", "a4"}[:max(0, o.total-1)] {
			add(id, false, nil)
		}
	}
	f.evals = []*structs.Evaluation{{ID: "e0", JobID: "web", CreateIndex: 2, ModifyIndex: 2}}
	f.index = 2
	f.refigure()
	return f
}

// startWatcher runs a watcher over f until the returned stop is called;
// stop waits for Run to return and fails the test on an error.
func startWatcher(t *testing.T, f *fakeStore) (stop func()) {
	t.Helper()
	n := 0
	w, err := NewWatcher(Config{State: f, Writer: f, NewID: func() string { n++; return "eval-" + string(rune('a'+n-1)) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

func wantWrites(t *testing.T, f *fakeStore, want ...string) {
	t.Helper()
	if got := f.writes(); !slices.Equal(got, want) {
		t.Fatalf("writes:\n got %q\nwant %q", got, want)
	}
}

func TestWatcherDeadlineFiresAtWakeAt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 2, rpb: 10 * time.Minute, autoRevert: true})
		stop := startWatcher(t, f)
		defer stop()

		synctest.Wait()
		wantWrites(t, f)
		time.Sleep(10*time.Minute - time.Nanosecond)
		synctest.Wait()
		wantWrites(t, f)

		time.Sleep(time.Nanosecond)
		synctest.Wait()
		wantWrites(t, f, "status failed: Failed due to progress deadline - rolling back to job version 0")
		req := f.requests[0].(*structs.DeploymentStatusUpdateRequest)
		deadline := start.Add(10 * time.Minute)
		if req.UpdatedAt != deadline.UnixNano() {
			t.Errorf("stamped %v, want the deadline %v", time.Unix(0, req.UpdatedAt), deadline)
		}
		if req.Job == nil || req.Job.Meta["v"] != "0" || req.Job.Stable {
			t.Errorf("revert job not in the same write: %+v", req.Job)
		}
		if req.Job.RevertOf == nil || *req.Job.RevertOf != 0 {
			t.Errorf("revert job not marked as restoring version 0: %v", req.Job.RevertOf)
		}
		if req.Eval == nil || req.Eval.CreateTime != deadline.UnixNano() ||
			req.Eval.TriggeredBy != structs.EvalTriggerDeploymentWatcher || req.Eval.DeploymentID != "d1" {
			t.Errorf("eval not in the same write or badly stamped: %+v", req.Eval)
		}
		// Terminal now: nothing more, however long we wait.
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := len(f.writes()); n != 1 {
			t.Errorf("%d writes after failure", n)
		}
	})
}

func TestWatcherWakesOnChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 3, rpb: 10 * time.Minute})
		stop := startWatcher(t, f)
		defer stop()
		synctest.Wait()
		wantWrites(t, f)

		time.Sleep(time.Minute)
		f.setHealth("a2", true, time.Now())
		synctest.Wait()
		wantWrites(t, f, "eval")

		time.Sleep(time.Minute)
		f.setHealth("a3", true, time.Now())
		synctest.Wait()
		// Stability first, then the status: see write.
		wantWrites(t, f, "eval", "stable", "status successful: Deployment completed successfully")
		if !f.jobs["web"][1].Stable {
			t.Error("version 1 not marked stable")
		}
		if got := f.requests[2].(*structs.DeploymentStatusUpdateRequest).UpdatedAt; got != start.Add(2*time.Minute).UnixNano() {
			t.Errorf("success stamped %v", time.Unix(0, got))
		}
	})
}

func TestWatcherStopsOnLeadershipLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 2, rpb: 10 * time.Minute})
		stop := startWatcher(t, f)
		synctest.Wait()
		stop() // returns only once Run has returned
		f.setHealth("a2", false, time.Now())
		time.Sleep(time.Hour)
		synctest.Wait()
		wantWrites(t, f)
	})
}

func TestWatcherRestartFromState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 2, rpb: 10 * time.Minute})
		stop := startWatcher(t, f)
		time.Sleep(5 * time.Minute)
		stop() // the leader is lost before the deadline

		time.Sleep(25 * time.Minute) // the election takes a while
		stop = startWatcher(t, f)
		defer stop()
		synctest.Wait()
		wantWrites(t, f, "status failed: Failed due to progress deadline")
		req := f.requests[0].(*structs.DeploymentStatusUpdateRequest)
		if req.UpdatedAt != start.Add(30*time.Minute).UnixNano() {
			t.Errorf("failed at %v, want at once on the new leader", time.Unix(0, req.UpdatedAt))
		}
	})
}

func TestWatcherRetriesFailedWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 2, rpb: -time.Minute})
		f.failWrites = 2
		stop := startWatcher(t, f)
		defer stop()
		synctest.Wait()
		// One attempt, then it waits: no spinning on a failing write.
		wantWrites(t, f, "FAILED status failed: Failed due to progress deadline")
		time.Sleep(DefaultRetryInterval)
		synctest.Wait()
		time.Sleep(DefaultRetryInterval)
		synctest.Wait()
		wantWrites(t, f,
			"FAILED status failed: Failed due to progress deadline",
			"FAILED status failed: Failed due to progress deadline",
			"status failed: Failed due to progress deadline")
		if got := f.requests[0].(*structs.DeploymentStatusUpdateRequest).UpdatedAt; got != start.Add(2*time.Second).UnixNano() {
			t.Errorf("stamped %v", time.Unix(0, got))
		}
	})
}

func TestWatcherPromotesAndReplaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := seed(start, seedOpts{total: 3, canaries: 2, autoPromote: true, rpb: 10 * time.Minute})
		stop := startWatcher(t, f)
		defer stop()
		synctest.Wait()
		wantWrites(t, f)

		f.setHealth("c1", true, time.Now())
		synctest.Wait()
		wantWrites(t, f, "eval")

		time.Sleep(time.Minute)
		f.setHealth("c2", true, time.Now())
		synctest.Wait()
		wantWrites(t, f, "eval", "promote")
		req := f.requests[1].(*structs.DeploymentPromoteRequest)
		if !slices.Equal(req.Groups, []string{"web"}) || req.Eval == nil || !req.PromotedAt.Equal(start.Add(time.Minute)) {
			t.Errorf("promote request %+v", req)
		}
		if !f.deployment("d1").TaskGroups["web"].Promoted {
			t.Error("not promoted")
		}

		f.setHealth("c2", false, time.Now())
		synctest.Wait()
		wantWrites(t, f, "eval", "promote", "reschedule")
		rr := f.requests[2].(*structs.AllocUpdateDesiredTransitionRequest)
		if tr := rr.Allocs["c2"]; tr == nil || !tr.ShouldReschedule() || len(rr.Evals) != 1 {
			t.Errorf("reschedule request %+v", rr)
		}
	})
}

func TestNewWatcherErrors(t *testing.T) {
	f := newFakeStore()
	if _, err := NewWatcher(Config{Writer: f}); !errors.Is(err, ErrNoState) {
		t.Errorf("no state: %v", err)
	}
	if _, err := NewWatcher(Config{State: f}); !errors.Is(err, ErrNoWriter) {
		t.Errorf("no writer: %v", err)
	}
}
