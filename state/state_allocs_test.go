package state

import (
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func TestAllocGettersAndIndexes(t *testing.T) {
	s := newStore(t)
	n1, n2 := statetest.Node("a"), statetest.Node("b")
	job := registerJob(t, s, 1, statetest.Job("web", 3))
	other := registerJob(t, s, 2, statetest.Job("api", 1))
	a0 := statetest.Alloc(job, n1, "e1", "d1", 0)
	a1 := statetest.Alloc(job, n2, "e1", "d1", 1)
	a2 := statetest.Alloc(job, n2, "e2", "", 2)
	b0 := statetest.Alloc(other, n1, "e3", "", 0)
	must(t, s.UpsertAllocs(3, []*structs.Allocation{a0, a1, a2, b0}, 500))
	snap := s.Snapshot()
	count := func(l []*structs.Allocation, err error) int {
		t.Helper()
		must(t, err)
		return len(l)
	}
	checks := []struct {
		name string
		got  int
		want int
	}{
		{"all", count(snap.Allocs()), 4},
		{"job web", count(snap.AllocsByJob("default", "web")), 3},
		{"job api", count(snap.AllocsByJob("default", "api")), 1},
		{"node a", count(snap.AllocsByNode(n1.ID)), 2},
		{"node b", count(snap.AllocsByNode(n2.ID)), 2},
		{"deployment d1", count(snap.AllocsByDeployment("d1")), 2},
		{"eval e1", count(snap.AllocsByEval("e1")), 2},
		{"prefix", count(snap.AllocsByIDPrefix(a0.ID[:8])), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d allocs, want %d", c.name, c.got, c.want)
		}
	}
	got := get[*structs.Allocation](t)(snap.AllocByID(a0.ID))
	if got.CreateIndex != 3 || got.ModifyIndex != 3 || got.AllocModifyIndex != 3 || got.ModifyTime != 500 {
		t.Fatalf("alloc indexes = %d/%d/%d time %d", got.CreateIndex, got.ModifyIndex, got.AllocModifyIndex, got.ModifyTime)
	}
}

func TestClientUpdateKeepsServerFields(t *testing.T) {
	s := newStore(t)
	n := statetest.Node("a")
	job := registerJob(t, s, 1, statetest.Job("web", 1))
	a := statetest.Alloc(job, n, "e1", "", 0)
	must(t, s.UpsertAllocs(2, []*structs.Allocation{a}, 10))
	must(t, s.UpdateAllocsFromClient(3, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{
			ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
			TaskStates: map[string]*structs.TaskState{"server": {State: structs.TaskStateRunning}},
			// A client cannot change what the servers decide.
			DesiredStatus: structs.AllocDesiredStatusStop, NodeID: "elsewhere",
		}, {ID: "unknown-alloc", ClientStatus: structs.AllocClientStatusRunning}},
		UpdatedAt: 20,
	}))
	got := get[*structs.Allocation](t)(s.Snapshot().AllocByID(a.ID))
	if got.ClientStatus != structs.AllocClientStatusRunning || got.TaskStates["server"].State != structs.TaskStateRunning {
		t.Fatalf("client fields not applied: %s %+v", got.ClientStatus, got.TaskStates)
	}
	if got.DesiredStatus != structs.AllocDesiredStatusRun || got.NodeID != n.ID {
		t.Fatalf("client changed server fields: %s %s", got.DesiredStatus, got.NodeID)
	}
	if got.AllocModifyIndex != 2 || got.ModifyIndex != 3 || got.ModifyTime != 20 {
		t.Fatalf("indexes = alloc %d modify %d time %d", got.AllocModifyIndex, got.ModifyIndex, got.ModifyTime)
	}
	// The server's in-place update keeps the client's reports.
	upd := got.Copy()
	upd.DesiredDescription = "updated"
	upd.ClientStatus = structs.AllocClientStatusPending
	upd.TaskStates = nil
	must(t, s.UpsertAllocs(4, []*structs.Allocation{upd}, 30))
	got = get[*structs.Allocation](t)(s.Snapshot().AllocByID(a.ID))
	if got.ClientStatus != structs.AllocClientStatusRunning || got.TaskStates == nil || got.DesiredDescription != "updated" {
		t.Fatalf("in-place update lost client state: %s %v %q", got.ClientStatus, got.TaskStates, got.DesiredDescription)
	}
	if got.CreateIndex != 2 || got.CreateTime != a.CreateTime {
		t.Fatalf("in-place update changed creation: %d %d", got.CreateIndex, got.CreateTime)
	}
}
