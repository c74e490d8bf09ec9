package stateview

import (
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/structs"
)

// setupZones registers job web (version 0 stable, then version 1) whose
// group rolls out zone by zone with a disruption budget of 1 and 5m
// between zones, and places a1 and a2 of version 1 in zone a of
// deployment d1, whose zones are a (rolling) and b (waiting), as the
// scheduler writes them.
func setupZones(t *testing.T, w *storeWriter) {
	t.Helper()
	budget := structs.Amount{Value: 1}
	setupWith(t, w, false, func(tg *structs.TaskGroup) {
		tg.Count = 4
		tg.Update.OnFailure = structs.OnFailurePause
		tg.Update.Zones = &structs.ZoneStrategy{Attribute: "${meta.zone}", Mode: structs.ZoneModeByZone,
			DisruptionBudget: &budget, PauseBetweenZones: 5 * time.Minute}
	})
	s := w.store()
	d, err := s.Snapshot().DeploymentByID("d1")
	if err != nil || d == nil {
		t.Fatalf("deployment d1: %v", err)
	}
	job, err := s.Snapshot().JobByID("default", "web")
	if err != nil {
		t.Fatal(err)
	}
	// setupWith's deployment has no zones and places a1 and a2 without
	// one: this one is the deployment the scheduler writes for zones.
	c := d.Copy()
	c.ID = "dz"
	c.TaskGroups["web"].DesiredTotal = 4
	c.TaskGroups["web"].Zones = []*structs.ZoneState{
		{Name: "a", Size: 2, State: structs.ZoneStateRolling},
		{Name: "b", Size: 2, State: structs.ZoneStateWaiting},
	}
	if err := s.UpdateDeploymentStatus(w.next("setup"), &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "d1", Status: structs.DeploymentStatusCancelled},
		UpdatedAt:        time.Now().UnixNano(),
	}); err != nil {
		t.Fatal(err)
	}
	var placed []*structs.Allocation
	for i, id := range []string{"za1", "za2"} {
		placed = append(placed, &structs.Allocation{ID: id, Namespace: "default", EvalID: "e1",
			Name: structs.AllocName("web", "web", i), JobID: "web", TaskGroup: "web", NodeID: "n1", Zone: "a",
			DeploymentID: "dz", DesiredStatus: structs.AllocDesiredStatusRun,
			DeploymentStatus: &structs.AllocDeploymentStatus{}})
	}
	if err := s.ApplyPlanResults(w.next("setup"), &structs.ApplyPlanResultsRequest{EvalID: "e1", Job: job,
		AllocsPlaced: placed, Deployment: c, UpdatedAt: time.Now().UnixNano()}); err != nil {
		t.Fatal(err)
	}
}

// sameNext fails unless a leader on old and one restored from it would
// make the same next writes and wake at the same time; it returns them.
func sameNext(t *testing.T, w *storeWriter, at string) ([]any, time.Time) {
	t.Helper()
	old := w.store()
	fresh := restored(t, old)
	reqsOld, wakeOld := nextDecision(t, old)
	reqsNew, wakeNew := nextDecision(t, fresh)
	if !reflect.DeepEqual(reqsOld, reqsNew) || !wakeOld.Equal(wakeNew) {
		t.Fatalf("%s: old leader would write %+v and wake at %v; new leader %+v at %v", at, reqsOld, wakeOld, reqsNew, wakeNew)
	}
	return reqsNew, wakeNew
}

// zonesOf returns the zones of dz's group web.
func zonesOf(t *testing.T, w *storeWriter) []*structs.ZoneState {
	t.Helper()
	d, err := w.store().Snapshot().DeploymentByID("dz")
	if err != nil || d == nil {
		t.Fatalf("deployment dz: %v", err)
	}
	return d.TaskGroups["web"].Zones
}

