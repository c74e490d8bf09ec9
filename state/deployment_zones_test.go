package state

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// zoned places, with a new deployment whose group web rolls out by zones
// a (size 3) and b (size 2), allocs in the zones named (one each; "c" is a
// zone the group does not list), and returns the deployment and allocs.
func zoned(t *testing.T, s *Store, zones ...string) (*structs.Deployment, []*structs.Allocation) {
	t.Helper()
	job := registerJob(t, s, 1, statetest.Job("web", 5))
	dep := statetest.Deployment(job, 0)
	dep.TaskGroups["web"].Zones = []*structs.ZoneState{
		{Name: "a", Size: 3, State: structs.ZoneStateRolling},
		{Name: "b", Size: 2, State: structs.ZoneStateWaiting},
	}
	n := statetest.Node("n")
	var allocs []*structs.Allocation
	for i, z := range zones {
		a := statetest.Alloc(job, n, "e", dep.ID, i)
		a.Zone = z
		allocs = append(allocs, a)
	}
	must(t, s.ApplyPlanResults(2, &structs.ApplyPlanResultsRequest{
		Deployment: dep, AllocsPlaced: allocs, UpdatedAt: statetest.T0.UnixNano(),
	}))
	return dep, allocs
}

// zoneLine prints a group's zones: "a=3/h1/i1/f0/rolling b=...".
func zoneLine(t *testing.T, s *Store, depID string) string {
	t.Helper()
	d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(depID))
	var parts []string
	for _, z := range d.TaskGroups["web"].Zones {
		p := fmt.Sprintf("%s=%d/h%d/i%d/f%d/%s", z.Name, z.Size, z.Healthy, z.InFlight, z.Failed, z.State)
		if !z.DoneAt.IsZero() {
			p += "@" + z.DoneAt.Sub(statetest.T0).String()
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

func report(t *testing.T, s *Store, index uint64, allocs ...*structs.Allocation) {
	t.Helper()
	must(t, s.UpdateAllocsFromClient(index, &structs.AllocClientUpdateRequest{Allocs: allocs, UpdatedAt: statetest.T0.UnixNano()}))
}

func failed(id string) *structs.Allocation {
	return &structs.Allocation{ID: id, ClientStatus: structs.AllocClientStatusFailed}
}

// The zone figures follow the allocs in the transactions that write them:
// Healthy and InFlight count the live new allocs of each zone healthy and
// of unknown health; Failed counts the first unhealthy verdicts and the
// failures after a healthy one (as UnhealthyAllocs), once each.
func TestZoneFigures(t *testing.T) {
	s := newStore(t)
	dep, allocs := zoned(t, s, "a", "a", "a", "b", "c")
	a0, a1, a2, b0, c0 := allocs[0].ID, allocs[1].ID, allocs[2].ID, allocs[3].ID, allocs[4].ID
	step := func(what, want string) {
		t.Helper()
		if got := zoneLine(t, s, dep.ID); got != want {
			t.Fatalf("%s: zones %s, want %s", what, got, want)
		}
	}
	step("placed", "a=3/h0/i3/f0/rolling b=2/h0/i1/f0/waiting")

	// A running report moves no figure and writes no deployment.
	before := get[uint64](t)(s.Snapshot().Index(TableDeployments))
	report(t, s, 3, &structs.Allocation{ID: a0, ClientStatus: structs.AllocClientStatusRunning})
	if after := get[uint64](t)(s.Snapshot().Index(TableDeployments)); after != before {
		t.Fatalf("a running report wrote the deployment (index %d to %d)", before, after)
	}

	report(t, s, 4, health(a0, true, statetest.T0), health(a1, false, statetest.T0), health(c0, false, statetest.T0))
	step("a0 healthy, a1 unhealthy", "a=3/h1/i1/f1/rolling b=2/h0/i1/f0/waiting")

	// A healthy alloc that fails is a failure too, counted once however
	// often the client says so; it leaves the healthy ones.
	report(t, s, 5, failed(a0))
	report(t, s, 6, failed(a0))
	step("a0 failed after healthy", "a=3/h0/i1/f2/rolling b=2/h0/i1/f0/waiting")

	// An unhealthy alloc that then fails is not counted again.
	report(t, s, 7, failed(a1))
	step("a1 failed after unhealthy", "a=3/h0/i1/f2/rolling b=2/h0/i1/f0/waiting")

	// Stopped by a plan, an alloc in flight leaves the zone's figures.
	must(t, s.ApplyPlanResults(8, &structs.ApplyPlanResultsRequest{UpdatedAt: statetest.T0.UnixNano(),
		AllocsStopped: []*structs.AllocStopUpdate{{AllocID: a2, DesiredDescription: structs.AllocUpdating}}}))
	step("a2 stopped", "a=3/h0/i0/f2/rolling b=2/h0/i1/f0/waiting")

	// An operator's verdict counts as a client's.
	must(t, s.SetAllocHealth(9, &structs.DeploymentAllocHealthRequest{DeploymentID: dep.ID,
		UnhealthyAllocationIDs: []string{b0}, Timestamp: statetest.T0}))
	step("b0 marked unhealthy", "a=3/h0/i0/f2/rolling b=2/h0/i0/f1/waiting")
	checkFigures(t, s, 0, "zones")
}

// A plan made from an older snapshot carries the zones as the scheduler
// first wrote them: the store keeps its figures, states and DoneAt. A
// group new to the deployment takes its zones from the plan, with figures
// counted from its allocs.
func TestStalePlanKeepsZones(t *testing.T) {
	s := newStore(t)
	dep, allocs := zoned(t, s, "a", "a", "b")
	report(t, s, 3, health(allocs[0].ID, true, statetest.T0), health(allocs[1].ID, false, statetest.T0))
	done := statetest.T0.Add(time.Minute)
	req := statusReq(dep.ID, structs.DeploymentStatusRunning, structs.DeploymentStatusDescriptionRunning, done)
	req.DeploymentUpdate.ZoneStates = map[string]map[string]string{"web": {"b": structs.ZoneStateRolling}}
	req.DeploymentUpdate.ZoneDoneAt = map[string]map[string]time.Time{"web": {"a": done}}
	must(t, s.UpdateDeploymentStatus(4, req))
	want := "a=3/h1/i0/f1/rolling@1m0s b=2/h0/i1/f0/rolling"
	if got := zoneLine(t, s, dep.ID); got != want {
		t.Fatalf("before the stale plan: %s, want %s", got, want)
	}

	stale := dep.Copy()
	stale.TaskGroups["web"].Zones = []*structs.ZoneState{
		{Name: "a", Size: 9, State: structs.ZoneStateWaiting, Healthy: 7, InFlight: 7, Failed: 0},
		{Name: "x", Size: 1, State: structs.ZoneStateRolling},
	}
	job := get[*structs.Job](t)(s.Snapshot().JobByID("default", "web"))
	api := statetest.Alloc(job, statetest.Node("n"), "e", dep.ID, 9)
	api.ID, api.TaskGroup, api.Zone = statetest.ID("api-0"), "api", "z"
	stale.TaskGroups["api"] = &structs.DeploymentState{DesiredTotal: 1, Zones: []*structs.ZoneState{
		{Name: "z", Size: 1, State: structs.ZoneStateRolling, Healthy: 5, InFlight: 5, Failed: 5, DoneAt: done},
	}}
	must(t, s.ApplyPlanResults(5, &structs.ApplyPlanResultsRequest{Deployment: stale, AllocsPlaced: []*structs.Allocation{api},
		UpdatedAt: statetest.T0.UnixNano()}))
	if got := zoneLine(t, s, dep.ID); got != want {
		t.Fatalf("after the stale plan: %s, want %s", got, want)
	}
	d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID))
	z := d.TaskGroups["api"].Zones[0]
	if *z != (structs.ZoneState{Name: "z", Size: 1, State: structs.ZoneStateRolling, InFlight: 1}) {
		t.Fatalf("new group's zone %+v", *z)
	}
	checkFigures(t, s, 0, "stale plan")
}

