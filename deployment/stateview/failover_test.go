package stateview

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// recorder is a Writer that keeps the requests and applies none.
type recorder struct {
	mu   sync.Mutex
	reqs []any
}

func (r *recorder) add(req any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	return nil
}

func (r *recorder) UpdateDeploymentStatus(_ context.Context, req *structs.DeploymentStatusUpdateRequest) error {
	return r.add(req)
}

func (r *recorder) PromoteDeployment(_ context.Context, req *structs.DeploymentPromoteRequest) error {
	return r.add(req)
}

func (r *recorder) UpdateJobStability(_ context.Context, req *structs.JobStabilityRequest) error {
	return r.add(req)
}

func (r *recorder) UpdateAllocDesiredTransition(_ context.Context, req *structs.AllocUpdateDesiredTransitionRequest) error {
	return r.add(req)
}

func (r *recorder) UpsertEvals(_ context.Context, req *structs.EvalUpdateRequest) error {
	return r.add(req)
}

func (r *recorder) UpdateDeploymentAnalysis(_ context.Context, req *structs.DeploymentAnalysisRequest) error {
	return r.add(req)
}

func (r *recorder) RecordAnalysisMeasurement(_ context.Context, req *structs.DeploymentAnalysisRequest) error {
	return r.add(req)
}

// restored returns a new store filled from a snapshot of src, table by
// table, as a snapshot restore on a new leader fills one.
func restored(t *testing.T, src *state.Store) *state.Store {
	t.Helper()
	dst, err := state.New()
	if err != nil {
		t.Fatal(err)
	}
	r := dst.Restorer()
	snap := src.Snapshot()
	for _, table := range state.Tables {
		if err := snap.Each(table, func(obj any) error { return r.Insert(table, obj) }); err != nil {
			t.Fatal(err)
		}
	}
	r.Commit()
	return dst
}

// nextDecision makes one watcher pass over s at the current (bubble) time
// and returns what it would write and when it would look again.
func nextDecision(t *testing.T, s *state.Store) ([]any, time.Time) {
	t.Helper()
	rec := &recorder{}
	w, err := deployment.NewWatcher(deployment.Config{State: New(func() *state.Store { return s }), Writer: rec,
		NewID: func() string { return "eval-next" }})
	if err != nil {
		t.Fatal(err)
	}
	wake := w.RunOnce(t.Context())
	return rec.reqs, wake
}

// TestCheckpointDelaySurvivesFailover: the leader pauses at a checkpoint
// with a delay; a new leader restored from a snapshot makes the same next
// decisions from replicated state alone, and resumes at exactly ResumeAt.
func TestCheckpointDelaySurvivesFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWriter(t)
		start := time.Now()
		setupWith(t, w, false, func(tg *structs.TaskGroup) {
			tg.Update.Checkpoints = []structs.Amount{{Value: 50, Percent: true}}
			tg.Update.CheckpointDelay = 5 * time.Minute
		})
		stop := run(t, w)
		synctest.Wait()
		time.Sleep(time.Minute)
		w.reportHealth(t, "a1", true)
		synctest.Wait()
		stop()

		old := w.store()
		d, _ := old.Snapshot().DeploymentByID("d1")
		resumeAt := start.Add(6 * time.Minute)
		if d.Status != structs.DeploymentStatusPaused || !d.ResumeAt.Equal(resumeAt) || d.TaskGroups["web"].CheckpointsReached != 1 {
			t.Fatalf("old leader left %s %q ResumeAt %v; writes %q", d.Status, d.StatusDescription, d.ResumeAt, w.writes())
		}
		if want := structs.CheckpointDescription("50%", "web", 1, 2); d.StatusDescription != want {
			t.Fatalf("description %q, want %q", d.StatusDescription, want)
		}

		fresh := restored(t, old)
		time.Sleep(2 * time.Minute)
		for _, at := range []string{"during the delay", "at ResumeAt"} {
			reqsOld, wakeOld := nextDecision(t, old)
			reqsNew, wakeNew := nextDecision(t, fresh)
			if !reflect.DeepEqual(reqsOld, reqsNew) || !wakeOld.Equal(wakeNew) {
				t.Fatalf("%s: old leader would write %+v and wake at %v; new leader %+v at %v", at, reqsOld, wakeOld, reqsNew, wakeNew)
			}
			switch at {
			case "during the delay":
				if len(reqsNew) != 0 || !wakeNew.Equal(resumeAt) {
					t.Fatalf("during the delay: writes %+v, wake %v (want none, at %v)", reqsNew, wakeNew, resumeAt)
				}
				time.Sleep(time.Until(resumeAt))
			case "at ResumeAt":
				if len(reqsNew) != 1 {
					t.Fatalf("at ResumeAt: writes %+v", reqsNew)
				}
				req := reqsNew[0].(*structs.DeploymentStatusUpdateRequest)
				if req.DeploymentUpdate.Status != structs.DeploymentStatusRunning || req.UpdatedAt != resumeAt.UnixNano() || req.Eval == nil {
					t.Fatalf("at ResumeAt: %+v", req)
				}
			}
		}
	})
}

