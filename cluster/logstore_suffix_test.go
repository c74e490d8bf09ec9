package cluster

import (
	"errors"
	"slices"
	"testing"

	"github.com/hashicorp/raft"
)

// A follower holding entries of its own old term gets the new leader's
// conflicting entries while its disk is full: the truncation goes
// through, the append fails. Once there is space again the leader's
// same request must succeed. Without the guard the store had lost the old
// suffix while raft still believed it held it, and refused every request
// ("failed to get log entry") until a restart.
func TestFollowerCatchesUpAfterAppendFailedOnFullDisk(t *testing.T) {
	disk := &fullDisk{}
	f, leaderSends := lonelyFollower(t, []*raft.Log{logCmd(2, 1, "x2"), logCmd(3, 1, "x3"), logCmd(4, 1, "old4"), logCmd(5, 1, "old5")},
		func(l raft.LogStore) raft.LogStore { disk.LogStore = l; return disk })
	send := func() raft.AppendEntriesResponse {
		t.Helper()
		return leaderSends(&raft.AppendEntriesRequest{PrevLogEntry: 3, PrevLogTerm: 1, LeaderCommitIndex: 4,
			Entries: []*raft.Log{logCmd(4, 2, "new4")}})
	}

	disk.full.Store(true)
	if resp := send(); resp.Success {
		t.Fatal("a follower with a full disk took entries")
	}
	var l raft.Log
	if err := disk.GetLog(5, &l); err != nil || string(l.Data) != "old5" {
		t.Fatalf("the old suffix after the failed append: %v %q (raft still believes it holds it)", err, l.Data)
	}

	disk.full.Store(false)
	if resp := send(); !resp.Success {
		t.Fatalf("the leader's request refused once there was space: %+v", resp)
	}
	waitFor(t, "the leader's entry applied", func() bool { return len(f.applied()) >= 3 })
	if got := f.applied(); !slices.Equal(got, []string{"x2", "x3", "new4"}) {
		t.Fatalf("applied %q, want [x2 x3 new4]", got)
	}
	if last, _ := disk.LastIndex(); last != 4 {
		t.Fatalf("the store ends at %d, want 4 (old5 deleted after the new entry was written)", last)
	}
	if err := disk.GetLog(5, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("old5 still in the store: %v %q", err, l.Data)
	}
}

// The guard's bookkeeping over an in-memory store: a held suffix delete
// reads as done, is done by the next store, and is dropped when the store
// fails.
func TestSuffixGuard(t *testing.T) {
	mk := func() (*suffixGuard, *fullDisk) {
		d := &fullDisk{LogStore: raft.NewInmemStore()}
		g := &suffixGuard{LogStore: d}
		for i := uint64(1); i <= 10; i++ {
			if err := g.StoreLog(&raft.Log{Index: i, Term: 1}); err != nil {
				t.Fatal(err)
			}
		}
		return g, d
	}
	last := func(g *suffixGuard) uint64 {
		i, err := g.LastIndex()
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	t.Run("held then done", func(t *testing.T) {
		g, d := mk()
		must(t, g.DeleteRange(6, 10))
		if last(g) != 5 {
			t.Fatalf("last %d while held, want 5", last(g))
		}
		var l raft.Log
		if err := g.GetLog(7, &l); !errors.Is(err, raft.ErrLogNotFound) {
			t.Fatalf("GetLog(7) while held: %v", err)
		}
		if i, _ := d.LastIndex(); i != 10 {
			t.Fatalf("the store was truncated before the write: last %d", i)
		}
		must(t, g.StoreLogs([]*raft.Log{{Index: 6, Term: 2}, {Index: 7, Term: 2}}))
		if i, _ := d.LastIndex(); i != 7 {
			t.Fatalf("store last %d after the write, want 7", i)
		}
		must(t, g.GetLog(7, &l))
		if l.Term != 2 {
			t.Fatalf("entry 7 term %d, want 2", l.Term)
		}
	})
	t.Run("write fails", func(t *testing.T) {
		g, d := mk()
		must(t, g.DeleteRange(6, 10))
		d.full.Store(true)
		if err := g.StoreLog(&raft.Log{Index: 6, Term: 2}); err == nil {
			t.Fatal("no error from a full disk")
		}
		if last(g) != 10 {
			t.Fatalf("last %d after the failed write, want 10 (the old suffix kept)", last(g))
		}
	})
	t.Run("compaction passes through", func(t *testing.T) {
		g, d := mk()
		must(t, g.DeleteRange(1, 4))
		if i, _ := d.FirstIndex(); i != 5 {
			t.Fatalf("first %d after compaction, want 5", i)
		}
		if last(g) != 10 {
			t.Fatalf("last %d", last(g))
		}
	})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
