package fsm

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// TestUnderRaft runs the FSM under a real single-server hashicorp/raft
// (in-memory log and transport, file snapshots in a temp dir): responses
// reach the ApplyFuture, and a raft snapshot restores into another FSM.
func TestUnderRaft(t *testing.T) {
	f := newTestFSM(t)
	conf := raft.DefaultConfig()
	conf.LocalID = "s1"
	conf.Logger = nil
	conf.LogOutput = tlogWriter{t}
	conf.HeartbeatTimeout, conf.ElectionTimeout = 50*time.Millisecond, 50*time.Millisecond
	conf.LeaderLeaseTimeout, conf.CommitTimeout = 50*time.Millisecond, 5*time.Millisecond
	logs := raft.NewInmemStore()
	addr, trans := raft.NewInmemTransport("")
	snaps, err := raft.NewFileSnapshotStore(t.TempDir(), 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg := raft.Configuration{Servers: []raft.Server{{ID: conf.LocalID, Address: addr}}}
	if err := raft.BootstrapCluster(conf, logs, logs, snaps, trans, cfg); err != nil {
		t.Fatal(err)
	}
	r, err := raft.NewRaft(conf, f, logs, logs, snaps, trans)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Shutdown().Error() }()
	deadline := time.After(10 * time.Second)
	for r.State() != raft.Leader {
		select {
		case <-deadline:
			t.Fatal("no leader")
		case <-time.After(10 * time.Millisecond):
		}
	}

	apply := func(mt MessageType, req any) (any, uint64) {
		t.Helper()
		fut := r.Apply(entry(t, mt, req), 5*time.Second)
		if err := fut.Error(); err != nil {
			t.Fatal(err)
		}
		return fut.Response(), fut.Index()
	}
	job := statetest.Job("web", 1)
	resp, index := apply(JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: statetest.Eval("e", job)})
	res, ok := resp.(*structs.JobRegisterResult)
	if !ok || res.JobModifyIndex != index {
		t.Fatalf("register response %#v at index %d", resp, index)
	}
	resp, _ = apply(DeploymentPromoteRequestType, &structs.DeploymentPromoteRequest{DeploymentID: "nope", All: true})
	if err, _ := resp.(error); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("promote unknown deployment: response %#v", resp)
	}
	apply(NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: statetest.Node("a")})

	if err := r.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	metas, err := snaps.List()
	if err != nil || len(metas) == 0 {
		t.Fatalf("no snapshot stored: %v", err)
	}
	_, rc, err := snaps.Open(metas[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	g := newTestFSM(t)
	if err := g.Restore(rc); err != nil {
		t.Fatal(err)
	}
	if dump(t, f) != dump(t, g) {
		t.Fatal("state restored from a raft snapshot differs")
	}
}
