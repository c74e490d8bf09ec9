package state

import (
	"errors"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func TestUpsertNodeKeepsCreateIndex(t *testing.T) {
	s := newStore(t)
	n := statetest.Node("a")
	must(t, s.UpsertNode(5, n))
	must(t, s.UpsertNode(9, n))
	got := get[*structs.Node](t)(s.Snapshot().NodeByID(n.ID))
	if got.CreateIndex != 5 || got.ModifyIndex != 9 {
		t.Fatalf("indexes = %d/%d, want 5/9", got.CreateIndex, got.ModifyIndex)
	}
	if n.CreateIndex != 0 {
		t.Fatal("store modified the caller's node")
	}
	if idx := get[uint64](t)(s.Snapshot().Index(TableNodes)); idx != 9 {
		t.Fatalf("nodes index = %d, want 9", idx)
	}
	if err := s.UpsertNode(10, &structs.Node{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("node without ID: err = %v", err)
	}
}

func TestNodeDownMarksAllocsLost(t *testing.T) {
	s := newStore(t)
	n, other := statetest.Node("a"), statetest.Node("b")
	must(t, s.UpsertNode(1, n))
	must(t, s.UpsertNode(2, other))
	job := registerJob(t, s, 3, statetest.Job("web", 3))
	running := statetest.Alloc(job, n, "e", "", 0)
	done := statetest.Alloc(job, n, "e", "", 1)
	done.ClientStatus = structs.AllocClientStatusComplete
	elsewhere := statetest.Alloc(job, other, "e", "", 2)
	must(t, s.UpsertAllocs(4, []*structs.Allocation{running, done, elsewhere}, 100))

	eval := statetest.Eval("node-down", job)
	eval.TriggeredBy = structs.EvalTriggerNodeUpdate
	must(t, s.UpdateNodeStatus(5, &structs.NodeUpdateStatusRequest{
		NodeID: n.ID, Status: structs.NodeStatusDown, UpdatedAt: 777,
		Evals: []*structs.Evaluation{eval},
	}))
	snap := s.Snapshot()
	gotNode := get[*structs.Node](t)(snap.NodeByID(n.ID))
	if gotNode.Status != structs.NodeStatusDown || gotNode.StatusUpdatedAt != 777 {
		t.Fatalf("node = %s at %d", gotNode.Status, gotNode.StatusUpdatedAt)
	}
	want := map[string]string{
		running.ID:   structs.AllocClientStatusLost,
		done.ID:      structs.AllocClientStatusComplete,
		elsewhere.ID: structs.AllocClientStatusPending,
	}
	for id, status := range want {
		a := get[*structs.Allocation](t)(snap.AllocByID(id))
		if a.ClientStatus != status {
			t.Errorf("alloc %s: client status %q, want %q", a.Name, a.ClientStatus, status)
		}
	}
	if e := get[*structs.Evaluation](t)(snap.EvalByID(eval.ID)); e == nil || e.CreateIndex != 5 {
		t.Fatalf("eval not stored with the status change: %+v", e)
	}
	if err := s.UpdateNodeStatus(6, &structs.NodeUpdateStatusRequest{NodeID: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown node: err = %v", err)
	}
}

func TestNodesByIDPrefix(t *testing.T) {
	s := newStore(t)
	a, b := statetest.Node("a"), statetest.Node("b")
	must(t, s.UpsertNode(1, a))
	must(t, s.UpsertNode(2, b))
	got := get[[]*structs.Node](t)(s.Snapshot().NodesByIDPrefix(a.ID[:6]))
	if len(got) != 1 || got[0].ID != a.ID {
		t.Fatalf("prefix lookup = %v", got)
	}
	if all := get[[]*structs.Node](t)(s.Snapshot().Nodes()); len(all) != 2 {
		t.Fatalf("Nodes() = %d nodes", len(all))
	}
}

func TestDeleteNodes(t *testing.T) {
	s := newStore(t)
	a, b := statetest.Node("a"), statetest.Node("b")
	must(t, s.UpsertNode(1, a))
	must(t, s.UpsertNode(2, b))
	if err := s.DeleteNodes(3, []string{a.ID, "missing"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete with an unknown ID: err = %v", err)
	}
	if n := get[*structs.Node](t)(s.Snapshot().NodeByID(a.ID)); n == nil {
		t.Fatal("a failed delete removed a node")
	}
	must(t, s.DeleteNodes(4, []string{a.ID}))
	snap := s.Snapshot()
	if n := get[*structs.Node](t)(snap.NodeByID(a.ID)); n != nil {
		t.Fatal("node not deleted")
	}
	if get[uint64](t)(snap.Index(TableNodes)) != 4 {
		t.Fatal("delete did not bump the nodes index")
	}
}
