package agent

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/cluster"
)

// gatedFSM applies nothing until its gate opens.
type gatedFSM struct{ gate chan struct{} }

func (f *gatedFSM) Apply(*raft.Log) any                 { <-f.gate; return nil }
func (f *gatedFSM) Snapshot() (raft.FSMSnapshot, error) { return nil, errors.New("no snapshots") }
func (f *gatedFSM) Restore(io.ReadCloser) error         { return nil }

// A server elected while its state is still applying the log does not
// serve: a read it answered then could be older than writes acknowledged
// before. It holds requests (no leader yet) until the post-election
// barrier completes. Before, a restarted server elected at once answered
// a read with its snapshot's value, thousands of writes old.
func TestElectedServerServesOnlyOnceItsStateCaughtUp(t *testing.T) {
	dir := t.TempDir()
	open := func(f raft.FSM) *cluster.Server {
		_, trans := raft.NewInmemTransport("")
		srv, err := cluster.New(cluster.Config{DataDir: dir, FSM: f, Transport: trans})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	ready := &gatedFSM{gate: make(chan struct{})}
	close(ready.gate)
	srv := open(ready)
	if err := srv.Bootstrap([]cluster.Peer{{ID: srv.ID(), Address: srv.Addr(), Voter: true}}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a leader", srv.LeaderReady)
	for range 3 {
		if _, _, err := srv.ApplyBytes(context.Background(), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.Shutdown(); err != nil {
		t.Fatal(err)
	}

	// Restarted on the same log, it is elected at once but its state
	// cannot apply the log yet.
	gated := &gatedFSM{gate: make(chan struct{})}
	srv = open(gated)
	var opened sync.Once
	release := func() { opened.Do(func() { close(gated.gate) }) }
	t.Cleanup(func() { release(); _ = srv.Shutdown() })
	waitUntil(t, "its election", srv.IsLeader)
	a := &Agent{raft: srv}
	time.Sleep(200 * time.Millisecond)
	if a.IsLeader() {
		t.Fatal("an elected server whose state has not applied the log serves")
	}
	if _, err := a.LeaderHTTPAddr(); !errors.Is(err, cluster.ErrNoLeader) {
		t.Fatalf("LeaderHTTPAddr while catching up: %v, want ErrNoLeader (requests held)", err)
	}
	release()
	waitUntil(t, "it to serve once its state caught up", a.IsLeader)
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