// A status update sets the zones' states and DoneAt it names, and clears
// the failures of the zones a resume resets; unknown groups and zones are
// ignored. A restored store holds the same zones.
func TestZoneStatusUpdates(t *testing.T) {
	s := newStore(t)
	dep, allocs := zoned(t, s, "a", "a", "b")
	report(t, s, 3, health(allocs[0].ID, false, statetest.T0), health(allocs[1].ID, false, statetest.T0))
	at := statetest.T0.Add(2 * time.Minute)
	req := statusReq(dep.ID, structs.DeploymentStatusPaused,
		structs.ZoneBudgetPauseDescription(2, "a", 2), at)
	req.DeploymentUpdate.ZoneStates = map[string]map[string]string{
		"web": {"a": structs.ZoneStateFailed, "nope": structs.ZoneStateDone}, "nogroup": {"a": structs.ZoneStateDone}}
	req.DeploymentUpdate.FailuresAtPause = map[string]int{"web": 2}
	must(t, s.UpdateDeploymentStatus(4, req))
	if got, want := zoneLine(t, s, dep.ID), "a=3/h0/i0/f2/failed b=2/h0/i1/f0/waiting"; got != want {
		t.Fatalf("paused on the budget: %s, want %s", got, want)
	}

	req = statusReq(dep.ID, structs.DeploymentStatusRunning, structs.DeploymentStatusDescriptionRunning, at.Add(time.Minute))
	req.DeploymentUpdate.ZoneStates = map[string]map[string]string{"web": {"a": structs.ZoneStateRolling}}
	req.DeploymentUpdate.ZoneFailedReset = map[string][]string{"web": {"a", "nope"}, "nogroup": {"a"}}
	must(t, s.UpdateDeploymentStatus(5, req))
	if got, want := zoneLine(t, s, dep.ID), "a=3/h0/i0/f0/rolling b=2/h0/i1/f0/waiting"; got != want {
		t.Fatalf("resumed: %s, want %s", got, want)
	}
	d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID))
	if g := d.TaskGroups["web"]; g.UnhealthyAllocs != 2 || g.FailuresAtPause != 2 {
		t.Fatalf("the deployment-wide failure count moved: %+v", g)
	}

	// Failures after the reset count from zero.
	report(t, s, 6, health(allocs[2].ID, true, statetest.T0))
	report(t, s, 7, failed(allocs[2].ID))
	if got, want := zoneLine(t, s, dep.ID), "a=3/h0/i0/f0/rolling b=2/h0/i0/f1/waiting"; got != want {
		t.Fatalf("after a failure in b: %s, want %s", got, want)
	}

	dst := restoredCopy(t, s)
	if got, want := zoneLine(t, dst, dep.ID), zoneLine(t, s, dep.ID); got != want {
		t.Fatalf("restored zones %s, want %s", got, want)
	}
	da, db := get[[]byte](t)(s.Snapshot().Dump()), get[[]byte](t)(dst.Snapshot().Dump())
	if string(da) != string(db) {
		t.Fatal("the restored store dumps differently")
	}
}

