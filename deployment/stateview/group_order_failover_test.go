package stateview

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/structs"
)

// setupGroupOrder registers job web (version 0 stable, then version 1)
// with groups api and web, group_order = ["api", "web"] and 5m between
// groups, and places g1 and g2 of version 1's group api in deployment dg,
// whose groups are api (1, rolling) and web (2, waiting), as the
// scheduler writes them.
func setupGroupOrder(t *testing.T, w *storeWriter) {
	t.Helper()
	setup(t, w, false)
	s := w.store()
	job := mustJob(t, w).Copy()
	api := job.TaskGroups[0].Copy()
	api.Name = "api"
	job.TaskGroups = append([]*structs.TaskGroup{api}, job.TaskGroups...)
	job.Update = &structs.UpdateStrategy{GroupOrder: []string{"api", "web"}, PauseBetweenGroups: 5 * time.Minute}
	job.Meta = map[string]string{"v": "2"}
	if _, err := s.RegisterJob(w.next("setup"), &structs.JobRegisterRequest{Job: job, SubmitTime: time.Now().UnixNano()}); err != nil {
		t.Fatal(err)
	}
	job = mustJob(t, w)
	d := &structs.Deployment{ID: "dg", Namespace: "default", JobID: "web", JobVersion: job.Version,
		JobCreateIndex: job.CreateIndex, Status: structs.DeploymentStatusRunning,
		StatusDescription: structs.DeploymentStatusDescriptionRunning,
		TaskGroups: map[string]*structs.DeploymentState{
			"api": {DesiredTotal: 2, ProgressDeadline: 10 * time.Minute, OnFailure: structs.OnFailurePause,
				Order: 1, State: structs.GroupStateRolling},
			"web": {DesiredTotal: 2, ProgressDeadline: 10 * time.Minute, OnFailure: structs.OnFailurePause,
				Order: 2, State: structs.GroupStateWaiting},
		}}
	var placed []*structs.Allocation
	for i, id := range []string{"g1", "g2"} {
		placed = append(placed, &structs.Allocation{ID: id, Namespace: "default", EvalID: "e2",
			Name: structs.AllocName("web", "api", i), JobID: "web", TaskGroup: "api", NodeID: "n1",
			DeploymentID: "dg", DesiredStatus: structs.AllocDesiredStatusRun,
			DeploymentStatus: &structs.AllocDeploymentStatus{}})
	}
	if err := s.ApplyPlanResults(w.next("setup"), &structs.ApplyPlanResultsRequest{EvalID: "e2", Job: job,
		AllocsPlaced: placed, Deployment: d, UpdatedAt: time.Now().UnixNano()}); err != nil {
		t.Fatal(err)
	}
}

// groupsOf returns dg's groups.
func groupsOf(t *testing.T, w *storeWriter) map[string]*structs.DeploymentState {
	t.Helper()
	d, err := w.store().Snapshot().DeploymentByID("dg")
	if err != nil || d == nil {
		t.Fatalf("deployment dg: %v", err)
	}
	return d.TaskGroups
}

// TestGroupOrderSurvivesFailover (C.7, C.10): each group's Order, State
// and DoneAt live in the replicated deployment; a new leader restored from
// a snapshot makes the same next decisions: the same wake for the next
// group, the same group started, the same pause when an earlier group no
// longer serves fully.
func TestGroupOrderSurvivesFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWriter(t)
		setupGroupOrder(t, w)
		stop := run(t, w)
		synctest.Wait()
		time.Sleep(time.Minute)
		doneAt := time.Now()
		w.reportHealth(t, "g1", true)
		w.reportHealth(t, "g2", true)
		synctest.Wait()
		stop()

		gs := groupsOf(t, w)
		if gs["api"].State != structs.GroupStateDone || !gs["api"].DoneAt.Equal(doneAt) || gs["web"].State != structs.GroupStateWaiting {
			t.Fatalf("api done at %v? api %+v web %+v; writes %q", doneAt, *gs["api"], *gs["web"], w.writes())
		}
		d, _ := w.store().Snapshot().DeploymentByID("dg")
		if want := structs.GroupWaitsDescription("web", "api"); d.StatusDescription != want {
			t.Fatalf("description %q, want %q", d.StatusDescription, want)
		}

		// During the pause between groups: nothing to write, the wake at
		// DoneAt + 5m.
		reqs, wake := sameNext(t, w, "between groups")
		if len(reqs) != 0 || !wake.Equal(doneAt.Add(5*time.Minute)) {
			t.Fatalf("between groups: writes %+v, wake %v", reqs, wake)
		}
		time.Sleep(time.Until(wake))
		reqs, _ = sameNext(t, w, "at the next group's start")
		if len(reqs) != 1 {
			t.Fatalf("at the next group's start: writes %+v", reqs)
		}
		req := reqs[0].(*structs.DeploymentStatusUpdateRequest)
		if got := req.DeploymentUpdate.GroupStates["web"]; got != structs.GroupStateRolling || req.Eval == nil {
			t.Fatalf("group web %q, eval %v", got, req.Eval)
		}

		// Had api lost an alloc before then, both leaders would pause the
		// same way.
		if err := w.store().UpdateAllocsFromClient(w.next("client"), &structs.AllocClientUpdateRequest{
			Allocs:    []*structs.Allocation{{ID: "g2", ClientStatus: structs.AllocClientStatusLost}},
			UpdatedAt: time.Now().UnixNano(),
		}); err != nil {
			t.Fatal(err)
		}
		reqs, _ = sameNext(t, w, "api lost an alloc")
		var paused *structs.DeploymentStatusUpdate
		for _, r := range reqs {
			if u, ok := r.(*structs.DeploymentStatusUpdateRequest); ok {
				paused = u.DeploymentUpdate
			}
		}
		want := structs.GroupServingPauseDescription("api", 1, 2, "web")
		if paused == nil || paused.Status != structs.DeploymentStatusPaused || paused.StatusDescription != want ||
			paused.GroupStates["api"] != structs.GroupStateFailed || paused.GroupStates["web"] != "" {
			t.Fatalf("api lost an alloc: writes %+v, want a pause %q", reqs, want)
		}
	})
}
