package stateview

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// storeWriter applies the watcher's writes to a real store, one raft index
// per write, as the FSM would.
type storeWriter struct {
	mu    sync.Mutex
	s     *state.Store
	index uint64
	log   []string
}

func (w *storeWriter) next(what string) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.index++
	w.log = append(w.log, what)
	return w.index
}

func (w *storeWriter) store() *state.Store {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.s
}

func (w *storeWriter) writes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.log...)
}

func (w *storeWriter) UpdateDeploymentStatus(_ context.Context, req *structs.DeploymentStatusUpdateRequest) error {
	return w.store().UpdateDeploymentStatus(w.next("status "+req.DeploymentUpdate.Status), req)
}

func (w *storeWriter) PromoteDeployment(_ context.Context, req *structs.DeploymentPromoteRequest) error {
	return w.store().PromoteDeployment(w.next("promote"), req)
}

func (w *storeWriter) UpdateJobStability(_ context.Context, req *structs.JobStabilityRequest) error {
	return w.store().SetJobStability(w.next("stable"), req)
}

// UpdateAllocDesiredTransition has no store message yet; the test applies
// it as an alloc upsert followed by the evals.
func (w *storeWriter) UpdateAllocDesiredTransition(_ context.Context, req *structs.AllocUpdateDesiredTransitionRequest) error {
	var allocs []*structs.Allocation
	for id, tr := range req.Allocs {
		a, err := w.store().Snapshot().AllocByID(id)
		if err != nil || a == nil {
			return fmt.Errorf("alloc %s: %v", id, err)
		}
		c := a.Copy()
		c.DesiredTransition = *tr
		allocs = append(allocs, c)
	}
	if err := w.store().UpsertAllocs(w.next("reschedule"), allocs, req.UpdatedAt); err != nil {
		return err
	}
	return w.store().UpsertEvals(w.next("eval"), req.Evals)
}

func (w *storeWriter) UpsertEvals(_ context.Context, req *structs.EvalUpdateRequest) error {
	return w.store().UpsertEvals(w.next("eval"), req.Evals)
}

func (w *storeWriter) UpdateDeploymentAnalysis(_ context.Context, req *structs.DeploymentAnalysisRequest) error {
	return w.store().UpdateDeploymentAnalysis(w.next("analysis runs"), req)
}

func (w *storeWriter) RecordAnalysisMeasurement(_ context.Context, req *structs.DeploymentAnalysisRequest) error {
	return w.store().UpdateDeploymentAnalysis(w.next("analysis measurement"), req)
}

// setup registers job web version 0 (stable) and version 1, and places
// two allocs of version 1 in deployment d1 at now.
func setup(t *testing.T, w *storeWriter, autoRevert bool) {
	t.Helper()
	setupWith(t, w, autoRevert, nil)
}

// setupWith is setup with the job's group changed by upd, if set.
func setupWith(t *testing.T, w *storeWriter, autoRevert bool, upd func(*structs.TaskGroup)) {
	t.Helper()
	s := w.s
	now := time.Now()
	v0 := &structs.Job{ID: "web", Namespace: "default", Type: structs.JobTypeService, Priority: 50,
		Meta: map[string]string{"v": "0"},
		TaskGroups: []*structs.TaskGroup{{Name: "web", Count: 2, Update: structs.DefaultUpdateStrategy(),
			ReschedulePolicy: structs.DefaultReschedulePolicy(structs.JobTypeService)}}}
	if upd != nil {
		upd(v0.TaskGroups[0])
	}
	eval := func(id string) *structs.Evaluation {
		return &structs.Evaluation{ID: id, Namespace: "default", JobID: "web", Status: structs.EvalStatusComplete}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.RegisterJob(w.next("setup"), &structs.JobRegisterRequest{Job: v0, Eval: eval("e0"), SubmitTime: now.UnixNano()})
	must(err)
	must(s.SetJobStability(w.next("setup"), &structs.JobStabilityRequest{Namespace: "default", JobID: "web", JobVersion: 0, Stable: true}))
	v1 := v0.Copy()
	v1.Meta = map[string]string{"v": "1"}
	_, err = s.RegisterJob(w.next("setup"), &structs.JobRegisterRequest{Job: v1, Eval: eval("e1"), SubmitTime: now.UnixNano()})
	must(err)
	cur, err := s.Snapshot().JobByID("default", "web")
	must(err)
	if cur.Version != 1 {
		t.Fatalf("job version %d", cur.Version)
	}
	d := &structs.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobVersion: 1,
		JobCreateIndex: cur.CreateIndex, Status: structs.DeploymentStatusRunning,
		StatusDescription: structs.DeploymentStatusDescriptionRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 2, AutoRevert: autoRevert,
			ProgressDeadline: 10 * time.Minute}}}
	var placed []*structs.Allocation
	for i, id := range []string{"a1", "a2"} {
		placed = append(placed, &structs.Allocation{ID: id, Namespace: "default", EvalID: "e1",
			Name: structs.AllocName("web", "web", i), JobID: "web", TaskGroup: "web", NodeID: "n1",
			DeploymentID: "d1", DesiredStatus: structs.AllocDesiredStatusRun,
			DeploymentStatus: &structs.AllocDeploymentStatus{}})
	}
	must(s.ApplyPlanResults(w.next("setup"), &structs.ApplyPlanResultsRequest{EvalID: "e1", Job: cur,
		AllocsPlaced: placed, Deployment: d, UpdatedAt: now.UnixNano()}))
}

