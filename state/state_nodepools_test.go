package state

import (
	"errors"
	"strings"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func poolNames(t *testing.T, s *Store) string {
	t.Helper()
	pools, err := s.Snapshot().NodePools()
	must(t, err)
	var names []string
	for _, p := range pools {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

func TestNodePoolsBuiltIn(t *testing.T) {
	s := newStore(t)
	if got := poolNames(t, s); got != "all,default" {
		t.Fatalf("pools of an empty store: %s", got)
	}
	p := get[*structs.NodePool](t)(s.Snapshot().NodePoolByName("default"))
	if p == nil || p.Description != structs.NodePoolDefaultDescription || p.CreateIndex != 1 || p.NodeIdentityTTL != structs.DefaultNodePoolNodeIdentityTTL {
		t.Fatalf("default: %+v", p)
	}
	for _, name := range []string{"all", "default"} {
		err := s.UpsertNodePools(5, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{{Name: name, Description: "x"}}})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `modifying node pool "`+name+`" is not allowed`) {
			t.Errorf("upsert %s: %v", name, err)
		}
		err = s.DeleteNodePools(6, &structs.NodePoolDeleteRequest{Names: []string{name}})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `deleting node pool "`+name+`" is not allowed`) {
			t.Errorf("delete %s: %v", name, err)
		}
	}
	if idx := get[uint64](t)(s.Snapshot().Index(TableNodePools)); idx != 0 {
		t.Errorf("refused writes changed the index: %d", idx)
	}
}

func TestNodePoolsUpsertDelete(t *testing.T) {
	s := newStore(t)
	must(t, s.UpsertNodePools(10, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{
		{Name: "dev-1", Description: "d", Meta: map[string]string{"team": "a"},
			SchedulerConfiguration: &structs.NodePoolSchedulerConfiguration{SchedulerAlgorithm: "spread", MemoryOversubscriptionEnabled: statetest.Bool(true)}},
	}}))
	must(t, s.UpsertNodePools(12, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{{Name: "dev-1", Description: "e"}}}))
	p := get[*structs.NodePool](t)(s.Snapshot().NodePoolByName("dev-1"))
	if p.CreateIndex != 10 || p.ModifyIndex != 12 || p.Description != "e" || p.NodeIdentityTTL != structs.DefaultNodePoolNodeIdentityTTL {
		t.Fatalf("dev-1 after update: %+v", p)
	}
	if got := poolNames(t, s); got != "all,default,dev-1" {
		t.Fatalf("pools: %s", got)
	}
	if got := get[[]*structs.NodePool](t)(s.Snapshot().NodePoolsByPrefix("d")); len(got) != 2 || got[0].Name != "default" || got[1].Name != "dev-1" {
		t.Fatalf("prefix d: %v", got)
	}
	for _, bad := range []*structs.NodePool{
		{Name: "a/b"}, {Name: ""}, {Name: strings.Repeat("x", 129)},
		{Name: "ok", Description: strings.Repeat("x", 257)},
		{Name: "ok", SchedulerConfiguration: &structs.NodePoolSchedulerConfiguration{SchedulerAlgorithm: "random"}},
	} {
		err := s.UpsertNodePools(13, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{bad}})
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("upsert %q: %v", bad.Name, err)
		}
	}
	if err := s.DeleteNodePools(14, &structs.NodePoolDeleteRequest{Names: []string{"nope"}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete unknown: %v", err)
	}
	must(t, s.DeleteNodePools(15, &structs.NodePoolDeleteRequest{Names: []string{"dev-1"}}))
	if got := poolNames(t, s); got != "all,default" {
		t.Fatalf("pools after delete: %s", got)
	}
	if idx := get[uint64](t)(s.Snapshot().Index(TableNodePools)); idx != 15 {
		t.Errorf("index %d, want 15", idx)
	}
}

