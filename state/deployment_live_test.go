package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// recountFigures counts a deployment's live figures from scratch, as the
// deployment watcher would from the allocations: per group of the
// deployment, the live healthy allocations, those of them that are
// canaries (listed as placed or flagged), the allocations marked
// unhealthy; per zone a group lists, its live allocations healthy and
// those whose health is unknown; and the highest health index of a live
// healthy allocation.
func recountFigures(t *testing.T, snap *Snapshot, d *structs.Deployment) figures {
	t.Helper()
	allocs, err := snap.AllocsByDeployment(d.ID)
	must(t, err)
	placed := map[string]bool{}
	unhealthyIDs := map[string][]string{}
	f := figures{groups: map[string]groupLive{}}
	for name, s := range d.TaskGroups {
		f.groups[name] = groupLive{}
		for _, id := range s.PlacedCanaries {
			placed[id] = true
		}
	}
	for name, s := range d.TaskGroups {
		for _, z := range s.Zones {
			if f.zones == nil {
				f.zones = map[zoneKey]zoneLive{}
			}
			f.zones[zoneKey{name, z.Name}] = zoneLive{}
		}
	}
	for _, a := range allocs {
		g, known := f.groups[a.TaskGroup]
		if k := (zoneKey{a.TaskGroup, a.Zone}); !a.TerminalStatus() {
			if z, listed := f.zones[k]; listed {
				switch {
				case a.IsHealthy():
					z.healthy++
				case !a.IsUnhealthy():
					z.inFlight++
				}
				f.zones[k] = z
			}
		}
		live := !a.TerminalStatus() && a.IsHealthy()
		if live {
			idx := a.DeploymentStatus.ModifyIndex
			if idx == 0 {
				idx = a.ModifyIndex
			}
			f.index = max(f.index, idx)
			g.healthy++
			if placed[a.ID] || a.IsCanary() {
				g.canaries++
			}
		}
		if a.IsUnhealthy() {
			g.unhealthy++
			if known {
				unhealthyIDs[a.TaskGroup] = append(unhealthyIDs[a.TaskGroup], a.ID)
			}
		}
		if known {
			f.groups[a.TaskGroup] = g
		}
	}
	for name, ids := range unhealthyIDs {
		if f.unhealthy == nil {
			f.unhealthy = map[string]string{}
		}
		slices.Sort(ids)
		f.unhealthy[name] = strings.Join(ids, ",")
	}
	return f
}

// checkFigures fails unless every active deployment's stored live figures
// equal a recount.
func checkFigures(t *testing.T, s *Store, step int, what string) {
	t.Helper()
	snap := s.Snapshot()
	deps, err := snap.Deployments()
	must(t, err)
	for _, d := range deps {
		if !d.Active() {
			continue
		}
		want, got := recountFigures(t, snap, d), liveFigures(d)
		if !equalFigures(want, got) {
			t.Fatalf("step %d (%s): deployment %s figures %+v, recount %+v", step, what, d.ID, got, want)
		}
	}
}

// checkZoneFailures fails unless the failures of web's zones in every
// active deployment add up to the group's, as they do when every alloc of
// web is in one of its zones and no status update resets a zone.
func checkZoneFailures(t *testing.T, s *Store, step int, what string) {
	t.Helper()
	deps, err := s.Snapshot().Deployments()
	must(t, err)
	for _, d := range deps {
		if !d.Active() {
			continue
		}
		if g := d.TaskGroups["web"]; g != nil && len(g.Zones) > 0 {
			sum := 0
			for _, z := range g.Zones {
				sum += z.Failed
			}
			if sum != g.UnhealthyAllocs {
				t.Fatalf("step %d (%s): deployment %s zone failures add up to %d, group's %d", step, what, d.ID, sum, g.UnhealthyAllocs)
			}
		}
	}
}

// liveJob is a job of three groups; deployments cover web and api only,
// so that db's allocations count in no group (but in the health index).
func liveJob() *structs.Job {
	job := statetest.Job("web", 4)
	for _, name := range []string{"api", "db"} {
		g := job.TaskGroups[0].Copy()
		g.Name = name
		job.TaskGroups = append(job.TaskGroups, g)
	}
	return job
}

