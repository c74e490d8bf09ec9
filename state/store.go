// Package state is drover's replicated state: an in-memory go-memdb
// database of nodes, jobs (with their version history), evaluations,
// allocations and deployments, written only by the Raft FSM and read by
// everything else through O(1) snapshots and blocking queries.
//
// Objects are never modified after insert: a writer copies the stored
// object, changes the copy and inserts it. Readers may therefore keep any
// object they get for as long as they like, but must not change it.
//
// Every write method comes in two forms: X(index, ...) opens a write
// transaction at a raft index, does the work and commits; XTxn(txn, ...)
// does the work inside a caller's transaction, so that the FSM can compose
// several writes into one atomic log entry. The store never reads a clock
// or mints an ID: times and IDs come in the requests.
package state

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/structs"
)

// Store is the state database.
type Store struct {
	db *memdb.MemDB
	// strs is used by write transactions only, one at a time.
	strs *interner

	abandonOnce sync.Once
	abandonCh   chan struct{}

	// trackedVersions is server.job_tracked_versions (0: the default).
	trackedVersions atomic.Int64

	// writes notes the allocs each transaction writes, per job
	// (alloc_writes.go).
	writes allocWrites
}

// New returns an empty store: nothing but the "default" namespace
// (state_namespaces.go).
func New() (*Store, error) {
	db, err := memdb.NewMemDB(Schema())
	if err != nil {
		return nil, fmt.Errorf("state: schema: %w", err)
	}
	s := &Store{db: db, strs: newInterner(), abandonCh: make(chan struct{})}
	if err := insertDefaultNamespace(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Abandon marks the store as replaced (the FSM restored a snapshot into a
// new store). Blocking queries waiting on it return at once so their
// callers re-read from the new store. Safe to call more than once.
func (s *Store) Abandon() {
	s.abandonOnce.Do(func() { close(s.abandonCh) })
}

// AbandonCh is closed when the store is abandoned.
func (s *Store) AbandonCh() <-chan struct{} { return s.abandonCh }

// Snapshot returns a consistent read-only view of the store in O(1). It
// never changes, whatever is written later.
func (s *Store) Snapshot() *Snapshot {
	return &Snapshot{txn: s.db.Txn(false)}
}

// WriteTxn is a write transaction at one raft index. It records which
// tables and which jobs it touched; Commit bumps the index table and
// re-derives the status of touched jobs before committing.
type WriteTxn struct {
	txn    *memdb.Txn
	index  uint64
	tables map[string]bool
	jobs   map[jobKey]bool // value: objects of the job were reaped
	done   bool

	// strs and shared let the transaction's allocations share values;
	// see alloc_share.go.
	strs   *interner
	shared sharedValues

	// live holds the pending changes of deployments' live figures, and
	// canaries the placed canary IDs read per deployment; see
	// deployment_live.go.
	live     map[string]*liveDelta
	canaries map[string]map[string]bool

	// nodeAllocs holds the nodes whose allocations the servers changed;
	// see node_allocs_index.go.
	nodeAllocs map[string]bool
	// nodeDigests are the changes to nodes' alloc digests
	// (node_allocs_sync.go).
	nodeDigests map[string]structs.AllocsDigest
	nodeGone    map[string]bool

	// summaries holds the pending changes of jobs' summaries; see
	// job_summary.go.
	summaries map[jobKey]*summaryDelta

	// svcAllocs holds the allocations whose service registrations Commit
	// recomputes, each with whether it may have some already; see
	// state_services.go.
	svcAllocs map[string]bool

	// store and allocWrites: the allocs written, noted in the store at
	// Commit (alloc_writes.go).
	store       *Store
	allocWrites []*structs.Allocation
}

// sharedValues are the values a transaction's allocations share; the
// maps are made on first use.
type sharedValues struct {
	res  map[resKey]*structs.AllocatedResources
	jobs map[*structs.Job]*structs.Job
}

type jobKey struct{ ns, id string }

// WriteTxn opens a write transaction for the log entry at index. Only one
// write transaction runs at a time (memdb serialises writers).
func (s *Store) WriteTxn(index uint64) *WriteTxn {
	return &WriteTxn{
		txn: s.db.Txn(true), index: index,
		tables: map[string]bool{}, jobs: map[jobKey]bool{},
		strs: s.strs, store: s,
	}
}

// Index returns the raft index the transaction writes at.
func (t *WriteTxn) Index() uint64 { return t.index }

// Abort discards the transaction; a no-op after Commit.
func (t *WriteTxn) Abort() {
	if !t.done {
		t.done = true
		t.txn.Abort()
	}
}

// Commit re-derives job statuses, records the modified tables' index and
// commits.
func (t *WriteTxn) Commit() error {
	if t.done {
		return fmt.Errorf("state: transaction already finished: %w", ErrInvalid)
	}
	if err := t.flushDeployments(nil, 0); err != nil {
		t.Abort()
		return err
	}
	if err := t.syncServices(); err != nil {
		t.Abort()
		return err
	}
	keys := make([]jobKey, 0, len(t.jobs))
	for k := range t.jobs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b jobKey) int {
		if a.ns != b.ns {
			if a.ns < b.ns {
				return -1
			}
			return 1
		}
		if a.id < b.id {
			return -1
		} else if a.id > b.id {
			return 1
		}
		return 0
	})
	for _, k := range keys {
		if err := t.refreshJobStatus(k.ns, k.id, t.jobs[k]); err != nil {
			t.Abort()
			return err
		}
	}
	if err := t.flushSummaries(); err != nil {
		t.Abort()
		return err
	}
	if err := t.writeNodeAllocsIndexes(); err != nil {
		t.Abort()
		return fmt.Errorf("state: index table: %w", err)
	}
	if err := t.writeNodeDigests(); err != nil {
		t.Abort()
		return fmt.Errorf("state: index table: %w", err)
	}
	for _, table := range Tables {
		if !t.tables[table] || table == TableIndex {
			continue
		}
		if err := t.txn.Insert(TableIndex, &IndexEntry{Key: table, Value: t.index}); err != nil {
			t.Abort()
			return fmt.Errorf("state: index table: %w", err)
		}
	}
	t.flushAllocWrites()
	t.done = true
	t.txn.Commit()
	return nil
}

func (t *WriteTxn) insert(table string, obj any) error {
	if table == TableAllocs {
		// Allocations change their deployments' live figures.
		return fmt.Errorf("state: allocations are written by putAlloc: %w", ErrInvalid)
	}
	if err := t.txn.Insert(table, obj); err != nil {
		return fmt.Errorf("state: insert into %s: %w", table, err)
	}
	t.tables[table] = true
	return nil
}

func (t *WriteTxn) delete(table string, obj any) error {
	if err := t.txn.Delete(table, obj); err != nil {
		return fmt.Errorf("state: delete from %s: %w", table, err)
	}
	t.tables[table] = true
	return nil
}

// touchJob asks Commit to re-derive the job's status.
func (t *WriteTxn) touchJob(ns, id string) {
	if id != "" {
		k := jobKey{ns, id}
		if _, ok := t.jobs[k]; !ok {
			t.jobs[k] = false
		}
	}
}

// touchReapedJob is touchJob after deleting some of the job's evals or
// allocs: with nothing left, the job is dead rather than pending.
func (t *WriteTxn) touchReapedJob(ns, id string) {
	if id != "" {
		t.jobs[jobKey{ns, id}] = true
	}
}

// reader returns a read view inside the write transaction.
func (t *WriteTxn) reader() *Snapshot { return &Snapshot{txn: t.txn, writing: true} }

// update runs fn in one write transaction at index.
func (s *Store) update(index uint64, fn func(*WriteTxn) error) error {
	txn := s.WriteTxn(index)
	defer txn.Abort()
	if err := fn(txn); err != nil {
		return err
	}
	return txn.Commit()
}
