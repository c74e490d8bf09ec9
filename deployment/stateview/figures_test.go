package stateview

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/internal/memdbtest"
	"github.com/droverhq/drover/structs"
)

// watchAsWatcher reads what a watcher pass reads of deployment d1 when no
// allocation is unhealthy, into a new watch set.
func watchAsWatcher(t *testing.T, v *View) memdb.WatchSet {
	t.Helper()
	ws := memdb.NewWatchSet()
	d, err := v.DeploymentByID(ws, "d1")
	if err != nil || d == nil {
		t.Fatalf("deployment: %v %v", d, err)
	}
	if deployment.NeedsAllocs(d) {
		t.Fatal("allocations needed with none unhealthy")
	}
	for _, read := range []func() error{
		func() error { _, err := v.JobByID(ws, "default", "web"); return err },
		func() error { _, err := v.JobByIDAndVersion(ws, "default", "web", 1); return err },
		func() error { _, err := v.LatestStableJob(ws, "default", "web"); return err },
		func() error { _, err := v.PassEvals(ws, "default", "web"); return err },
	} {
		if err := read(); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// TestRunningReportsDoNotWakeWatcher: on the real store, reports that
// change no health (a client repeating "running" and its verdict) leave
// everything a watcher pass reads untouched; a new verdict does not.
func TestRunningReportsDoNotWakeWatcher(t *testing.T) {
	w := newWriter(t)
	setup(t, w, false)
	w.reportHealth(t, "a1", true)
	v := New(w.store)
	ws := watchAsWatcher(t, v)

	w.reportHealth(t, "a1", true)
	if err := w.s.UpdateAllocsFromClient(w.next("client"), &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{ID: "a2", ClientStatus: structs.AllocClientStatusRunning}}}); err != nil {
		t.Fatal(err)
	}
	if memdbtest.Fired(ws) {
		t.Fatal("a report with no news woke the watcher")
	}
	d, err := w.s.Snapshot().DeploymentByID("d1")
	if err != nil {
		t.Fatal(err)
	}
	if g := d.TaskGroups["web"]; g.LiveHealthyAllocs != 1 || d.HealthIndex == 0 {
		t.Fatalf("live figures %+v, health index %d", g, d.HealthIndex)
	}

	w.reportHealth(t, "a2", true)
	if !memdbtest.Fired(ws) {
		t.Fatal("a new healthy alloc did not wake the watcher")
	}
	ws = watchAsWatcher(t, v)
	w.reportHealth(t, "a2", false)
	if !memdbtest.Fired(ws) {
		t.Fatal("an alloc turning unhealthy did not wake the watcher")
	}
	if d, _ := w.s.Snapshot().DeploymentByID("d1"); !deployment.NeedsAllocs(d) {
		t.Fatal("an unhealthy alloc does not call for reading the allocations")
	}
}