func liveDeployment(id string, job *structs.Job) *structs.Deployment {
	d := statetest.Deployment(job, 1)
	d.ID = id
	d.TaskGroups["api"] = &structs.DeploymentState{DesiredTotal: 2, ProgressDeadline: time.Hour}
	// A plan's figures are never taken.
	d.HealthIndex = 999
	d.TaskGroups["web"].LiveHealthyAllocs = 7
	// web rolls out by zones; its allocs are in "a", "b" or "" (see
	// liveZones), api's count in no zone.
	for _, name := range liveZones {
		d.TaskGroups["web"].Zones = append(d.TaskGroups["web"].Zones,
			&structs.ZoneState{Name: name, Size: 2, State: structs.ZoneStateRolling, Healthy: 9, InFlight: 9, Failed: 9})
	}
	return d
}

// liveZones are the zones of the random allocs.
var liveZones = []string{"a", "b", ""}

// liveWorld drives random allocation writes against a store.
type liveWorld struct {
	t      *testing.T
	s      *Store
	r      *rand.Rand
	job    *structs.Job
	nodes  []*structs.Node
	deps   []string // deployment IDs, created or not yet
	ids    []string // allocation IDs ever placed
	index  uint64
	nextID int
}

func (w *liveWorld) next() uint64 { w.index++; return w.index }

func (w *liveWorld) at() int64 {
	return statetest.T0.Add(time.Duration(w.index) * time.Second).UnixNano()
}

func (w *liveWorld) anyAlloc() string { return w.ids[w.r.IntN(len(w.ids))] }

func (w *liveWorld) someAllocs() []string {
	n := 1 + w.r.IntN(4)
	out := make([]string, 0, n)
	for range n {
		out = append(out, w.anyAlloc())
	}
	return out
}

// newAlloc returns a new allocation of a random group and deployment,
// sometimes a canary, sometimes with a health the plan carries.
func (w *liveWorld) newAlloc() *structs.Allocation {
	w.nextID++
	job := w.job
	a := statetest.Alloc(job, w.nodes[w.r.IntN(len(w.nodes))], "e", w.deps[w.r.IntN(len(w.deps))], w.nextID)
	a.ID = statetest.ID(fmt.Sprintf("live-alloc/%d", w.nextID))
	a.TaskGroup = job.TaskGroups[w.r.IntN(len(job.TaskGroups))].Name
	a.DeploymentStatus.Canary = w.r.IntN(3) == 0
	a.Zone = liveZones[w.r.IntN(len(liveZones))]
	if w.r.IntN(6) == 0 {
		a.DeploymentStatus.Healthy = statetest.Bool(w.r.IntN(2) == 0)
	}
	w.ids = append(w.ids, a.ID)
	return a
}

func (w *liveWorld) stored(id string) *structs.Allocation {
	a, err := w.s.Snapshot().AllocByID(id)
	must(w.t, err)
	return a
}

