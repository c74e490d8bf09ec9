package server

import (
	"sync/atomic"

	"github.com/droverhq/drover/scheduler"
	"github.com/droverhq/drover/state"
)

// nodeTables keeps the scheduler's NodeTable of the latest nodes table
// the passes read, so that the passes between two changes of the nodes
// (a rollout's thousand) share one: listing the nodes, indexing them and
// building each one's placement state cost a pass a pass over every node.
type nodeTables struct {
	latest atomic.Pointer[nodeTableAt]
}

// nodeTableAt is a table with the store and the nodes table index it was
// read at.
type nodeTableAt struct {
	store *state.Store
	index uint64
	table *scheduler.NodeTable
}

// kept returns the latest table kept for st, of any version of the nodes
// (nil when none): its kept node usage is named by the allocations'
// versions, whatever the nodes (see checkPlan).
func (t *nodeTables) kept(st *state.Store) *scheduler.NodeTable {
	if c := t.latest.Load(); c != nil && c.store == st {
		return c.table
	}
	return nil
}

// get returns the NodeTable of snap's nodes, taken from st: the one kept
// when the nodes table has not changed since, else a new one (kept for
// the next pass unless a newer one is kept meanwhile).
func (t *nodeTables) get(st *state.Store, snap *state.Snapshot) (*scheduler.NodeTable, error) {
	idx, err := snap.Index(state.TableNodes)
	if err != nil {
		return nil, err
	}
	if c := t.latest.Load(); c != nil && c.store == st && c.index == idx {
		return c.table, nil
	}
	nodes, err := snap.Nodes()
	if err != nil {
		return nil, err
	}
	next := &nodeTableAt{store: st, index: idx, table: scheduler.NewNodeTable(nodes)}
	for {
		c := t.latest.Load()
		if c != nil && c.store == st && c.index > idx {
			// A pass on a newer snapshot kept its table already.
			return next.table, nil
		}
		if t.latest.CompareAndSwap(c, next) {
			return next.table, nil
		}
	}
}
