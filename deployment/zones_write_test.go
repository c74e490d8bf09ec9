package deployment

import (
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// A decision's zone transitions ride in one status update; a zone that
// starts brings the evaluation with it; beside a promotion, the update
// carries the description the promotion leaves.
func TestWriteZoneTransitions(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := seed(start, seedOpts{total: 2, canaries: 1, autoPromote: true, rpb: 10 * time.Minute})
	f.deps["d1"].TaskGroups["web"].Zones = []*structs.ZoneState{
		{Name: "a", Size: 1, State: structs.ZoneStateRolling},
		{Name: "b", Size: 1, State: structs.ZoneStateWaiting},
	}
	d := f.deployment("d1")
	w, err := NewWatcher(Config{State: f, Writer: f, NewID: func() string { return "eval-z" }})
	if err != nil {
		t.Fatal(err)
	}
	obs := Observation{Deployment: d, Now: start.Add(time.Minute)}
	dec := Decision{Promote: true, PromoteGroups: []string{"web"}, CreateEval: true,
		StatusDescription: structs.DeploymentStatusDescriptionRunning,
		ZoneStates:        map[string]map[string]string{"web": {"b": structs.ZoneStateRolling}},
		ZoneDoneAt:        map[string]map[string]time.Time{"web": {"a": obs.Now}}}
	if err := w.write(t.Context(), obs, dec); err != nil {
		t.Fatal(err)
	}
	wantWrites(t, f, "promote", "status running: "+structs.DeploymentStatusDescriptionRunning)
	req := f.requests[1].(*structs.DeploymentStatusUpdateRequest)
	u := req.DeploymentUpdate
	if u.ZoneStates["web"]["b"] != structs.ZoneStateRolling || !u.ZoneDoneAt["web"]["a"].Equal(obs.Now) || req.UpdatedAt != obs.Now.UnixNano() {
		t.Fatalf("status update %+v", u)
	}
	if f.requests[0].(*structs.DeploymentPromoteRequest).Eval == nil {
		t.Fatal("the evaluation does not ride with the first write")
	}
	got := f.deployment("d1").TaskGroups["web"]
	if got.Zone("b").State != structs.ZoneStateRolling || !got.Zone("a").DoneAt.Equal(obs.Now) {
		t.Fatalf("zones after the write: %+v %+v", *got.Zone("a"), *got.Zone("b"))
	}
}
