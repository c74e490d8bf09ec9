package state

import (
	"context"
	"time"

	memdb "github.com/hashicorp/go-memdb"
)

// QueryFunc reads from snap (which records its reads in ws) and returns a
// result with the index it reflects (usually Snapshot.Index of the tables
// read).
type QueryFunc func(ws memdb.WatchSet, snap *Snapshot) (any, uint64, error)

// BlockingQuery runs fn on a fresh snapshot. If the index fn returns is at
// most minIndex, it waits until something fn read changes, then runs fn
// again; it returns as soon as the index passes minIndex, or at maxWait (or
// when ctx ends, or the store is abandoned by a snapshot restore) with the
// latest result. minIndex 0 never blocks. An error from fn ends the query.
func (s *Store) BlockingQuery(ctx context.Context, minIndex uint64, maxWait time.Duration, fn QueryFunc) (any, uint64, error) {
	var cancel context.CancelFunc = func() {}
	if maxWait > 0 {
		ctx, cancel = context.WithTimeout(ctx, maxWait)
	}
	defer cancel()
	for {
		ws := memdb.NewWatchSet()
		ws.Add(s.abandonCh)
		snap := s.Snapshot().WithWatch(ws)
		res, idx, err := fn(ws, snap)
		if err != nil || minIndex == 0 || idx > minIndex {
			return res, idx, err
		}
		select {
		case <-s.abandonCh:
			return res, idx, nil
		default:
		}
		if ws.WatchCtx(ctx) != nil {
			// Timed out or cancelled: answer with what is current.
			return res, idx, nil
		}
	}
}