// step makes one random write and returns its name.
func (w *liveWorld) step() string {
	r := w.r
	switch op := r.IntN(12); {
	case op == 0 || len(w.ids) == 0:
		var placed []*structs.Allocation
		for range 1 + r.IntN(5) {
			placed = append(placed, w.newAlloc())
		}
		must(w.t, w.s.ApplyPlanResults(w.next(), &structs.ApplyPlanResultsRequest{AllocsPlaced: placed, Job: w.job, UpdatedAt: w.at()}))
		return "place"
	case op <= 3:
		var reps []*structs.Allocation
		for _, id := range w.someAllocs() {
			reps = append(reps, health(id, r.IntN(3) > 0, statetest.T0))
		}
		must(w.t, w.s.UpdateAllocsFromClient(w.next(), &structs.AllocClientUpdateRequest{Allocs: reps, UpdatedAt: w.at()}))
		return "client health"
	case op == 4:
		statuses := []string{structs.AllocClientStatusRunning, structs.AllocClientStatusComplete, structs.AllocClientStatusFailed}
		rep := &structs.Allocation{ID: w.anyAlloc(), ClientStatus: statuses[r.IntN(len(statuses))]}
		must(w.t, w.s.UpdateAllocsFromClient(w.next(), &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{rep}, UpdatedAt: w.at()}))
		return "client status"
	case op == 5:
		// One plan: stops, an in-place update (perhaps into another
		// deployment, perhaps one it creates) and a placement.
		req := &structs.ApplyPlanResultsRequest{Job: w.job, UpdatedAt: w.at()}
		for _, id := range w.someAllocs() {
			req.AllocsStopped = append(req.AllocsStopped, &structs.AllocStopUpdate{AllocID: id, DesiredDescription: "replaced"})
		}
		if a := w.stored(w.anyAlloc()); a != nil {
			u := a.Copy()
			u.DeploymentID = w.deps[r.IntN(len(w.deps))]
			if u.DeploymentStatus == nil {
				u.DeploymentStatus = &structs.AllocDeploymentStatus{}
			}
			req.AllocsUpdated = append(req.AllocsUpdated, u)
			if r.IntN(2) == 0 {
				req.Deployment = liveDeployment(u.DeploymentID, w.job)
			}
		}
		req.AllocsPlaced = append(req.AllocsPlaced, w.newAlloc())
		must(w.t, w.s.ApplyPlanResults(w.next(), req))
		return "plan"
	case op == 6:
		must(w.t, w.s.Reap(w.next(), &structs.EvalReapRequest{Allocs: w.someAllocs()}))
		return "reap"
	case op == 7:
		a := w.stored(w.anyAlloc())
		if a == nil || a.DeploymentID == "" {
			return "nothing"
		}
		d, err := w.s.Snapshot().DeploymentByID(a.DeploymentID)
		must(w.t, err)
		if !d.Active() {
			return "nothing"
		}
		req := &structs.DeploymentAllocHealthRequest{DeploymentID: d.ID, Timestamp: statetest.T0}
		if r.IntN(2) == 0 {
			req.HealthyAllocationIDs = []string{a.ID}
		} else {
			req.UnhealthyAllocationIDs = []string{a.ID}
		}
		must(w.t, w.s.SetAllocHealth(w.next(), req))
		return "operator health"
	case op == 8:
		yes := true
		must(w.t, w.s.UpdateAllocDesiredTransition(w.next(), &structs.AllocUpdateDesiredTransitionRequest{
			Allocs: map[string]*structs.DesiredTransition{w.anyAlloc(): {Reschedule: &yes}}, UpdatedAt: w.at()}))
		return "desired transition"
	case op == 9:
		n := w.nodes[r.IntN(len(w.nodes))]
		status := structs.NodeStatusDown
		if r.IntN(2) == 0 {
			status = structs.NodeStatusReady
		}
		must(w.t, w.s.UpdateNodeStatus(w.next(), &structs.NodeUpdateStatusRequest{NodeID: n.ID, Status: status, UpdatedAt: w.at()}))
		return "node " + status
	case op == 10:
		id := w.deps[r.IntN(len(w.deps))]
		d, err := w.s.Snapshot().DeploymentByID(id)
		must(w.t, err)
		if d == nil {
			must(w.t, w.s.ApplyPlanResults(w.next(), &structs.ApplyPlanResultsRequest{Deployment: liveDeployment(id, w.job), UpdatedAt: w.at()}))
			return "create deployment"
		}
		if !d.Active() {
			return "nothing"
		}
		status := structs.DeploymentStatusPaused
		switch r.IntN(6) {
		case 0:
			status = structs.DeploymentStatusFailed
		case 1, 2:
			status = structs.DeploymentStatusRunning
		}
		must(w.t, w.s.UpdateDeploymentStatus(w.next(), &structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: id, Status: status}, UpdatedAt: w.at()}))
		return "deployment " + status
	default:
		// A running report with no news: no deployment may change.
		before := w.s.Snapshot()
		a := w.stored(w.anyAlloc())
		if a == nil {
			return "nothing"
		}
		rep := &structs.Allocation{ID: a.ID, ClientStatus: a.ClientStatus, DeploymentStatus: a.DeploymentStatus}
		must(w.t, w.s.UpdateAllocsFromClient(w.next(), &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{rep}, UpdatedAt: w.at()}))
		bi, err := before.Index(TableDeployments)
		must(w.t, err)
		ai, err := w.s.Snapshot().Index(TableDeployments)
		must(w.t, err)
		if ai != bi {
			w.t.Fatalf("a report repeating alloc %s's status rewrote a deployment (index %d to %d)", a.ID, bi, ai)
		}
		return "repeated report"
	}
}

