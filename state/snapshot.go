package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
)

// Snapshot is a consistent read-only view of the store. The resource
// getters live beside each resource's writes (state_jobs.go, ...). A
// snapshot handed out by BlockingQuery adds the watch channel of everything
// it reads to the query's watch set, so the query wakes when that data
// changes.
type Snapshot struct {
	txn *memdb.Txn
	ws  memdb.WatchSet
	// writing: the view is of a write transaction, whose trees may still
	// change in place (see LiveAllocsByNodeVersion).
	writing bool
}

// WithWatch returns a view of the same snapshot that adds what it reads to
// ws.
func (s *Snapshot) WithWatch(ws memdb.WatchSet) *Snapshot {
	return &Snapshot{txn: s.txn, ws: ws, writing: s.writing}
}

func (s *Snapshot) watch(ch <-chan struct{}) {
	if s.ws != nil && ch != nil {
		s.ws.Add(ch)
	}
}

// first returns the single object matching index and args, or nil.
func (s *Snapshot) first(table, index string, args ...any) (any, error) {
	ch, obj, err := s.txn.FirstWatch(table, index, args...)
	if err != nil {
		return nil, fmt.Errorf("state: %s lookup: %w", table, err)
	}
	s.watch(ch)
	return obj, nil
}

// list returns every object matching index and args, in index order.
func list[T any](s *Snapshot, table, index string, args ...any) ([]T, error) {
	it, err := s.txn.Get(table, index, args...)
	if err != nil {
		return nil, fmt.Errorf("state: %s lookup: %w", table, err)
	}
	s.watch(it.WatchCh())
	var out []T
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(T))
	}
	return out, nil
}

// getOne is first typed; nil when absent.
func getOne[T any](s *Snapshot, table, index string, args ...any) (T, error) {
	var zero T
	obj, err := s.first(table, index, args...)
	if err != nil || obj == nil {
		return zero, err
	}
	return obj.(T), nil
}

// Index returns the raft index that last modified table, 0 if never.
func (s *Snapshot) Index(table string) (uint64, error) {
	e, err := getOne[*IndexEntry](s, TableIndex, "id", table)
	if err != nil || e == nil {
		return 0, err
	}
	return e.Value, nil
}

// MaxIndex returns the highest of the tables' indexes.
func (s *Snapshot) MaxIndex(tables ...string) (uint64, error) {
	var max uint64
	for _, t := range tables {
		i, err := s.Index(t)
		if err != nil {
			return 0, err
		}
		max = maxU(max, i)
	}
	return max, nil
}

// LatestIndex returns the highest index of any table.
func (s *Snapshot) LatestIndex() (uint64, error) { return s.MaxIndex(Tables...) }

func maxU(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}
