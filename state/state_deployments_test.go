package state

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// deployed registers a job of count allocs with `canaries` canaries and
// places them all in a new deployment at T0. It returns the deployment and
// the allocs.
func deployed(t *testing.T, s *Store, count, canaries int) (*structs.Deployment, []*structs.Allocation) {
	t.Helper()
	job := registerJob(t, s, 1, statetest.Job("web", count))
	dep := statetest.Deployment(job, canaries)
	n := statetest.Node("a")
	var allocs []*structs.Allocation
	for i := range count {
		a := statetest.Alloc(job, n, "e", dep.ID, i)
		a.DeploymentStatus.Canary = i < canaries
		allocs = append(allocs, a)
	}
	must(t, s.ApplyPlanResults(2, &structs.ApplyPlanResultsRequest{
		Deployment: dep, AllocsPlaced: allocs, UpdatedAt: statetest.T0.UnixNano(),
	}))
	return dep, allocs
}

func health(id string, healthy bool, at time.Time) *structs.Allocation {
	return &structs.Allocation{ID: id, ClientStatus: structs.AllocClientStatusRunning,
		DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: statetest.Bool(healthy), Timestamp: at}}
}

func TestDeploymentCountersFromClientHealth(t *testing.T) {
	s := newStore(t)
	dep, allocs := deployed(t, s, 3, 1)
	g := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID)).TaskGroups["web"]
	if g.PlacedAllocs != 3 || len(g.PlacedCanaries) != 1 || g.PlacedCanaries[0] != allocs[0].ID {
		t.Fatalf("after placement: placed %d canaries %v", g.PlacedAllocs, g.PlacedCanaries)
	}
	t1, t2 := statetest.T0.Add(time.Minute), statetest.T0.Add(2*time.Minute)
	must(t, s.UpdateAllocsFromClient(3, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{health(allocs[0].ID, true, t2), health(allocs[1].ID, true, t1), health(allocs[2].ID, false, t2)},
	}))
	// Reporting the same health again counts nothing.
	must(t, s.UpdateAllocsFromClient(4, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{health(allocs[0].ID, true, t2.Add(time.Hour))},
	}))
	d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID))
	g = d.TaskGroups["web"]
	if g.HealthyAllocs != 2 || g.UnhealthyAllocs != 1 {
		t.Fatalf("healthy %d unhealthy %d, want 2 and 1", g.HealthyAllocs, g.UnhealthyAllocs)
	}
	if want := t2.Add(g.ProgressDeadline); !g.RequireProgressBy.Equal(want) {
		t.Fatalf("RequireProgressBy = %v, want latest healthy + deadline %v", g.RequireProgressBy, want)
	}
	a0 := get[*structs.Allocation](t)(s.Snapshot().AllocByID(allocs[0].ID))
	if !a0.IsCanary() || !a0.IsHealthy() {
		t.Fatal("client update lost the canary flag or the health")
	}
}

func TestTerminalDeploymentNotCounted(t *testing.T) {
	s := newStore(t)
	dep, allocs := deployed(t, s, 1, 0)
	must(t, s.UpdateDeploymentStatus(3, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: dep.ID, Status: structs.DeploymentStatusFailed, StatusDescription: structs.DeploymentStatusDescriptionFailedByUser},
	}))
	must(t, s.UpdateAllocsFromClient(4, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{health(allocs[0].ID, true, statetest.T0)}}))
	if g := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID)).TaskGroups["web"]; g.HealthyAllocs != 0 {
		t.Fatalf("failed deployment counted a healthy alloc")
	}
	err := s.UpdateDeploymentStatus(5, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: dep.ID, Status: structs.DeploymentStatusPaused},
	})
	if !errors.Is(err, ErrDeploymentTerminal) {
		t.Fatalf("pause of a failed deployment: err = %v", err)
	}
}