// A snapshot written before the store kept zone figures (Healthy and
// InFlight zero) is restored with them counted; Failed, a counter, is
// kept as it was.
func TestRestoreCountsZoneFigures(t *testing.T) {
	src := newStore(t)
	dep, allocs := zoned(t, src, "a", "a", "b")
	report(t, src, 3, health(allocs[0].ID, true, statetest.T0), health(allocs[1].ID, false, statetest.T0))
	want := zoneLine(t, src, dep.ID)
	dst := newStore(t)
	r := dst.Restorer()
	must(t, src.Snapshot().Each(TableAllocs, func(obj any) error { return r.Insert(TableAllocs, obj) }))
	row := get[*structs.Deployment](t)(src.Snapshot().DeploymentByID(dep.ID)).Copy()
	for _, z := range row.TaskGroups["web"].Zones {
		z.Healthy, z.InFlight = 0, 0
	}
	must(t, r.Insert(TableDeployments, row))
	r.Commit()
	if got := zoneLine(t, dst, dep.ID); got != want {
		t.Fatalf("restored %s, want %s", got, want)
	}
}

// A zone that starts rolling (waiting → rolling) restarts its group's
// progress deadline from the update's time, when that is later: the pause
// between zones was no lack of progress. Other zone states leave it.
func TestZoneStartRestartsProgressDeadline(t *testing.T) {
	s := newStore(t)
	dep, _ := zoned(t, s, "a")
	read := func() *structs.DeploymentState {
		return get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID)).TaskGroups["web"]
	}
	g := read()
	before := g.RequireProgressBy
	if before.IsZero() || g.ProgressDeadline == 0 {
		t.Fatalf("no progress deadline to restart: %+v", g)
	}
	at := before.Add(time.Hour)
	req := statusReq(dep.ID, structs.DeploymentStatusRunning, structs.DeploymentStatusDescriptionRunning, at)
	req.DeploymentUpdate.ZoneStates = map[string]map[string]string{"web": {"a": structs.ZoneStateDone}}
	must(t, s.UpdateDeploymentStatus(3, req))
	if got := read().RequireProgressBy; !got.Equal(before) {
		t.Fatalf("a zone done moved the deadline to %v", got)
	}
	req.DeploymentUpdate.ZoneStates = map[string]map[string]string{"web": {"b": structs.ZoneStateRolling}}
	must(t, s.UpdateDeploymentStatus(4, req))
	if got, want := read().RequireProgressBy, at.Add(g.ProgressDeadline); !got.Equal(want) {
		t.Fatalf("zone b started: deadline %v, want %v", got, want)
	}
}

// One plan placing allocs in many zones (a zone per node): each zone gets
// its own, whichever way the transaction keeps them.
func TestZoneFiguresManyZones(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 1, statetest.Job("web", 40))
	dep := statetest.Deployment(job, 0)
	n := statetest.Node("n")
	var allocs []*structs.Allocation
	for i := range 40 {
		name := fmt.Sprintf("z%02d", i)
		dep.TaskGroups["web"].Zones = append(dep.TaskGroups["web"].Zones, &structs.ZoneState{Name: name, Size: 2, State: structs.ZoneStateRolling})
		for k := range 2 {
			a := statetest.Alloc(job, n, "e", dep.ID, 2*i+k)
			a.Zone = name
			if k == 1 {
				a.DeploymentStatus.Healthy = statetest.Bool(true)
			}
			allocs = append(allocs, a)
		}
	}
	must(t, s.ApplyPlanResults(2, &structs.ApplyPlanResultsRequest{Deployment: dep, UpdatedAt: statetest.T0.UnixNano()}))
	must(t, s.ApplyPlanResults(3, &structs.ApplyPlanResultsRequest{AllocsPlaced: allocs, UpdatedAt: statetest.T0.UnixNano()}))
	d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID))
	for _, z := range d.TaskGroups["web"].Zones {
		if z.Healthy != 1 || z.InFlight != 1 {
			t.Fatalf("zone %+v", *z)
		}
	}
	checkFigures(t, s, 0, "many zones")
}