// TestFailurePauseSurvivesFailover: paused on a failure and resumed, the
// failure count lives in the deployment, so a new leader does not pause
// again on the same failure.
func TestFailurePauseSurvivesFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWriter(t)
		setupWith(t, w, false, func(tg *structs.TaskGroup) {
			// No reschedule attempts: part A fails at the first
			// unhealthy alloc; this group pauses instead.
			tg.ReschedulePolicy = nil
			tg.Update.OnFailure = structs.OnFailurePause
		})
		stop := run(t, w)
		synctest.Wait()
		time.Sleep(time.Minute)
		w.reportHealth(t, "a1", false)
		synctest.Wait()
		stop()

		old := w.store()
		d, _ := old.Snapshot().DeploymentByID("d1")
		if d.Status != structs.DeploymentStatusPaused || d.StatusDescription != structs.DeploymentStatusDescriptionPausedAllocations ||
			d.TaskGroups["web"].FailuresAtPause != 1 {
			t.Fatalf("old leader left %s %q %+v; writes %q", d.Status, d.StatusDescription, d.TaskGroups["web"], w.writes())
		}
		resumed, err := deployment.Pause(d, false, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := old.UpdateDeploymentStatus(w.next("resume"), &structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "d1", Status: resumed.Status, StatusDescription: resumed.StatusDescription},
			UpdatedAt:        time.Now().UnixNano(),
		}); err != nil {
			t.Fatal(err)
		}

		fresh := restored(t, old)
		reqsOld, wakeOld := nextDecision(t, old)
		reqsNew, wakeNew := nextDecision(t, fresh)
		if !reflect.DeepEqual(reqsOld, reqsNew) || !wakeOld.Equal(wakeNew) {
			t.Fatalf("old leader would write %+v, new leader %+v", reqsOld, reqsNew)
		}
		for _, r := range reqsNew {
			if u, ok := r.(*structs.DeploymentStatusUpdateRequest); ok && !waitReasonOnly(u, resumed) {
				t.Fatalf("new leader changed the status again: %+v", u.DeploymentUpdate)
			}
		}
	})
}

// waitReasonOnly reports whether a status update leaves d's status and
// description as they are and sets only wait reasons: the sentence of a
// resumed group (deployment.withWaitReasons), no new pause.
func waitReasonOnly(r *structs.DeploymentStatusUpdateRequest, d *structs.Deployment) bool {
	u := r.DeploymentUpdate
	return len(u.WaitReasons) > 0 && u.Status == d.Status && u.StatusDescription == d.StatusDescription &&
		len(u.CheckpointsReached)+len(u.AllPlaced)+len(u.FailuresAtPause)+len(u.GroupStates)+len(u.GroupDoneAt)+
			len(u.ZoneStates)+len(u.ZoneDoneAt)+len(u.ZoneFailedReset) == 0 && u.ResumeAt.IsZero() && r.Job == nil
}
