package state

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/internal/memdbtest"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// A node's entry moves with the servers' changes to its allocations
// (placement, stop, deletion), not with its client's reports; another
// node's entry is untouched.
func TestNodeAllocsIndexMovesOnlyWithServerChanges(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 1, statetest.Job("web", 2))
	n1, n2 := statetest.Node("n1"), statetest.Node("n2")
	a := statetest.Alloc(job, n1, "", "", 0)
	b := statetest.Alloc(job, n2, "", "", 1)
	must(t, s.UpsertAllocs(2, []*structs.Allocation{a, b}, 2))
	idx := func(node *structs.Node) uint64 {
		t.Helper()
		i, err := s.Snapshot().NodeAllocsIndex(node.ID)
		must(t, err)
		return i
	}
	if idx(n1) != 2 || idx(n2) != 2 || idx(statetest.Node("n3")) != 0 {
		t.Fatalf("after placement: %d, %d, %d; want 2, 2, 0", idx(n1), idx(n2), idx(statetest.Node("n3")))
	}

	ws := memdb.NewWatchSet()
	_, err := s.Snapshot().WithWatch(ws).NodeAllocsIndex(n1.ID)
	must(t, err)
	must(t, s.UpdateAllocsFromClient(3, &structs.AllocClientUpdateRequest{
		Allocs: []*structs.Allocation{{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning}}, UpdatedAt: 3,
	}))
	if idx(n1) != 2 || memdbtest.Fired(ws) {
		t.Fatalf("the client's report moved n1's entry (%d) or fired its watch (%v)", idx(n1), memdbtest.Fired(ws))
	}
	must(t, s.update(4, func(tx *WriteTxn) error {
		return s.StopAllocTxn(tx, &structs.AllocStopUpdate{AllocID: a.ID, DesiredDescription: structs.AllocNotNeeded}, 4)
	}))
	if idx(n1) != 4 || idx(n2) != 2 || !memdbtest.Fired(ws) {
		t.Fatalf("after the stop: n1 %d, n2 %d, watch fired %v; want 4, 2, true", idx(n1), idx(n2), memdbtest.Fired(ws))
	}
	must(t, s.update(5, func(tx *WriteTxn) error { return s.deleteAllocsTxn(tx, []string{b.ID}) }))
	if idx(n2) != 5 || idx(n1) != 4 {
		t.Fatalf("after the deletion: n2 %d, n1 %d; want 5, 4", idx(n2), idx(n1))
	}
}
