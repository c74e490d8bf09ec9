package state

import (
	"slices"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// TestLiveAllocsByNodeVersion: a node's version stays while nothing of
// its live allocs changes (another node's allocs, the node's stopped
// ones), and changes with each write of one of them: a placement, a
// client's report, a stop. Read lists what LiveAllocsByNode lists; a view
// of a write transaction gives no version.
func TestLiveAllocsByNodeVersion(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 10, statetest.Job("web", 6))
	n1, n2 := statetest.Node("n1"), statetest.Node("n2")
	var allocs []*structs.Allocation
	for i := range 6 {
		n := n1
		if i%2 == 1 {
			n = n2
		}
		allocs = append(allocs, statetest.Alloc(job, n, "e1", "", i))
	}
	must(t, s.UpsertAllocs(11, allocs, 0))

	version := func(node string) any {
		t.Helper()
		snap := s.Snapshot()
		v, read, err := snap.LiveAllocsByNodeVersion(node)
		must(t, err)
		if v == nil {
			t.Fatalf("node %s: no version from a read snapshot", node)
		}
		got, err := read()
		must(t, err)
		want, err := snap.LiveAllocsByNode(node)
		must(t, err)
		if !slices.Equal(got, want) {
			t.Fatalf("node %s: read lists %v, LiveAllocsByNode %v", node, allocIDs(got), allocIDs(want))
		}
		return v
	}
	v1, v2 := version(n1.ID), version(n2.ID)
	if v1 == v2 {
		t.Fatal("two nodes share a version")
	}
	if version(n1.ID) != v1 {
		t.Fatal("the version changed with nothing written")
	}
	step := func(what string, write func(index uint64), changed, same string, index uint64) {
		t.Helper()
		before := map[string]any{n1.ID: version(n1.ID), n2.ID: version(n2.ID)}
		write(index)
		if version(changed) == before[changed] {
			t.Fatalf("%s: node %s kept its version", what, changed)
		}
		if same != "" && version(same) != before[same] {
			t.Fatalf("%s: node %s's version changed", what, same)
		}
	}
	// A client's report on n2 leaves n1 as it was.
	step("a report on n2", func(index uint64) {
		up := allocs[1].Copy()
		up.ClientStatus = structs.AllocClientStatusRunning
		must(t, s.UpdateAllocsFromClient(index, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{up}}))
	}, n2.ID, n1.ID, 12)
	// A report on n1 changes n1's.
	step("a report on n1", func(index uint64) {
		up := allocs[0].Copy()
		up.ClientStatus = structs.AllocClientStatusRunning
		must(t, s.UpdateAllocsFromClient(index, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{up}}))
	}, n1.ID, n2.ID, 13)
	// A stop on n1 (its alloc leaves the live list).
	step("a stop on n1", func(index uint64) {
		stop := allocs[2].Copy()
		stop.DesiredStatus = structs.AllocDesiredStatusStop
		must(t, s.UpsertAllocs(index, []*structs.Allocation{stop}, 0))
	}, n1.ID, n2.ID, 14)
	// The stopped alloc's report changes n1's stopped allocs only: its
	// live ones keep their version.
	before := version(n1.ID)
	up := allocs[2].Copy()
	up.DesiredStatus = structs.AllocDesiredStatusStop
	up.ClientStatus = structs.AllocClientStatusComplete
	must(t, s.UpdateAllocsFromClient(15, &structs.AllocClientUpdateRequest{Allocs: []*structs.Allocation{up}}))
	if a, err := s.Snapshot().AllocByID(up.ID); err != nil || a == nil || a.ClientStatus != structs.AllocClientStatusComplete {
		t.Fatalf("the stopped alloc's report was not stored: %v %v", a, err)
	}
	if version(n1.ID) != before {
		t.Fatal("a report of a stopped alloc changed the node's live version")
	}
	// A placement on n2.
	step("a placement on n2", func(index uint64) {
		must(t, s.UpsertAllocs(index, []*structs.Allocation{statetest.Alloc(job, n2, "e2", "", 7)}, 0))
	}, n2.ID, n1.ID, 16)
	// A node with no allocs has a version, and its first alloc changes it.
	n3 := statetest.Node("n3")
	step("a first placement on n3", func(index uint64) {
		must(t, s.UpsertAllocs(index, []*structs.Allocation{statetest.Alloc(job, n3, "e2", "", 8)}, 0))
	}, n3.ID, n1.ID, 17)

	// A view of a write transaction names no version.
	must(t, s.update(18, func(wt *WriteTxn) error {
		v, read, err := wt.reader().LiveAllocsByNodeVersion(n1.ID)
		if err != nil {
			return err
		}
		if v != nil {
			t.Error("a write transaction's view gave a version")
		}
		got, err := read()
		if err == nil && len(got) != 2 {
			t.Errorf("write view: %d live allocs on n1, want 2", len(got))
		}
		return err
	}))
}