// TestLiveFiguresMatchRecount drives random allocation writes (placements
// with and without health, client health and status, operator health,
// plan stops and in-place moves between deployments, desired transitions,
// lost nodes, garbage collection, deployments created after their
// allocations, pauses and failures) and checks after each that every
// active deployment's live figures equal a recount from its allocations.
func TestLiveFiguresMatchRecount(t *testing.T) {
	runs, steps := 40, 300
	if testing.Short() {
		runs = 10
	}
	for run := range runs {
		s := newStore(t)
		w := &liveWorld{t: t, s: s, r: rand.New(rand.NewPCG(uint64(run), 7)), job: liveJob()}
		w.job = registerJob(t, s, w.next(), w.job)
		for _, name := range []string{"a", "b"} {
			n := statetest.Node(name)
			must(t, s.UpsertNode(w.next(), n))
			w.nodes = append(w.nodes, n)
		}
		w.deps = []string{"dep-1", "dep-2", "dep-3"}
		must(t, s.ApplyPlanResults(w.next(), &structs.ApplyPlanResultsRequest{
			Deployment: liveDeployment("dep-1", w.job), UpdatedAt: w.at()}))
		seen := map[string]bool{}
		for i := range steps {
			what := w.step()
			seen[what] = true
			checkFigures(t, s, i, what)
			checkZoneFailures(t, s, i, what)
		}
		if run == 0 {
			names := make([]string, 0, len(seen))
			for k := range seen {
				names = append(names, k)
			}
			slices.Sort(names)
			t.Logf("kinds of writes: %v", names)
		}
	}
}

// TestRestoreCountsMissingLiveFigures: a snapshot whose deployment rows
// lack the live figures (written before the store kept them) is restored
// with them counted, and with the rows' indexes kept; a current snapshot
// is restored as it was.
func TestRestoreCountsMissingLiveFigures(t *testing.T) {
	src := newStore(t)
	dep, allocs := deployed(t, src, 3, 1)
	must(t, src.UpdateAllocsFromClient(3, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{
		health(allocs[0].ID, true, statetest.T0), health(allocs[1].ID, true, statetest.T0), health(allocs[2].ID, false, statetest.T0)}}))
	want := get[*structs.Deployment](t)(src.Snapshot().DeploymentByID(dep.ID))
	if g := want.TaskGroups["web"]; g.LiveHealthyAllocs != 2 || g.LiveHealthyCanaries != 1 || g.MarkedUnhealthyAllocs != 1 || want.HealthIndex != 3 {
		t.Fatalf("source figures %+v, health index %d", g, want.HealthIndex)
	}
	for _, strip := range []bool{false, true} {
		dst := newStore(t)
		r := dst.Restorer()
		must(t, src.Snapshot().Each(TableAllocs, func(obj any) error { return r.Insert(TableAllocs, obj) }))
		row := want.Copy()
		if strip {
			row.ClearLiveFigures()
		}
		must(t, r.Insert(TableDeployments, row))
		r.Commit()
		got := get[*structs.Deployment](t)(dst.Snapshot().DeploymentByID(dep.ID))
		if !equalFigures(liveFigures(got), liveFigures(want)) || got.ModifyIndex != want.ModifyIndex {
			t.Fatalf("stripped %v: restored figures %+v (index %d), want %+v (index %d)",
				strip, liveFigures(got), got.ModifyIndex, liveFigures(want), want.ModifyIndex)
		}
	}
}

// TestNewGroupCountsExistingAllocs: a group added to an active deployment
// by a plan has its live figures counted from the allocations already
// there, never taken from the plan.
func TestNewGroupCountsExistingAllocs(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 1, liveJob())
	dep := statetest.Deployment(job, 0) // group web only
	n := statetest.Node("a")
	var placed []*structs.Allocation
	for i := range 3 {
		a := statetest.Alloc(job, n, "e", dep.ID, i)
		a.TaskGroup = "api"
		a.DeploymentStatus.Healthy = statetest.Bool(i > 0)
		placed = append(placed, a)
	}
	must(t, s.ApplyPlanResults(2, &structs.ApplyPlanResultsRequest{Deployment: dep, AllocsPlaced: placed, UpdatedAt: statetest.T0.UnixNano()}))
	d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID))
	if d.HealthIndex != 2 || d.TaskGroups["api"] != nil {
		t.Fatalf("before the group: health index %d, groups %v", d.HealthIndex, d.TaskGroups)
	}
	more := dep.Copy()
	more.TaskGroups["api"] = &structs.DeploymentState{DesiredTotal: 3, LiveHealthyAllocs: 99, MarkedUnhealthyAllocs: 99}
	must(t, s.ApplyPlanResults(3, &structs.ApplyPlanResultsRequest{Deployment: more, UpdatedAt: statetest.T0.UnixNano()}))
	d = get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID))
	if g := d.TaskGroups["api"]; g.LiveHealthyAllocs != 2 || g.MarkedUnhealthyAllocs != 1 || d.HealthIndex != 2 {
		t.Fatalf("new group figures %+v, health index %d", g, d.HealthIndex)
	}
	checkFigures(t, s, 0, "new group")
}
