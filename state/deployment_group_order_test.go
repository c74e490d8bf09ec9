package state

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// ordered writes, with a new deployment of job web, the groups db (1,
// rolling), api (2, waiting) and web (3, waiting) of a job that rolls its
// groups in order, as the scheduler writes them, and returns the
// deployment.
func ordered(t *testing.T, s *Store) *structs.Deployment {
	t.Helper()
	job := registerJob(t, s, 1, statetest.Job("web", 2))
	dep := statetest.Deployment(job, 0)
	web := dep.TaskGroups["web"]
	web.Order, web.State = 3, structs.GroupStateWaiting
	for i, name := range []string{"db", "api"} {
		g := web.Copy()
		g.Order, g.State = i+1, structs.GroupStateWaiting
		dep.TaskGroups[name] = g
	}
	dep.TaskGroups["db"].State = structs.GroupStateRolling
	must(t, s.ApplyPlanResults(2, &structs.ApplyPlanResultsRequest{Deployment: dep, UpdatedAt: statetest.T0.UnixNano()}))
	return dep
}

// groupLine prints the ordered groups of a deployment by Order:
// "1:db=rolling 2:api=waiting@5m0s ...", DoneAt relative to T0.
func groupLine(t *testing.T, s *Store, depID string) string {
	t.Helper()
	d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(depID))
	names := make([]string, 0, len(d.TaskGroups))
	for name := range d.TaskGroups {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return d.TaskGroups[names[i]].Order < d.TaskGroups[names[j]].Order })
	var parts []string
	for _, name := range names {
		g := d.TaskGroups[name]
		p := fmt.Sprintf("%d:%s=%s", g.Order, name, g.State)
		if !g.DoneAt.IsZero() {
			p += "@" + g.DoneAt.Sub(statetest.T0).String()
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// A status update sets the State and DoneAt of the groups it names
// (unknown groups are ignored); a group that starts rolling restarts its
// progress deadline from the update's time, when that is later, and no
// other transition moves it. A restored store holds the same groups.
func TestGroupOrderStatusUpdates(t *testing.T) {
	s := newStore(t)
	dep := ordered(t, s)
	if got, want := groupLine(t, s, dep.ID), "1:db=rolling 2:api=waiting 3:web=waiting"; got != want {
		t.Fatalf("as planned: %s, want %s", got, want)
	}
	read := func(name string) *structs.DeploymentState {
		return get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID)).TaskGroups[name]
	}
	before := read("api").RequireProgressBy
	if before.IsZero() || read("api").ProgressDeadline == 0 {
		t.Fatalf("no progress deadline to restart: %+v", read("api"))
	}

	done := statetest.T0.Add(3 * time.Minute)
	req := statusReq(dep.ID, structs.DeploymentStatusRunning, structs.GroupWaitsDescription("api", "db"), done)
	req.DeploymentUpdate.GroupStates = map[string]string{"db": structs.GroupStateDone, "nogroup": structs.GroupStateDone}
	req.DeploymentUpdate.GroupDoneAt = map[string]time.Time{"db": done.In(time.FixedZone("x", 3600)), "nogroup": done}
	must(t, s.UpdateDeploymentStatus(3, req))
	if got, want := groupLine(t, s, dep.ID), "1:db=done@3m0s 2:api=waiting 3:web=waiting"; got != want {
		t.Fatalf("db done: %s, want %s", got, want)
	}
	if loc := read("db").DoneAt.Location(); loc != time.UTC {
		t.Fatalf("DoneAt stored in %v, want UTC", loc)
	}
	if got := read("api").RequireProgressBy; !got.Equal(before) {
		t.Fatalf("a group done moved another's deadline to %v", got)
	}

	start := before.Add(time.Hour)
	req = statusReq(dep.ID, structs.DeploymentStatusRunning, structs.GroupWaitsDescription("web", "api"), start)
	req.DeploymentUpdate.GroupStates = map[string]string{"api": structs.GroupStateRolling}
	must(t, s.UpdateDeploymentStatus(4, req))
	api := read("api")
	if want := start.Add(api.ProgressDeadline); !api.RequireProgressBy.Equal(want) {
		t.Fatalf("api started: deadline %v, want %v", api.RequireProgressBy, want)
	}
	if got := read("web").RequireProgressBy; !got.Equal(before) {
		t.Fatalf("a waiting group's deadline moved to %v", got)
	}

	// Failed, then a resume (done again): neither moves the deadline
	// beyond the resume's own restart.
	req = statusReq(dep.ID, structs.DeploymentStatusPaused,
		structs.GroupServingPauseDescription("db", 1, 2, "web"), start.Add(time.Minute))
	req.DeploymentUpdate.GroupStates = map[string]string{"db": structs.GroupStateFailed}
	must(t, s.UpdateDeploymentStatus(5, req))
	if got, want := groupLine(t, s, dep.ID), "1:db=failed@3m0s 2:api=rolling 3:web=waiting"; got != want {
		t.Fatalf("db failed: %s, want %s", got, want)
	}
	resume := start.Add(2 * time.Minute)
	req = statusReq(dep.ID, structs.DeploymentStatusRunning, structs.GroupWaitsDescription("web", "api"), resume)
	req.DeploymentUpdate.GroupStates = map[string]string{"db": structs.GroupStateDone}
	must(t, s.UpdateDeploymentStatus(6, req))
	if got, want := groupLine(t, s, dep.ID), "1:db=done@3m0s 2:api=rolling 3:web=waiting"; got != want {
		t.Fatalf("resumed: %s, want %s", got, want)
	}
	if got, want := read("db").RequireProgressBy, resume.Add(read("db").ProgressDeadline); !got.Equal(want) {
		t.Fatalf("resumed: db's deadline %v, want %v", got, want)
	}

	dst := restoredCopy(t, s)
	if got, want := groupLine(t, dst, dep.ID), groupLine(t, s, dep.ID); got != want {
		t.Fatalf("restored groups %s, want %s", got, want)
	}
	da, db := get[[]byte](t)(s.Snapshot().Dump()), get[[]byte](t)(dst.Snapshot().Dump())
	if string(da) != string(db) {
		t.Fatal("the restored store dumps differently")
	}
}