// TestZonesSurviveFailover (C.7): the zone order, each zone's state, the
// time it reached its threshold and its failures live in the replicated
// deployment; a new leader restored from a snapshot makes the same next
// decisions: the same wake for the next zone, the same zone started, the
// same budget pause, the same resume.
func TestZonesSurviveFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWriter(t)
		setupZones(t, w)
		stop := run(t, w)
		synctest.Wait()
		time.Sleep(time.Minute)
		doneAt := time.Now()
		w.reportHealth(t, "za1", true)
		w.reportHealth(t, "za2", true)
		synctest.Wait()
		stop()

		zs := zonesOf(t, w)
		if zs[0].State != structs.ZoneStateDone || !zs[0].DoneAt.Equal(doneAt) || zs[1].State != structs.ZoneStateWaiting {
			t.Fatalf("zone a done at %v? zones %+v %+v; writes %q", doneAt, *zs[0], *zs[1], w.writes())
		}

		// During the pause between zones: nothing to write, the wake at
		// DoneAt + 5m.
		reqs, wake := sameNext(t, w, "between zones")
		if len(reqs) != 0 || !wake.Equal(doneAt.Add(5*time.Minute)) {
			t.Fatalf("between zones: writes %+v, wake %v", reqs, wake)
		}
		time.Sleep(time.Until(wake))
		reqs, _ = sameNext(t, w, "at the next zone's start")
		if len(reqs) != 1 {
			t.Fatalf("at the next zone's start: writes %+v", reqs)
		}
		req := reqs[0].(*structs.DeploymentStatusUpdateRequest)
		if got := req.DeploymentUpdate.ZoneStates["web"]["b"]; got != structs.ZoneStateRolling || req.Eval == nil {
			t.Fatalf("zone b %q, eval %v", got, req.Eval)
		}

		// The leader writes it; a replacement in b fails: the budget of 1
		// pauses the deployment.
		stop = run(t, w)
		synctest.Wait()
		if err := w.store().ApplyPlanResults(w.next("plan"), &structs.ApplyPlanResultsRequest{EvalID: "e2",
			AllocsPlaced: []*structs.Allocation{{ID: "zb1", Namespace: "default", EvalID: "e2",
				Name: structs.AllocName("web", "web", 2), JobID: "web", TaskGroup: "web", NodeID: "n2", Zone: "b",
				DeploymentID: "dz", DesiredStatus: structs.AllocDesiredStatusRun, NextAllocation: "zb1-next",
				DeploymentStatus: &structs.AllocDeploymentStatus{}}},
			Job: mustJob(t, w), UpdatedAt: time.Now().UnixNano()}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		w.reportHealth(t, "zb1", false)
		synctest.Wait()
		stop()
		d, _ := w.store().Snapshot().DeploymentByID("dz")
		if want := structs.ZoneBudgetPauseDescription(1, "b", 1); d.Status != structs.DeploymentStatusPaused || d.StatusDescription != want {
			t.Fatalf("after zb1 failed: %s %q, want paused %q; writes %q", d.Status, d.StatusDescription, want, w.writes())
		}
		if zs = zonesOf(t, w); zs[1].State != structs.ZoneStateFailed || zs[1].Failed != 1 {
			t.Fatalf("zone b %+v", *zs[1])
		}
		if reqs, _ = sameNext(t, w, "paused on the budget"); len(reqs) != 0 {
			t.Fatalf("paused on the budget: writes %+v", reqs)
		}

		// An operator resumes: zone b rolls again with its failure
		// cleared, and no leader pauses again on it.
		resumed, err := deployment.Pause(d, false, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		u := &structs.DeploymentStatusUpdate{DeploymentID: "dz", Status: resumed.Status, StatusDescription: resumed.StatusDescription}
		u.ZoneStates, u.ZoneFailedReset = deployment.ResumedZones(d)
		if err := w.store().UpdateDeploymentStatus(w.next("resume"), &structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: u, UpdatedAt: time.Now().UnixNano()}); err != nil {
			t.Fatal(err)
		}
		if zs = zonesOf(t, w); zs[1].State != structs.ZoneStateRolling || zs[1].Failed != 0 {
			t.Fatalf("resumed zone b %+v", *zs[1])
		}
		if !reflect.DeepEqual(zs, resumed.TaskGroups["web"].Zones) {
			t.Fatalf("the store's zones %+v, the verb's %+v", zs, resumed.TaskGroups["web"].Zones)
		}
		for _, r := range func() []any { r, _ := sameNext(t, w, "resumed"); return r }() {
			if u, ok := r.(*structs.DeploymentStatusUpdateRequest); ok && !waitReasonOnly(u, resumed) {
				t.Fatalf("resumed: the status changed again: %+v", u.DeploymentUpdate)
			}
		}
	})
}

func mustJob(t *testing.T, w *storeWriter) *structs.Job {
	t.Helper()
	j, err := w.store().Snapshot().JobByID("default", "web")
	if err != nil || j == nil {
		t.Fatalf("job: %v", err)
	}
	return j
}
