package state

import (
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func newStore(t *testing.T) *Store {
	t.Helper()
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func get[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		must(t, err)
		return v
	}
}

// registerJob registers job with an eval at index and returns the stored
// job.
func registerJob(t *testing.T, s *Store, index uint64, job *structs.Job) *structs.Job {
	t.Helper()
	_, err := s.RegisterJob(index, &structs.JobRegisterRequest{
		Job: job, Eval: statetest.Eval(job.ID+"/"+string(rune('a'+index%26)), job), SubmitTime: int64(index),
	})
	must(t, err)
	j, err := s.Snapshot().JobByID(job.Namespace, job.ID)
	must(t, err)
	return j
}

// restoredCopy returns a new store restored, table by table, from a
// snapshot of src, as a snapshot restore fills one.
func restoredCopy(t *testing.T, src *Store) *Store {
	t.Helper()
	dst := newStore(t)
	r := dst.Restorer()
	snap := src.Snapshot()
	for _, table := range Tables {
		must(t, snap.Each(table, func(obj any) error { return r.Insert(table, obj) }))
	}
	r.Commit()
	return dst
}
