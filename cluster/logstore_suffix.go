package cluster

import (
	"sync"

	"github.com/hashicorp/raft"
)

// suffixGuard keeps the log store what raft believes it is when a
// follower's append fails after a truncation. To take a new leader's
// entries that conflict with its own, a follower deletes its log from the
// first conflicting index to the end, then stores the new entries; raft
// updates its in-memory last index only when the store succeeds. On a full
// disk the delete succeeds (bolt reuses the pages it has) and the store
// fails: raft still believes it has its old last entry, which the store
// no longer holds, and refuses every later request from the leader (the
// previous entry "not found", or of the wrong term), so the server never
// catches up until it restarts.
//
// The guard holds such a suffix delete (a range from past the first entry
// to the last) instead of doing it, and does it with the next store: the
// new entries are written first, over the old ones at the same indexes,
// then whatever is left of the old suffix past them is deleted. When that
// write fails the held delete is dropped, and the store still ends where
// raft believes it does; the leader's next request finds the conflict
// again. While a delete is held the store answers as if it were done.
// Compactions (ranges from the first entry) pass through at once.
type suffixGuard struct {
	raft.LogStore

	mu   sync.Mutex
	held bool
	from uint64 // held delete: [from, to]
	to   uint64
}

// DeleteRange holds a suffix delete, or deletes at once.
func (g *suffixGuard) DeleteRange(lo, hi uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	first, err := g.LogStore.FirstIndex()
	if err != nil {
		return err
	}
	last, err := g.LogStore.LastIndex()
	if err != nil {
		return err
	}
	if last > 0 && lo > first && hi >= last && lo <= hi {
		if g.held {
			// A second truncation before a store: both ranges run to
			// the end; keep the wider.
			lo, hi = min(lo, g.from), max(hi, g.to)
		}
		g.held, g.from, g.to = true, lo, hi
		return nil
	}
	if err := g.LogStore.DeleteRange(lo, hi); err != nil {
		return err
	}
	if g.held && lo <= g.from && hi >= g.to {
		g.held = false
	}
	return nil
}

// StoreLog stores one entry (see StoreLogs).
func (g *suffixGuard) StoreLog(l *raft.Log) error { return g.StoreLogs([]*raft.Log{l}) }

// StoreLogs writes the entries, then the held delete's remainder.
func (g *suffixGuard) StoreLogs(ls []*raft.Log) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.LogStore.StoreLogs(ls); err != nil {
		g.held = false // the old suffix stays, as raft believes
		return err
	}
	if !g.held || len(ls) == 0 {
		return nil
	}
	after := ls[len(ls)-1].Index + 1
	if after < g.from {
		after = g.from // the entries did not reach the held range
	}
	if after <= g.to {
		if err := g.LogStore.DeleteRange(after, g.to); err != nil {
			// The entries are written and raft will take them as its
			// last; what is left past them must still go.
			g.from = after
			return err
		}
	}
	g.held = false
	return nil
}

// LastIndex is the store's, before a held delete.
func (g *suffixGuard) LastIndex() (uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	last, err := g.LogStore.LastIndex()
	if err != nil || !g.held || last < g.from {
		return last, err
	}
	return g.from - 1, nil
}

// GetLog reports an entry of a held delete as missing.
func (g *suffixGuard) GetLog(index uint64, l *raft.Log) error {
	g.mu.Lock()
	held := g.held && index >= g.from && index <= g.to
	g.mu.Unlock()
	if held {
		return raft.ErrLogNotFound
	}
	return g.LogStore.GetLog(index, l)
}

// IsMonotonic passes on the wrapped store's answer (raft.MonotonicLogStore).
func (g *suffixGuard) IsMonotonic() bool {
	m, ok := g.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}
