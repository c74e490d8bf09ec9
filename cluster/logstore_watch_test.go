package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// fullDisk is a log store that fails every write once full is set, as
// raft-boltdb does on a full disk.
type fullDisk struct {
	raft.LogStore
	full atomic.Bool
}

var errNoSpace = errors.New(`unable to store logs within log store, err: "write raft.db: no space left on device"`)

func (f *fullDisk) StoreLog(l *raft.Log) error {
	if f.full.Load() {
		return errNoSpace
	}
	return f.LogStore.StoreLog(l)
}

func (f *fullDisk) StoreLogs(ls []*raft.Log) error {
	if f.full.Load() {
		return errNoSpace
	}
	return f.LogStore.StoreLogs(ls)
}

// A leader that cannot write its log steps down, and every write it had
// taken says why: the batch it failed to store with the store's error,
// those queued behind it ("leadership lost") with the same cause. Before,
// the latter said only "leadership lost while committing".
func TestLeaderWithFullDiskSaysWhy(t *testing.T) {
	disks := map[string]*fullDisk{}
	var nodes []*testNode
	var peers []Peer
	for _, id := range []string{"a", "b", "c"} {
		_, trans := raft.NewInmemTransport(raft.ServerAddress(id + "-addr"))
		f := &listFSM{}
		d := &fullDisk{}
		srv, err := New(Config{ID: id, FSM: f, Transport: trans, InMemory: true, Logger: testLogger(t),
			wrapLogs: func(l raft.LogStore) raft.LogStore { d.LogStore = l; return d }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Shutdown() })
		disks[id] = d
		nodes = append(nodes, &testNode{srv: srv, fsm: f, trans: trans})
		peers = append(peers, Peer{ID: id, Address: srv.Addr(), Voter: true})
	}
	for _, a := range nodes {
		for _, b := range nodes {
			if a != b {
				a.trans.Connect(b.trans.LocalAddr(), b.trans)
			}
		}
	}
	for _, nd := range nodes {
		if err := nd.srv.Bootstrap(peers); err != nil {
			t.Fatal(err)
		}
	}
	leader := waitLeader(t, nodes)
	disks[leader.srv.ID()].full.Store(true)

	// Many writes at once: some in the batch that fails, some behind it.
	var wg sync.WaitGroup
	errs := make([]error, 50)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, _, errs[i] = leader.srv.ApplyBytes(ctx, []byte(fmt.Sprintf("w%d", i)))
		}()
	}
	wg.Wait()
	refused := 0
	seen := map[string]int{}
	for _, err := range errs {
		if err == nil {
			continue
		}
		refused++
		seen[err.Error()]++
		if errors.Is(err, ErrNotLeader) {
			continue // sent after it stepped down: the caller forwards it
		}
		if !strings.Contains(err.Error(), "this server could not write its Raft log") || !strings.Contains(err.Error(), "no space left on device") {
			t.Errorf("a write refused without its cause: %v", err)
		}
	}
	t.Logf("answers: %v", seen)
	if refused == 0 {
		t.Fatal("every write was acknowledged by a leader that cannot write its log")
	}
	// The server with the full disk stands again after it steps down, and
	// its log is as long as the others': it may win several elections in
	// a row (each ends at its first write) before another does. CI saw it
	// win fifteen in ten seconds; a minute covers far longer runs.
	deadline := time.Now().Add(time.Minute)
	for {
		other := false
		for _, nd := range nodes {
			if nd != leader && nd.srv.LeaderReady() {
				other = true
			}
		}
		if other {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for another leader")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
