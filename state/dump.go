package state

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/droverhq/drover/structs"
)

// Each calls fn for every object of table in primary-key order, stopping
// at the first error. Snapshots (FSM persist) and dumps use it.
func (s *Snapshot) Each(table string, fn func(obj any) error) error {
	if !slices.Contains(Tables, table) {
		return fmt.Errorf("state: unknown table %q: %w", table, ErrInvalid)
	}
	it, err := s.txn.Get(table, "id")
	if err != nil {
		return fmt.Errorf("state: scan %s: %w", table, err)
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		if err := fn(obj); err != nil {
			return err
		}
	}
	return nil
}

// Dump returns every table as canonical JSON: tables in the order of
// Tables, objects in primary-key order, map keys sorted. Two stores that
// applied the same log give byte-identical dumps.
func (s *Snapshot) Dump() ([]byte, error) {
	type table struct {
		Table   string
		Objects []any
	}
	out := make([]table, 0, len(Tables))
	for _, name := range Tables {
		tb := table{Table: name, Objects: []any{}}
		if err := s.Each(name, func(obj any) error {
			tb.Objects = append(tb.Objects, obj)
			return nil
		}); err != nil {
			return nil, err
		}
		out = append(out, tb)
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return nil, fmt.Errorf("state: dump: %w", err)
	}
	return b, nil
}

// Restorer loads objects into an empty store as they are, indexes
// included, for a snapshot restore.
type Restorer struct {
	txn  *WriteTxn
	done bool
	// namespaces is set once a namespace is restored: the snapshot was
	// written by a build that stores them (state_namespaces.go).
	namespaces bool
}

// Restorer opens a restore into s, which should be new and empty.
func (s *Store) Restorer() *Restorer { return &Restorer{txn: s.WriteTxn(0)} }

// Insert adds obj to table unchanged. An allocation is stored as an equal
// copy that shares repeated strings and values with the allocations
// restored before it (see alloc_share.go); obj itself is not modified.
func (r *Restorer) Insert(table string, obj any) error {
	if !slices.Contains(Tables, table) {
		return fmt.Errorf("state: unknown table %q: %w", table, ErrInvalid)
	}
	r.namespaces = r.namespaces || table == TableNamespaces
	if a, ok := obj.(*structs.Allocation); ok && a != nil && table == TableAllocs {
		c, err := r.txn.restoredAlloc(a)
		if err != nil {
			return fmt.Errorf("state: restore into %s: %w", table, err)
		}
		obj = c
	}
	if err := r.txn.txn.Insert(table, obj); err != nil {
		return fmt.Errorf("state: restore into %s: %w", table, err)
	}
	return nil
}

// Commit makes the restored objects visible. The live figures of active
// deployments are counted again from their allocations first: equal to
// the restored ones, unless the snapshot was written before the store
// kept them (then the rows are corrected, their indexes kept). A count
// that fails leaves the restored figures. Jobs restored without a kept
// summary (a snapshot written before the store kept them) get one counted
// from what was restored. A snapshot without namespace rows (written
// before the store kept them) gets one for every namespace its objects
// name (state_namespaces.go).
func (r *Restorer) Commit() {
	// A failed scan leaves the namespaces to the next write in each
	// (ensureNamespace).
	_ = r.deriveMissingNamespaces()
	r.recountLive()
	r.deriveMissingServices()
	_ = r.recountSummaries() // a failed count leaves jobs without summaries; the next write of each counts it
	_ = r.deriveNodePools()  // a failed derivation leaves a node's pool unlisted until the node registers again
	if r.recountNodeDigests() != nil {
		// Without them every sync reads the node's allocs in full.
		_ = r.dropNodeDigests()
	}
	r.done = true
	r.txn.done = true
	r.txn.txn.Commit()
}

// Abort discards the restore; a no-op after Commit.
func (r *Restorer) Abort() {
	if !r.done {
		r.done = true
		r.txn.Abort()
	}
}

// recountLive sets the live figures of every restored active deployment
// from its allocations, rewriting only the rows whose figures differ.
func (r *Restorer) recountLive() {
	deps, err := r.txn.reader().Deployments()
	if err != nil {
		return
	}
	for _, d := range deps {
		if !d.Active() {
			continue
		}
		allocs, err := r.txn.reader().deploymentAllocs(d)
		if err != nil {
			return
		}
		c := d.Copy()
		c.CountLiveFigures(allocs)
		if !equalFigures(liveFigures(d), liveFigures(c)) {
			_ = r.txn.txn.Insert(TableDeployments, c) // a failed insert keeps d
		}
	}
}