// TestNodePoolInUse: a pool that nodes or jobs that are not dead use is
// not deleted, with Nomad's words.
func TestNodePoolInUse(t *testing.T) {
	s := newStore(t)
	must(t, s.UpsertNodePools(10, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{{Name: "gpu"}, {Name: "web"}}}))
	n := statetest.Node("n1")
	n.NodePool = "gpu"
	must(t, s.UpsertNode(11, n))
	j := statetest.Job("j1", 1)
	j.NodePool = "web"
	registerJob(t, s, 12, j)

	err := s.DeleteNodePools(13, &structs.NodePoolDeleteRequest{Names: []string{"gpu"}, Region: "r1"})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), `node pool "gpu" has nodes in regions: [r1]`) {
		t.Errorf("delete gpu: %v", err)
	}
	err = s.DeleteNodePools(13, &structs.NodePoolDeleteRequest{Names: []string{"web"}})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), `node pool "web" has non-terminal jobs in regions: [global]`) {
		t.Errorf("delete web: %v", err)
	}
	// Stopped and purged, the job no longer holds its pool.
	_, err = s.DeregisterJob(14, &structs.JobDeregisterRequest{Namespace: j.Namespace, JobID: j.ID, Purge: true})
	must(t, err)
	must(t, s.DeleteNodePools(15, &structs.NodePoolDeleteRequest{Names: []string{"web"}}))
}

// TestNodeRegisterCreatesPool: a node registering in a pool that does not
// exist creates it, as Nomad's; a registration again changes nothing.
func TestNodeRegisterCreatesPool(t *testing.T) {
	s := newStore(t)
	n := statetest.Node("n1")
	n.NodePool = "edge"
	must(t, s.UpsertNode(7, n))
	must(t, s.UpsertNode(9, n))
	p := get[*structs.NodePool](t)(s.Snapshot().NodePoolByName("edge"))
	if p == nil || p.CreateIndex != 7 || p.ModifyIndex != 7 || p.NodeIdentityTTL != structs.DefaultNodePoolNodeIdentityTTL {
		t.Fatalf("edge: %+v", p)
	}
	if got := get[[]*structs.Node](t)(s.Snapshot().NodesInPool("edge")); len(got) != 1 {
		t.Fatalf("nodes in edge: %d", len(got))
	}
	if got := get[[]*structs.Node](t)(s.Snapshot().NodesInPool("default")); len(got) != 0 {
		t.Fatalf("nodes in default: %d", len(got))
	}
	if got := get[[]*structs.Node](t)(s.Snapshot().NodesInPool("all")); len(got) != 1 {
		t.Fatalf("nodes in all: %d", len(got))
	}
}

// TestRestoreDerivesNodePools: a state from a build without the table
// (nodes in a pool, no pool rows) comes up with the built-ins and the
// pools its nodes use; restored rows are kept as they are.
func TestRestoreDerivesNodePools(t *testing.T) {
	src := newStore(t)
	must(t, src.UpsertNodePools(3, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{{Name: "kept", Description: "k"}}}))
	dst := newStore(t)
	r := dst.Restorer()
	n1, n2 := statetest.Node("n1"), statetest.Node("n2")
	n1.NodePool, n1.CreateIndex = "edge", 20
	n2.NodePool, n2.CreateIndex = "kept", 21
	must(t, r.Insert(TableNodes, n1))
	must(t, r.Insert(TableNodes, n2))
	must(t, src.Snapshot().Each(TableNodePools, func(obj any) error { return r.Insert(TableNodePools, obj) }))
	r.Commit()
	if got := poolNames(t, dst); got != "all,default,edge,kept" {
		t.Fatalf("pools: %s", got)
	}
	if p := get[*structs.NodePool](t)(dst.Snapshot().NodePoolByName("edge")); p.CreateIndex != 20 {
		t.Errorf("edge: %+v", p)
	}
	if p := get[*structs.NodePool](t)(dst.Snapshot().NodePoolByName("kept")); p.Description != "k" || p.CreateIndex != 3 {
		t.Errorf("kept: %+v", p)
	}
	// A full round trip keeps everything.
	if a, b := get[[]byte](t)(dst.Snapshot().Dump()), get[[]byte](t)(restoredCopy(t, dst).Snapshot().Dump()); string(a) != string(b) {
		t.Error("a restored copy's dump differs")
	}
}
