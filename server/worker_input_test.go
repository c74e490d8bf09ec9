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
		got, err := jobAllocs(snap.AllocsByJob, tc.ns, tc.job)
		if err != nil {
			t.Fatalf("%s/%s: %v", tc.ns, tc.job, err)
		}
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("%s/%s: %v, want %v", tc.ns, tc.job, ids(got), tc.want)
		}
	}
}

// TestStoppedRunVersion tells the reconciler whether a stopped alloc, left
// out of a pass, runs the job's version: only such an alloc counts.
func TestStoppedRunVersion(t *testing.T) {
	s, err := state.New()
	if err != nil {
		t.Fatal(err)
	}
	job := &structs.Job{ID: "web", Namespace: "default", Version: 2, CreateIndex: 7}
	older := &structs.Job{ID: "web", Namespace: "default", Version: 1, CreateIndex: 7}
	before := &structs.Job{ID: "web", Namespace: "default", Version: 2, CreateIndex: 3} // an earlier incarnation
	alloc := func(id string, j *structs.Job, desired string) *structs.Allocation {
		return &structs.Allocation{ID: id, Namespace: "default", JobID: "web", Job: j, DesiredStatus: desired}
	}
	check := func(name string, want bool) {
		t.Helper()
		snap := s.Snapshot()
		run, err := jobAllocs(snap.AllocsByJobDesiredRun, "default", "web")
		if err != nil {
			t.Fatal(err)
		}
		got, err := stoppedRunVersion(snap, job, run)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: %t, want %t", name, got, want)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.UpsertAllocs(1, []*structs.Allocation{
		alloc("a1", older, structs.AllocDesiredStatusStop),
		alloc("a2", before, structs.AllocDesiredStatusEvict),
		alloc("a3", older, structs.AllocDesiredStatusRun),
	}, 1))
	check("stopped allocs of other versions", false)
	must(s.UpsertAllocs(2, []*structs.Allocation{alloc("a4", job, structs.AllocDesiredStatusStop)}, 2))
	check("a stopped alloc of the version", true)
	if got, _ := stoppedRunVersion(s.Snapshot(), nil, nil); got {
		t.Error("no job: true, want false")
	}
}