func (w *storeWriter) reportHealth(t *testing.T, id string, healthy bool) {
	t.Helper()
	err := w.s.UpdateAllocsFromClient(w.next("client"), &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{ID: id, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy}}},
		UpdatedAt: time.Now().UnixNano(),
	})
	if err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, w *storeWriter) (stop func()) {
	watcher, err := deployment.NewWatcher(deployment.Config{
		State: New(w.store), Writer: w,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- watcher.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func newWriter(t *testing.T) *storeWriter {
	s, err := state.New()
	if err != nil {
		t.Fatal(err)
	}
	return &storeWriter{s: s}
}

// TestRolloutSucceedsOnRealStore drives a rollout through the real store:
// each healthy alloc triggers a pass; all healthy, the deployment succeeds
// and the version becomes stable.
func TestRolloutSucceedsOnRealStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWriter(t)
		setup(t, w, false)
		stop := run(t, w)
		defer stop()
		synctest.Wait()

		time.Sleep(time.Minute)
		w.reportHealth(t, "a1", true)
		synctest.Wait()
		time.Sleep(time.Minute)
		w.reportHealth(t, "a2", true)
		synctest.Wait()

		snap := w.s.Snapshot()
		d, _ := snap.DeploymentByID("d1")
		if d.Status != structs.DeploymentStatusSuccessful {
			t.Fatalf("deployment %s %q; writes %q", d.Status, d.StatusDescription, w.writes())
		}
		v1, _ := snap.JobByIDAndVersion("default", "web", 1)
		if !v1.Stable {
			t.Error("version 1 not stable")
		}
		evals, _ := snap.EvalsByJob("default", "web")
		watcherEvals := 0
		for _, e := range evals {
			if e.TriggeredBy == structs.EvalTriggerDeploymentWatcher {
				watcherEvals++
			}
		}
		if watcherEvals != 1 {
			t.Errorf("%d watcher evals, want 1 (for the first healthy alloc); writes %q", watcherEvals, w.writes())
		}
	})
}

// TestDeadlineRevertsOnRealStore: nothing becomes healthy; at the progress
// deadline the deployment fails and version 0 is registered again as
// version 2, in one write.
func TestDeadlineRevertsOnRealStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWriter(t)
		start := time.Now()
		setup(t, w, true)
		stop := run(t, w)
		defer stop()

		time.Sleep(10*time.Minute - time.Nanosecond)
		synctest.Wait()
		if d, _ := w.s.Snapshot().DeploymentByID("d1"); d.Status != structs.DeploymentStatusRunning {
			t.Fatalf("failed early: %s", d.StatusDescription)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()

		snap := w.s.Snapshot()
		d, _ := snap.DeploymentByID("d1")
		want := structs.DeploymentStatusDescriptionRollback(structs.DeploymentStatusDescriptionProgressDeadline, 0)
		if d.Status != structs.DeploymentStatusFailed || d.StatusDescription != want {
			t.Fatalf("deployment %s %q", d.Status, d.StatusDescription)
		}
		if d.ModifyTime != start.Add(10*time.Minute).UnixNano() {
			t.Errorf("failed at %v", time.Unix(0, d.ModifyTime))
		}
		job, _ := snap.JobByID("default", "web")
		if job.Version != 2 || job.Meta["v"] != "0" {
			t.Errorf("current job version %d meta %v, want version 2 with version 0's spec", job.Version, job.Meta)
		}
	})
}

// TestRestoreWakesWatcher: swapping the store (as a snapshot restore does)
// wakes the watcher, which then reads the new store.
func TestRestoreWakesWatcher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWriter(t)
		setup(t, w, false)
		stop := run(t, w)
		defer stop()
		synctest.Wait()

		fresh := newWriter(t)
		setup(t, fresh, false)
		fresh.reportHealth(t, "a1", true)
		fresh.reportHealth(t, "a2", true)
		old := w.s
		w.mu.Lock()
		w.s = fresh.s
		w.index = fresh.index
		w.mu.Unlock()
		old.Abandon()
		synctest.Wait()

		if d, _ := fresh.s.Snapshot().DeploymentByID("d1"); d.Status != structs.DeploymentStatusSuccessful {
			t.Fatalf("after restore: %s %q", d.Status, d.StatusDescription)
		}
	})
}
