package state

import memdb "github.com/hashicorp/go-memdb"

// TrackChanges makes the transaction record every object it inserts or
// deletes, for Changes; call it before the first write. The FSM turns the
// changes of each entry into events (package stream).
func (t *WriteTxn) TrackChanges() { t.txn.TrackChanges() }

// Changes returns the objects the transaction wrote, one change per
// object (its state before the transaction and after), in the order of
// their last write; nil unless TrackChanges was called. Valid after
// Commit (which writes the derived rows: job statuses, deployments' live
// figures), empty after Abort.
func (t *WriteTxn) Changes() memdb.Changes { return t.txn.Changes() }
