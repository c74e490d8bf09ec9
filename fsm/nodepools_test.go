package fsm

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
)

// TestNodePoolsAreAppliedAndSnapshotted: the node pool entries write the
// table, the same entries make the same state, refusals leave nothing, and
// a snapshot carries the pools.
func TestNodePoolsAreAppliedAndSnapshotted(t *testing.T) {
	f := newTestFSM(t)
	var log [][]byte
	apply := func(index uint64, mt MessageType, req any) any {
		log = append(log, entry(t, mt, req))
		return applyOK(t, f, index, mt, req)
	}
	apply(1, NodePoolUpsertRequestType, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{
		{Name: "gpu", Description: "GPUs", Meta: map[string]string{"k": "v"},
			SchedulerConfiguration: &structs.NodePoolSchedulerConfiguration{SchedulerAlgorithm: "spread", MemoryOversubscriptionEnabled: statetest.Bool(false)}},
		{Name: "scratch"},
	}})
	n := statetest.Node("a")
	n.NodePool = "edge" // unknown: the registration creates it
	apply(2, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n})
	apply(3, NodePoolDeleteRequestType, &structs.NodePoolDeleteRequest{Names: []string{"scratch"}})

	pools, err := snap(f).NodePools()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pools {
		names = append(names, p.Name)
	}
	if got := names; len(got) != 4 || got[0] != "all" || got[1] != "default" || got[2] != "edge" || got[3] != "gpu" {
		t.Fatalf("pools: %v", got)
	}
	gpu, _ := snap(f).NodePoolByName("gpu")
	if gpu.Description != "GPUs" || gpu.SchedulerConfiguration.SchedulerAlgorithm != "spread" || *gpu.SchedulerConfiguration.MemoryOversubscriptionEnabled {
		t.Fatalf("gpu: %+v", gpu)
	}

	// Refusals: the built-ins, a pool in use, an unknown one.
	for _, c := range []struct {
		mt   MessageType
		req  any
		want error
	}{
		{NodePoolUpsertRequestType, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{{Name: "default"}}}, state.ErrInvalid},
		{NodePoolUpsertRequestType, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{{Name: "bad name"}}}, state.ErrInvalid},
		{NodePoolDeleteRequestType, &structs.NodePoolDeleteRequest{Names: []string{"all"}}, state.ErrInvalid},
		{NodePoolDeleteRequestType, &structs.NodePoolDeleteRequest{Names: []string{"edge"}}, state.ErrConflict},
		{NodePoolDeleteRequestType, &structs.NodePoolDeleteRequest{Names: []string{"nope"}}, state.ErrNotFound},
	} {
		before := dump(t, f)
		resp := f.Apply(&raft.Log{Index: 9, Type: raft.LogCommand, Data: entry(t, c.mt, c.req)})
		if err, _ := resp.(error); !errors.Is(err, c.want) {
			t.Errorf("%s %+v: %v, want %v", c.mt, c.req, resp, c.want)
		}
		if dump(t, f) != before {
			t.Errorf("%s %+v: a refusal changed the state", c.mt, c.req)
		}
	}

	h := newTestFSM(t)
	for i, e := range log {
		if err, ok := h.Apply(&raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: e}).(error); ok {
			t.Fatal(err)
		}
	}
	if dump(t, f) != dump(t, h) {
		t.Fatal("the same entries made different states")
	}

	fs, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fs.(*fsmSnapshot).write(&buf); err != nil {
		t.Fatal(err)
	}
	g := newTestFSM(t)
	if err := g.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	if dump(t, f) != dump(t, g) {
		t.Fatal("restored state differs")
	}
	if p, _ := snap(g).NodePoolByName("gpu"); p == nil || p.CreateIndex != 1 || p.Meta["k"] != "v" {
		t.Fatalf("restored gpu: %+v", p)
	}
}

func TestNodePoolTypesAreBuild2(t *testing.T) {
	for _, mt := range []MessageType{NodePoolUpsertRequestType, NodePoolDeleteRequestType} {
		if err := CheckWritable(mt, 1); !errors.Is(err, ErrServersTooOld) {
			t.Errorf("%s with a build-1 server: %v", mt, err)
		}
		if err := CheckWritable(mt, 2); err != nil {
			t.Errorf("%s with build-2 servers: %v", mt, err)
		}
	}
}

// TestNodePoolEvents: pool writes publish NodePool events, as Nomad's; a
// node registering in an unknown pool publishes the pool it creates.
func TestNodePoolEvents(t *testing.T) {
	f := newTestFSM(t)
	buf := stream.NewBuffer(16)
	f.SetEvents(buf)
	sub := buf.Subscribe(stream.SubscribeRequest{Topics: map[stream.Topic][]string{stream.TopicNodePool: nil}, Namespace: "*"})
	defer sub.Close()
	applyOK(t, f, 1, NodePoolUpsertRequestType, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{{Name: "gpu"}}})
	n := statetest.Node("a")
	n.NodePool = "edge"
	applyOK(t, f, 2, NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: n})
	applyOK(t, f, 3, NodePoolDeleteRequestType, &structs.NodePoolDeleteRequest{Names: []string{"gpu"}})
	got := strings.Join(drain(t, sub), "\n")
	want := "1 NodePoolUpserted NodePool:gpu \n2 NodeRegistration NodePool:edge \n3 NodePoolDeleted NodePool:gpu  (deleted)"
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
}