func TestPromote(t *testing.T) {
	s := newStore(t)
	dep, allocs := deployed(t, s, 3, 2)
	promote := &structs.DeploymentPromoteRequest{DeploymentID: dep.ID, All: true, PromotedAt: statetest.T0.Add(time.Hour)}
	err := s.PromoteDeployment(3, promote)
	if !errors.Is(err, ErrPromotion) || !strings.Contains(err.Error(), `"web" has 0/2 healthy`) {
		t.Fatalf("promote without healthy canaries: err = %v", err)
	}
	must(t, s.UpdateAllocsFromClient(4, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{health(allocs[0].ID, true, statetest.T0)}}))
	if err := s.PromoteDeployment(5, promote); err == nil || !strings.Contains(err.Error(), "1/2 healthy") {
		t.Fatalf("promote with 1/2 healthy: err = %v", err)
	}
	must(t, s.UpdateAllocsFromClient(6, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{health(allocs[1].ID, true, statetest.T0)}}))
	promote.Eval = statetest.Eval("promote", allocs[0].Job)
	must(t, s.PromoteDeployment(7, promote))
	snap := s.Snapshot()
	g := get[*structs.Deployment](t)(snap.DeploymentByID(dep.ID)).TaskGroups["web"]
	if !g.Promoted || !g.RequireProgressBy.Equal(promote.PromotedAt.Add(g.ProgressDeadline)) {
		t.Fatalf("promoted %v, require progress by %v", g.Promoted, g.RequireProgressBy)
	}
	if len(g.PlacedCanaries) != 2 {
		t.Fatalf("promotion lost canary IDs: %v", g.PlacedCanaries)
	}
	if !get[*structs.Allocation](t)(snap.AllocByID(allocs[0].ID)).IsCanary() {
		t.Fatal("promotion cleared the canary flag; the scheduler needs it")
	}
	if get[*structs.Evaluation](t)(snap.EvalByID(promote.Eval.ID)) == nil {
		t.Fatal("promotion eval not stored")
	}
	err = s.PromoteDeployment(8, &structs.DeploymentPromoteRequest{DeploymentID: dep.ID, Groups: []string{"nope"}})
	if !errors.Is(err, ErrPromotion) {
		t.Fatalf("promote unknown group: err = %v", err)
	}
	if err := s.PromoteDeployment(9, &structs.DeploymentPromoteRequest{DeploymentID: "nope", All: true}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("promote unknown deployment: err = %v", err)
	}
}

func TestResumeRestartsProgressDeadline(t *testing.T) {
	s := newStore(t)
	dep, _ := deployed(t, s, 1, 0)
	upd := func(index uint64, status string, at time.Time) {
		must(t, s.UpdateDeploymentStatus(index, &structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: dep.ID, Status: status},
			UpdatedAt:        at.UnixNano(),
		}))
	}
	upd(3, structs.DeploymentStatusPaused, statetest.T0.Add(time.Minute))
	resumeAt := statetest.T0.Add(time.Hour)
	upd(4, structs.DeploymentStatusRunning, resumeAt)
	g := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID)).TaskGroups["web"]
	if !g.RequireProgressBy.Equal(resumeAt.Add(g.ProgressDeadline)) {
		t.Fatalf("RequireProgressBy after resume = %v", g.RequireProgressBy)
	}
}

func TestStatusUpdateWithRevert(t *testing.T) {
	s := newStore(t)
	dep, allocs := deployed(t, s, 1, 0)
	revert := allocs[0].Job.Copy()
	revert.Meta = map[string]string{"reverted": "yes"}
	eval := statetest.Eval("revert", revert)
	must(t, s.UpdateDeploymentStatus(3, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: dep.ID, Status: structs.DeploymentStatusFailed,
			StatusDescription: structs.DeploymentStatusDescriptionRollback(structs.DeploymentStatusDescriptionFailedAllocations, 0)},
		Job: revert, Eval: eval, UpdatedAt: 5,
	}))
	snap := s.Snapshot()
	if j := get[*structs.Job](t)(snap.JobByID("default", "web")); j.Version != 1 || j.Meta["reverted"] != "yes" {
		t.Fatalf("revert not registered: v%d", j.Version)
	}
	if e := get[*structs.Evaluation](t)(snap.EvalByID(eval.ID)); e == nil || e.JobModifyIndex != 3 {
		t.Fatalf("revert eval = %+v", e)
	}
}