// A plan made from an older snapshot carries the groups' Order and State
// as the scheduler first wrote them: the store keeps the stored ones (and
// DoneAt). A group new to the deployment takes the plan's.
func TestStalePlanKeepsGroupOrder(t *testing.T) {
	s := newStore(t)
	dep := ordered(t, s)
	done := statetest.T0.Add(time.Minute)
	req := statusReq(dep.ID, structs.DeploymentStatusRunning, structs.GroupWaitsDescription("web", "api"), done)
	req.DeploymentUpdate.GroupStates = map[string]string{"db": structs.GroupStateDone, "api": structs.GroupStateRolling}
	req.DeploymentUpdate.GroupDoneAt = map[string]time.Time{"db": done}
	must(t, s.UpdateDeploymentStatus(3, req))
	want := "1:db=done@1m0s 2:api=rolling 3:web=waiting"
	if got := groupLine(t, s, dep.ID); got != want {
		t.Fatalf("before the stale plan: %s, want %s", got, want)
	}

	stale := dep.Copy()
	stale.TaskGroups["db"].Order, stale.TaskGroups["db"].State = 2, structs.GroupStateRolling
	stale.TaskGroups["api"].State = structs.GroupStateWaiting
	stale.TaskGroups["web"].DoneAt = done.Add(time.Hour)
	cache := stale.TaskGroups["web"].Copy()
	cache.Order, cache.State = 4, structs.GroupStateWaiting
	stale.TaskGroups["cache"] = cache
	must(t, s.ApplyPlanResults(4, &structs.ApplyPlanResultsRequest{Deployment: stale, UpdatedAt: statetest.T0.UnixNano()}))
	want = "1:db=done@1m0s 2:api=rolling 3:web=waiting 4:cache=waiting@1h1m0s"
	if got := groupLine(t, s, dep.ID); got != want {
		t.Fatalf("after the stale plan: %s, want %s", got, want)
	}
}

// Promoting every canary group leaves out a group that waits its turn: it
// has no canaries yet.
func TestPromoteAllSkipsWaitingGroups(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 1, statetest.Job("web", 1))
	dep := statetest.Deployment(job, 1)
	dep.TaskGroups["web"].Order, dep.TaskGroups["web"].State = 2, structs.GroupStateWaiting
	api := dep.TaskGroups["web"].Copy()
	api.Order, api.State = 1, structs.GroupStateRolling
	dep.TaskGroups["api"] = api
	a := statetest.Alloc(job, statetest.Node("n"), "e", dep.ID, 0)
	a.TaskGroup = "api"
	a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
	must(t, s.ApplyPlanResults(2, &structs.ApplyPlanResultsRequest{Deployment: dep, AllocsPlaced: []*structs.Allocation{a},
		UpdatedAt: statetest.T0.UnixNano()}))
	report(t, s, 3, health(a.ID, true, statetest.T0))
	must(t, s.PromoteDeployment(4, &structs.DeploymentPromoteRequest{DeploymentID: dep.ID, All: true, PromotedAt: statetest.T0}))
	d := get[*structs.Deployment](t)(s.Snapshot().DeploymentByID(dep.ID))
	if !d.TaskGroups["api"].Promoted || d.TaskGroups["web"].Promoted {
		t.Fatalf("promoted api %v, web %v; want api only", d.TaskGroups["api"].Promoted, d.TaskGroups["web"].Promoted)
	}
}
