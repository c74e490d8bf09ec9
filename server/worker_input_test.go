package server

import (
	"slices"
	"testing"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// TestJobAllocsPicksTheJobInOrder reads a job's allocs through the store's
// job index: exactly the job's, in its namespace, in ID order (the order
// the reconciler was given when it picked them out of every alloc).
func TestJobAllocsPicksTheJobInOrder(t *testing.T) {
	s, err := state.New()
	if err != nil {
		t.Fatal(err)
	}
	// Inserted out of ID order, with a job whose ID extends another's.
	in := []*structs.Allocation{
		{ID: "a4", Namespace: "default", JobID: "web"},
		{ID: "a2", Namespace: "default", JobID: "api"},
		{ID: "a5", Namespace: "default", JobID: "web-2"},
		{ID: "a3", Namespace: "prod", JobID: "web"},
		{ID: "a1", Namespace: "default", JobID: "web"},
		{ID: "a0", Namespace: "default", JobID: "we"},
	}
	if err := s.UpsertAllocs(1, in, 1); err != nil {
		t.Fatal(err)
	}
	ids := func(as []*structs.Allocation) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.ID)
		}
		return out
	}
	snap := s.Snapshot()
	for _, tc := range []struct {
		ns, job string
		want    []string
	}{
		{"default", "web", []string{"a1", "a4"}},
		{"prod", "web", []string{"a3"}},
		{"default", "api", []string{"a2"}},
		{"default", "we", []string{"a0"}},
		{"default", "db", nil},
	} {
		got, err := jobAllocs(snap, tc.ns, tc.job)
		if err != nil {
			t.Fatalf("%s/%s: %v", tc.ns, tc.job, err)
		}
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("%s/%s: %v, want %v", tc.ns, tc.job, ids(got), tc.want)
		}
	}
}
