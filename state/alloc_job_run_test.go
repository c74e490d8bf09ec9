package state

import (
	"slices"
	"testing"

	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// TestAllocsByJobDesiredRun reads a job's allocs without those the servers
// stopped, through writes that stop allocs and a restore.
func TestAllocsByJobDesiredRun(t *testing.T) {
	s := newStore(t)
	job := registerJob(t, s, 1, statetest.Job("web", 4))
	other := registerJob(t, s, 2, statetest.Job("api", 1))
	n := statetest.Node("n1")
	var allocs []*structs.Allocation
	for i := range 4 {
		a := statetest.Alloc(job, n, "e", "", i)
		allocs = append(allocs, a)
	}
	allocs[1].ClientStatus = structs.AllocClientStatusFailed // client-terminal: still wanted by the pass
	allocs[2].DesiredStatus = structs.AllocDesiredStatusEvict
	allocs = append(allocs, statetest.Alloc(other, n, "e", "", 0))
	must(t, s.UpsertAllocs(3, allocs, 3))

	ids := func(st *Store) []string {
		got := get[[]*structs.Allocation](t)(st.Snapshot().AllocsByJobDesiredRun(job.Namespace, job.ID))
		var out []string
		for _, a := range got {
			out = append(out, a.ID)
		}
		return out
	}
	sorted := func(xs ...string) []string { slices.Sort(xs); return xs }
	if got, want := ids(s), sorted(allocs[0].ID, allocs[1].ID, allocs[3].ID); !slices.Equal(got, want) {
		t.Fatalf("desired run: %v, want %v", got, want)
	}

	// Stopping an alloc takes it out of the index; the job index keeps it.
	must(t, s.ApplyPlanResults(4, &structs.ApplyPlanResultsRequest{
		AllocsStopped: []*structs.AllocStopUpdate{{AllocID: allocs[0].ID, DesiredDescription: structs.AllocNotNeeded}},
		UpdatedAt:     4,
	}))
	if got, want := ids(s), sorted(allocs[1].ID, allocs[3].ID); !slices.Equal(got, want) {
		t.Fatalf("after a stop: %v, want %v", got, want)
	}
	if all := get[[]*structs.Allocation](t)(s.Snapshot().AllocsByJob(job.Namespace, job.ID)); len(all) != 4 {
		t.Fatalf("job index: %d allocs, want 4", len(all))
	}
	if got, want := ids(restoredCopy(t, s)), sorted(allocs[1].ID, allocs[3].ID); !slices.Equal(got, want) {
		t.Fatalf("restored: %v, want %v", got, want)
	}
}
