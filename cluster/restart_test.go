package cluster

import (
	"context"
	"errors"
	"testing"

	"github.com/droverhq/drover/internal/loopback"
)

// A server restarted on its bolt files keeps every acknowledged write, keeps
// its ID, and refuses to bootstrap again.
func TestRestartKeepsStateAndNeverBootstrapsAgain(t *testing.T) {
	dir := t.TempDir()
	addr := loopback.Addr(t)
	open := func() *testNode {
		f := &listFSM{}
		srv, err := New(Config{DataDir: dir, RaftAddr: addr, FSM: f, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Shutdown() })
		return &testNode{srv: srv, fsm: f}
	}
	first := open()
	if err := first.srv.Bootstrap([]Peer{{ID: first.srv.ID(), Address: first.srv.Addr(), Voter: true}}); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, []*testNode{first})
	for _, e := range []string{"a", "b", "c"} {
		if _, _, err := first.srv.ApplyBytes(context.Background(), []byte(e)); err != nil {
			t.Fatal(err)
		}
	}
	id := first.srv.ID()
	if err := first.srv.Shutdown(); err != nil {
		t.Fatal(err)
	}

	second := open()
	if second.srv.ID() != id {
		t.Fatalf("ID after restart %s, want %s", second.srv.ID(), id)
	}
	if has, err := second.srv.HasState(); err != nil || !has {
		t.Fatalf("HasState after restart = (%v, %v)", has, err)
	}
	err := second.srv.Bootstrap([]Peer{{ID: id, Address: addr, Voter: true}})
	if !errors.Is(err, ErrAlreadyBootstrapped) {
		t.Fatalf("Bootstrap after restart: %v, want ErrAlreadyBootstrapped", err)
	}
	waitLeader(t, []*testNode{second})
	waitFor(t, "the log to be replayed", func() bool { return second.fsm.len() == 3 })
}
