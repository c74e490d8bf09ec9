package state

import (
	"slices"

	"github.com/droverhq/drover/structs"
)

// A node's client long-polls for changes to its allocations that the
// servers make (placements, stops, in-place updates, deletions), not for
// the reports it sends itself. Each such change records its index in an
// entry of the index table per node, so that the client's query can
// watch that entry alone and sleep through the node's own reports: with
// thousands of nodes reporting, re-reading a node's allocations after
// each of its reports was a tenth of a server's CPU.

// nodeAllocsKeyPrefix starts the index table key of a node's entry; table
// names never contain a slash.
const nodeAllocsKeyPrefix = "node-allocs/"

// markNodeAllocs records that the servers changed an allocation of the
// node in this transaction: a new one, one whose AllocModifyIndex moved,
// or a deleted one (a nil).
func (t *WriteTxn) markNodeAllocs(old, a *structs.Allocation) {
	var node string
	switch {
	case a == nil && old != nil:
		node = old.NodeID
	case a != nil && (old == nil || old.AllocModifyIndex != a.AllocModifyIndex || old.NodeID != a.NodeID):
		node = a.NodeID
		if old != nil && old.NodeID != a.NodeID && old.NodeID != "" {
			t.markNode(old.NodeID)
		}
	}
	if node != "" {
		t.markNode(node)
	}
}

func (t *WriteTxn) markNode(id string) {
	if t.nodeAllocs == nil {
		t.nodeAllocs = map[string]bool{}
	}
	t.nodeAllocs[id] = true
}

// writeNodeAllocsIndexes stamps the transaction's index on the entries of
// the nodes marked, in a fixed order.
func (t *WriteTxn) writeNodeAllocsIndexes() error {
	if len(t.nodeAllocs) == 0 {
		return nil
	}
	ids := make([]string, 0, len(t.nodeAllocs))
	for id := range t.nodeAllocs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := t.txn.Insert(TableIndex, &IndexEntry{Key: nodeAllocsKeyPrefix + id, Value: t.index}); err != nil {
			return err
		}
	}
	return nil
}

// NodeAllocsIndex returns the index of the servers' last change to the
// node's allocations (0 if none was recorded, e.g. in state restored from
// a snapshot taken before these entries existed), watching that entry
// only.
func (s *Snapshot) NodeAllocsIndex(nodeID string) (uint64, error) {
	e, err := getOne[*IndexEntry](s, TableIndex, "id", nodeAllocsKeyPrefix+nodeID)
	if err != nil || e == nil {
		return 0, err
	}
	return e.Value, nil
}