func TestManualAllocHealth(t *testing.T) {
	s := newStore(t)
	dep, allocs := deployed(t, s, 2, 0)
	at := statetest.T0.Add(3 * time.Minute)
	must(t, s.SetAllocHealth(3, &structs.DeploymentAllocHealthRequest{
		DeploymentID: dep.ID, HealthyAllocationIDs: []string{allocs[0].ID},
		UnhealthyAllocationIDs: []string{allocs[1].ID}, Timestamp: at,
	}))
	snap := s.Snapshot()
	g := get[*structs.Deployment](t)(snap.DeploymentByID(dep.ID)).TaskGroups["web"]
	if g.HealthyAllocs != 1 || g.UnhealthyAllocs != 1 || !g.RequireProgressBy.Equal(at.Add(g.ProgressDeadline)) {
		t.Fatalf("group after manual health = %+v", g)
	}
	a := get[*structs.Allocation](t)(snap.AllocByID(allocs[1].ID))
	if !a.IsUnhealthy() || !a.DeploymentStatus.Timestamp.Equal(at) {
		t.Fatalf("alloc health = %+v", a.DeploymentStatus)
	}
	err := s.SetAllocHealth(4, &structs.DeploymentAllocHealthRequest{DeploymentID: dep.ID, HealthyAllocationIDs: []string{"stranger"}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("alloc of another deployment: err = %v", err)
	}
}

func TestPlanDeploymentUpdateKeepsCounters(t *testing.T) {
	s := newStore(t)
	dep, allocs := deployed(t, s, 2, 0)
	must(t, s.UpdateAllocsFromClient(3, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{health(allocs[0].ID, true, statetest.T0)}}))
	stale := dep.Copy() // counters all zero, as in the plan's snapshot
	stale.TaskGroups["web"].DesiredTotal = 4
	must(t, s.ApplyPlanResults(4, &structs.ApplyPlanResultsRequest{Deployment: stale, UpdatedAt: 1}))
	g := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID)).TaskGroups["web"]
	if g.DesiredTotal != 4 || g.PlacedAllocs != 2 || g.HealthyAllocs != 1 {
		t.Fatalf("merged group = %+v", g)
	}
}

func TestLatestDeploymentByJob(t *testing.T) {
	s := newStore(t)
	dep, allocs := deployed(t, s, 1, 0)
	c := allocs[0].Job.Copy()
	c.Meta = map[string]string{"v": "2"}
	v1 := registerJob(t, s, 3, c)
	dep2 := statetest.Deployment(v1, 0)
	must(t, s.ApplyPlanResults(4, &structs.ApplyPlanResultsRequest{
		Deployment:        dep2,
		DeploymentUpdates: []*structs.DeploymentStatusUpdate{{DeploymentID: dep.ID, Status: structs.DeploymentStatusCancelled, StatusDescription: structs.DeploymentStatusDescriptionNewerJob}, {DeploymentID: "gone"}},
	}))
	snap := s.Snapshot()
	latest := get[*structs.Deployment](t)(snap.LatestDeploymentByJob("default", "web"))
	if latest == nil || latest.ID != dep2.ID {
		t.Fatalf("latest = %+v", latest)
	}
	if d := get[*structs.Deployment](t)(snap.DeploymentByID(dep.ID)); d.Status != structs.DeploymentStatusCancelled {
		t.Fatalf("older deployment = %s", d.Status)
	}
	if n := len(get[[]*structs.Deployment](t)(snap.DeploymentsByJob("default", "web"))); n != 2 {
		t.Fatalf("DeploymentsByJob = %d", n)
	}
	if n := len(get[[]*structs.Deployment](t)(snap.DeploymentsByIDPrefix(dep2.ID[:6]))); n != 1 {
		t.Fatalf("DeploymentsByIDPrefix = %d", n)
	}
}

// A new alloc that was healthy and then fails counts as a failure of its
// version (UnhealthyAllocs, which max_failed limits), once.
func TestHealthyThenFailedCountsAsFailure(t *testing.T) {
	s := newStore(t)
	dep, allocs := deployed(t, s, 2, 0)
	must(t, s.UpdateAllocsFromClient(3, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{health(allocs[0].ID, true, statetest.T0), health(allocs[1].ID, true, statetest.T0)},
	}))
	failed := &structs.Allocation{ID: allocs[0].ID, ClientStatus: structs.AllocClientStatusFailed}
	must(t, s.UpdateAllocsFromClient(4, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{failed}}))
	// The same report again counts nothing more.
	must(t, s.UpdateAllocsFromClient(5, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{failed}}))
	g := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID)).TaskGroups["web"]
	if g.HealthyAllocs != 2 || g.UnhealthyAllocs != 1 {
		t.Fatalf("healthy %d unhealthy %d, want 2 and 1", g.HealthyAllocs, g.UnhealthyAllocs)
	}
}
