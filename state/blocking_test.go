package state

import (
	"context"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func nodesQuery(ws memdb.WatchSet, snap *Snapshot) (any, uint64, error) {
	nodes, err := snap.Nodes()
	if err != nil {
		return nil, 0, err
	}
	idx, err := snap.Index(TableNodes)
	return len(nodes), idx, err
}

type queryResult struct {
	res any
	idx uint64
	err error
}

func startQuery(s *Store, min uint64, wait time.Duration) <-chan queryResult {
	out := make(chan queryResult, 1)
	go func() {
		res, idx, err := s.BlockingQuery(context.Background(), min, wait, nodesQuery)
		out <- queryResult{res, idx, err}
	}()
	return out
}

func awaitResult(t *testing.T, ch <-chan queryResult) queryResult {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("blocking query did not return")
	}
	return queryResult{}
}

func TestBlockingQueryWakesOnWrite(t *testing.T) {
	s := newStore(t)
	must(t, s.UpsertNode(5, statetest.Node("a")))
	if r := awaitResult(t, startQuery(s, 0, time.Minute)); r.idx != 5 || r.res != 1 {
		t.Fatalf("non-blocking read = %v at %d", r.res, r.idx)
	}
	ch := startQuery(s, 5, time.Minute)
	// A write to another table does not satisfy the query.
	must(t, s.UpsertEvals(6, []*structs.Evaluation{statetest.Eval("x", statetest.Job("j", 1))}))
	select {
	case r := <-ch:
		t.Fatalf("query returned on an unrelated write: %+v", r)
	default:
	}
	must(t, s.UpsertNode(7, statetest.Node("b")))
	if r := awaitResult(t, ch); r.idx != 7 || r.res != 2 {
		t.Fatalf("woken read = %v at %d, want 2 at 7", r.res, r.idx)
	}
}

func TestBlockingQueryMaxWait(t *testing.T) {
	s := newStore(t)
	must(t, s.UpsertNode(5, statetest.Node("a")))
	if r := awaitResult(t, startQuery(s, 5, 20*time.Millisecond)); r.idx != 5 || r.res != 1 {
		t.Fatalf("timed-out read = %v at %d, want current 1 at 5", r.res, r.idx)
	}
}

func TestBlockingQueryAbandon(t *testing.T) {
	s := newStore(t)
	must(t, s.UpsertNode(5, statetest.Node("a")))
	ch := startQuery(s, 5, time.Hour)
	s.Abandon()
	s.Abandon() // idempotent
	if r := awaitResult(t, ch); r.idx != 5 {
		t.Fatalf("abandoned read at %d", r.idx)
	}
}
