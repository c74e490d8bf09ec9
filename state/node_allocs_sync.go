package state

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/droverhq/drover/structs"
)

// A client's allocs-sync answers with the node's allocs the servers
// changed since the client's last answer, and tells whether what the
// client holds at or below that index is what the servers hold there (a
// digest of the allocs' IDs and servers' indexes, structs.AllocsDigest).
// Reading every alloc of the node for that (its live and its stopped ones,
// two dozen after a rollout) was a tenth of the leader's CPU in a
// 10,000-alloc rollout, each sync bringing one or two changes. The store
// keeps what makes the answer cost what changed: the allocs by node and
// servers' index (the node_change index), and each node's digest of all
// its allocs, in an entry of the index table that every write of the
// node's allocs updates in the same transaction.

// nodeDigestKeyPrefix starts the index table key of a node's digest;
// nodeGoneKeyPrefix that of the index at which an alloc last left the
// node (deleted, or moved to another node).
const (
	nodeDigestKeyPrefix = "node-digest/"
	nodeGoneKeyPrefix   = "node-gone/"
)

// nodeChangeIndex indexes allocations by NodeID, then their servers'
// index (structs.Allocation.ServersIndex), big-endian: a node's allocs in
// the order of the servers' changes.
type nodeChangeIndex struct{}

func (nodeChangeIndex) FromObject(raw any) (bool, []byte, error) {
	a, err := asAlloc(raw)
	if err != nil {
		return false, nil, err
	}
	if a.NodeID == "" {
		return false, nil, nil
	}
	// Room for the ID and its terminator, which go-memdb appends.
	b := make([]byte, 0, len(a.NodeID)+1+8+37)
	b = append(append(b, a.NodeID...), 0)
	return true, binary.BigEndian.AppendUint64(b, a.ServersIndex()), nil
}

// FromArgs takes a node ID and an index: the key from which the node's
// allocs changed at that index or later are listed.
func (nodeChangeIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("node change index: %d arguments, want 2", len(args))
	}
	node, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("node change index: argument 0 is %T, not a string", args[0])
	}
	idx, ok := args[1].(uint64)
	if !ok {
		return nil, fmt.Errorf("node change index: argument 1 is %T, not a uint64", args[1])
	}
	b := append([]byte(node), 0)
	return binary.BigEndian.AppendUint64(b, idx), nil
}

// NodeAllocsChangedAfter returns the node's allocations whose servers'
// index is above index, in the order of those indexes, without reading
// the others.
func (s *Snapshot) NodeAllocsChangedAfter(nodeID string, index uint64) ([]*structs.Allocation, error) {
	if nodeID == "" {
		return nil, nil
	}
	it, err := s.txn.LowerBound(TableAllocs, "node_change", nodeID, index+1)
	if err != nil {
		return nil, fmt.Errorf("state: allocs lookup: %w", err)
	}
	var out []*structs.Allocation
	for obj := it.Next(); obj != nil; obj = it.Next() {
		a := obj.(*structs.Allocation)
		if a.NodeID != nodeID {
			break
		}
		out = append(out, a)
	}
	return out, nil
}

// NodeAllocsDigest returns the digest of all the node's allocations, each
// by its ID and servers' index, and false when the store keeps none for
// the node (it has no allocs, or never had).
func (s *Snapshot) NodeAllocsDigest(nodeID string) (structs.AllocsDigest, bool, error) {
	e, err := getOne[*IndexEntry](s, TableIndex, "id", nodeDigestKeyPrefix+nodeID)
	if err != nil || e == nil {
		return 0, false, err
	}
	return structs.AllocsDigest(e.Value), true, nil
}

// NodeAllocsGoneIndex returns the index at which an alloc last left the
// node (deleted by the collector, or moved), 0 when none did since the
// store was started or restored.
func (s *Snapshot) NodeAllocsGoneIndex(nodeID string) (uint64, error) {
	e, err := getOne[*IndexEntry](s, TableIndex, "id", nodeGoneKeyPrefix+nodeID)
	if err != nil || e == nil {
		return 0, err
	}
	return e.Value, nil
}

// digestAlloc records in the transaction that old (nil: none) became a
// (nil: deleted), in their nodes' digests.
func (t *WriteTxn) digestAlloc(old, a *structs.Allocation) {
	if old != nil && a != nil && old.NodeID == a.NodeID && old.ServersIndex() == a.ServersIndex() {
		return
	}
	if t.nodeDigests == nil {
		t.nodeDigests = map[string]structs.AllocsDigest{}
	}
	if old != nil && old.NodeID != "" {
		t.nodeDigests[old.NodeID] = t.nodeDigests[old.NodeID].Remove(old.ID, old.ServersIndex())
		if a == nil || a.NodeID != old.NodeID {
			if t.nodeGone == nil {
				t.nodeGone = map[string]bool{}
			}
			t.nodeGone[old.NodeID] = true
		}
	}
	if a != nil && a.NodeID != "" {
		t.nodeDigests[a.NodeID] = t.nodeDigests[a.NodeID].Add(a.ID, a.ServersIndex())
	}
}

// writeNodeDigests adds the transaction's changes to the nodes' digests,
// and stamps the index on the nodes an alloc left.
func (t *WriteTxn) writeNodeDigests() error {
	for node := range t.nodeGone {
		if err := t.txn.Insert(TableIndex, &IndexEntry{Key: nodeGoneKeyPrefix + node, Value: t.index}); err != nil {
			return err
		}
	}
	for node, delta := range t.nodeDigests {
		if delta == 0 {
			continue
		}
		d, _, err := t.reader().NodeAllocsDigest(node)
		if err != nil {
			return err
		}
		if err := t.txn.Insert(TableIndex, &IndexEntry{Key: nodeDigestKeyPrefix + node, Value: uint64(d + delta)}); err != nil {
			return err
		}
	}
	return nil
}

// recountNodeDigests rewrites every node's digest from the restored
// allocations, whatever the snapshot held (a snapshot of an earlier build
// holds none).
func (r *Restorer) recountNodeDigests() error {
	if err := r.dropNodeDigests(); err != nil {
		return err
	}
	allocs, err := r.txn.reader().Allocs()
	if err != nil {
		return err
	}
	digests := map[string]structs.AllocsDigest{}
	for _, a := range allocs {
		if a.NodeID != "" {
			digests[a.NodeID] = digests[a.NodeID].Add(a.ID, a.ServersIndex())
		}
	}
	for node, d := range digests {
		if err := r.txn.txn.Insert(TableIndex, &IndexEntry{Key: nodeDigestKeyPrefix + node, Value: uint64(d)}); err != nil {
			return err
		}
	}
	return nil
}

// dropNodeDigests deletes every node's digest: the syncs then read the
// nodes' allocs in full.
func (r *Restorer) dropNodeDigests() error {
	it, err := r.txn.txn.Get(TableIndex, "id_prefix", nodeDigestKeyPrefix)
	if err != nil {
		return err
	}
	var stale []*IndexEntry
	for obj := it.Next(); obj != nil; obj = it.Next() {
		if e := obj.(*IndexEntry); strings.HasPrefix(e.Key, nodeDigestKeyPrefix) {
			stale = append(stale, e)
		}
	}
	for _, e := range stale {
		if err := r.txn.txn.Delete(TableIndex, e); err != nil {
			return err
		}
	}
	return nil
}
