package state

import (
	"fmt"
	"slices"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// TestAllocWritesSince writes a job's allocs in several transactions and
// reads back which were written after each index: every write is named
// once, other jobs' are not, deletes count, and once notes are dropped the
// store says so for the indexes they covered.
func TestAllocWritesSince(t *testing.T) {
	s, err := New()
	must(t, err)
	n := statetest.Node("n1")
	must(t, s.UpsertNode(1, n))
	job, other := statetest.Job("web", 4), statetest.Job("api", 1)
	var allocs []*structs.Allocation
	for i := range 4 {
		allocs = append(allocs, statetest.Alloc(job, n, "e", "", i))
	}
	must(t, s.UpsertAllocs(10, allocs, 1))
	must(t, s.UpsertAllocs(11, []*structs.Allocation{statetest.Alloc(other, n, "e", "", 0)}, 1))
	c := allocs[1].Copy()
	c.ClientStatus = structs.AllocClientStatusRunning
	must(t, s.UpsertAllocs(12, []*structs.Allocation{c}, 1))
	c = allocs[1].Copy()
	c.ClientStatus = structs.AllocClientStatusComplete
	must(t, s.UpsertAllocs(13, []*structs.Allocation{c, allocs[2].Copy()}, 1))

	ids := func(as ...*structs.Allocation) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.ID)
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		since uint64
		want  []string
	}{
		{0, ids(allocs...)},
		{10, ids(allocs[1], allocs[2])},
		{12, ids(allocs[1], allocs[2])},
		{13, nil},
	} {
		got, ok := s.AllocWritesSince(job.Namespace, job.ID, c.since)
		slices.Sort(got)
		if !ok || !slices.Equal(got, c.want) {
			t.Errorf("since %d: %v %v, want %v true", c.since, got, ok, c.want)
		}
	}
	if got, ok := s.AllocWritesSince(job.Namespace, "none", 0); !ok || len(got) != 0 {
		t.Errorf("a job without allocs: %v %v", got, ok)
	}

	// Past the bound the older half of the notes goes: the indexes they
	// covered are no longer answered.
	defer func(v int) { maxJobAllocWrites = v }(maxJobAllocWrites)
	maxJobAllocWrites = 8
	for i := range 10 {
		c := allocs[0].Copy()
		c.ClientDescription = fmt.Sprint(i)
		must(t, s.UpsertAllocs(uint64(20+i), []*structs.Allocation{c}, 1))
	}
	if _, ok := s.AllocWritesSince(job.Namespace, job.ID, 12); ok {
		t.Errorf("since 12 after the notes were dropped: answered")
	}
	if got, ok := s.AllocWritesSince(job.Namespace, job.ID, 27); !ok || !slices.Equal(got, ids(allocs[0])) {
		t.Errorf("since 27: %v %v, want %v true", got, ok, ids(allocs[0]))
	}

	// Past the bound of all jobs' notes all go: nothing before is
	// answered, for any job, and the writes after are.
	defer func(v int) { maxAllocWrites = v }(maxAllocWrites)
	maxAllocWrites = 6
	for i := range 6 {
		must(t, s.UpsertAllocs(uint64(40+i), []*structs.Allocation{allocs[3].Copy()}, 1))
	}
	if _, ok := s.AllocWritesSince(job.Namespace, job.ID, 30); ok {
		t.Errorf("since 30 after all notes were dropped: answered")
	}
	if _, ok := s.AllocWritesSince(other.Namespace, other.ID, 30); ok {
		t.Errorf("another job since 30 after all notes were dropped: answered")
	}
	if got, ok := s.AllocWritesSince(job.Namespace, job.ID, 44); !ok || !slices.Equal(got, ids(allocs[3])) {
		t.Errorf("since 44: %v %v, want %v true", got, ok, ids(allocs[3]))
	}
}
