package server

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// feeder remembers what it has handed on: the ModifyIndex of each
// evaluation given to the broker or the blocked tracker, and the nodes
// that could take allocations.
type feeder struct {
	evalsIndex uint64
	nodesIndex uint64
	handed     map[string]uint64
	usable     map[string]bool
}

// runFeeder watches the evaluations and nodes tables. Every pending
// evaluation not yet handed on goes to the broker, every blocked one to
// the blocked tracker; a node that became usable unblocks the tracker at
// the nodes table's index. The first pass restores all of them. The
// state machine never calls the broker: this loop is how it learns.
func (l *Leader) runFeeder(t *term) {
	f := &feeder{handed: map[string]uint64{}, usable: map[string]bool{}}
	first := true
	for t.ctx.Err() == nil {
		store := l.store()
		ws := memdb.NewWatchSet()
		ws.Add(store.AbandonCh())
		snap := store.Snapshot().WithWatch(ws)
		if err := l.feedNodes(t, f, snap, first); err != nil {
			l.logger.Error("watching nodes", "error", err)
		}
		if err := l.feedEvals(t, f, snap, first); err != nil {
			l.logger.Error("feeding evaluations", "error", err)
		}
		first = false
		if ws.WatchCtx(t.ctx) != nil {
			return
		}
	}
}

func (l *Leader) feedEvals(t *term, f *feeder, snap *state.Snapshot, first bool) error {
	idx, err := snap.Index(state.TableEvals)
	if err != nil {
		return err
	}
	// The index entry's watch wakes the loop when the table changes.
	if !first && idx == f.evalsIndex {
		return nil
	}
	// After the first look, only the evaluations written since the last
	// one: reading the whole table on each change cost the leader a twentieth
	// of a large rollout's CPU, the table growing by two entries a pass.
	var evals []*structs.Evaluation
	if first {
		evals, err = snap.Evals()
	} else {
		evals, err = snap.EvalsModifiedAfter(f.evalsIndex)
	}
	if err != nil {
		return err
	}
	f.evalsIndex = idx
	var restore []*structs.Evaluation
	for _, e := range evals {
		if e.Terminal() {
			delete(f.handed, e.ID)
			continue
		}
		if seen, ok := f.handed[e.ID]; ok && seen >= e.ModifyIndex {
			continue
		}
		f.handed[e.ID] = e.ModifyIndex
		switch e.Status {
		case structs.EvalStatusBlocked:
			if err := t.blocked.Block(e); err != nil {
				l.logger.Error("blocking evaluation", "eval_id", e.ID, "error", err)
			}
		case structs.EvalStatusPending:
			if first {
				restore = append(restore, e)
			} else if err := t.broker.Enqueue(e); err != nil {
				l.logger.Error("enqueueing evaluation", "eval_id", e.ID, "error", err)
			}
		}
	}
	if len(restore) > 0 {
		if err := t.broker.Restore(restore); err != nil {
			l.logger.Error("restoring evaluations", "error", err)
		}
	}
	return nil
}

// feedNodes unblocks when a node became usable: registered ready, back
// from down, eligible again or no longer draining.
func (l *Leader) feedNodes(t *term, f *feeder, snap *state.Snapshot, first bool) error {
	idx, err := snap.Index(state.TableNodes)
	if err != nil {
		return err
	}
	if !first && idx == f.nodesIndex {
		return nil
	}
	nodes, err := snap.Nodes()
	if err != nil {
		return err
	}
	f.nodesIndex = idx
	gained := false
	seen := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		seen[n.ID] = true
		// A node registered by a path that bypassed RegisterNode still
		// gets a heartbeat timer.
		if n.Status != structs.NodeStatusDown {
			t.beats.ensure(n.ID)
		}
		ready := n.Ready()
		if ready && !f.usable[n.ID] {
			gained = true
		}
		f.usable[n.ID] = ready
	}
	for id := range f.usable {
		if !seen[id] {
			delete(f.usable, id)
		}
	}
	// On the first pass of a term every capacity change up to now counts
	// as possibly missed: an unblock the old leader did in memory (its
	// evaluations still read blocked in state), or a node that became
	// ready before this pass. Recording the index makes the tracker
	// enqueue, on restore, every blocked evaluation that read an older
	// state; those that still do not fit block again.
	if gained || (first && len(nodes) > 0) {
		l.unblock(t, idx)
	}
	return nil
}

// unblock re-enqueues the blocked evaluations after a capacity change at
// index.
func (l *Leader) unblock(t *term, index uint64) {
	if _, err := t.blocked.Unblock(index); err != nil {
		l.logger.Warn("unblocking evaluations", "index", index, "error", err)
	}
}
