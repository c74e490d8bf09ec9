package state

import (
	"errors"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func TestDumpIsCanonical(t *testing.T) {
	a, b := newStore(t), newStore(t)
	n1, n2 := statetest.Node("one"), statetest.Node("two")
	n1.Meta = map[string]string{"z": "1", "a": "2", "m": "3"}
	// Same writes at the same indexes, issued in a different order within
	// one transaction.
	must(t, a.update(1, func(tx *WriteTxn) error {
		must(t, a.UpsertNodeTxn(tx, n1))
		return a.UpsertNodeTxn(tx, n2)
	}))
	must(t, b.update(1, func(tx *WriteTxn) error {
		must(t, b.UpsertNodeTxn(tx, n2))
		return b.UpsertNodeTxn(tx, n1)
	}))
	da := get[[]byte](t)(a.Snapshot().Dump())
	db := get[[]byte](t)(b.Snapshot().Dump())
	if string(da) != string(db) {
		t.Fatalf("dumps differ:\n%s\n%s", da, db)
	}
	must(t, b.UpsertNode(2, statetest.Node("three")))
	if string(get[[]byte](t)(b.Snapshot().Dump())) == string(da) {
		t.Fatal("dump did not change with the state")
	}
}

func TestRestorerCopiesVerbatim(t *testing.T) {
	src := newStore(t)
	registerJob(t, src, 7, statetest.Job("web", 1))
	must(t, src.UpsertNode(9, statetest.Node("a")))
	dst := restoredCopy(t, src)
	if string(get[[]byte](t)(src.Snapshot().Dump())) != string(get[[]byte](t)(dst.Snapshot().Dump())) {
		t.Fatal("restored store differs")
	}
	if idx := get[uint64](t)(dst.Snapshot().Index(TableNodes)); idx != 9 {
		t.Fatalf("restored nodes index = %d, want 9 (kept, not rewritten)", idx)
	}
	if err := dst.Restorer().Insert("nope", &structs.Node{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown table: err = %v", err)
	}
}
