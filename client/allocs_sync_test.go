package client

import (
	"maps"
	"slices"
	"testing"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// The digest names what the agent holds at or below the index it asks
// from; an answer that matched it gives the node's allocs as those and
// the changed ones.
func TestSyncedPresent(t *testing.T) {
	known := map[string]uint64{"a": 3, "b": 5, "late": 9}
	if got, want := knownDigest(known, 5), structs.AllocsDigest(0).Add("b", 5).Add("a", 3); got != want {
		t.Fatalf("digest %d, want %d (a and b, not late)", got, want)
	}
	if knownDigest(nil, 5) != 0 {
		t.Fatal("an empty set's digest is 0")
	}
	full := &apiclient.NodeAllocsSync{Allocs: map[string]uint64{"a": 3}}
	if got := syncedPresent(full, known, 5); !maps.Equal(got, full.Allocs) {
		t.Fatalf("with the map: %v", got)
	}
	current := &apiclient.NodeAllocsSync{KnownCurrent: true, Changed: []*structs.Allocation{
		{ID: "b", AllocModifyIndex: 7}, {ID: "new", ModifyIndex: 8},
	}}
	// late (above the index asked from) is not one of them unless it
	// changed: the servers dropped it.
	if got, want := syncedPresent(current, known, 5), map[string]uint64{"a": 3, "b": 7, "new": 8}; !maps.Equal(got, want) {
		t.Fatalf("from the digest: %v, want %v", got, want)
	}
}

// What an allocs-sync answer carried at the index the map gives is not
// fetched again; a change it left out, or carried older, is.
func TestNotSynced(t *testing.T) {
	present := map[string]uint64{"a": 4, "b": 9, "c": 7, "d": 2}
	pull := []string{"a", "b", "c"}
	if got, newest := notSynced(pull, present, nil); !slices.Equal(got, pull) || newest != 9 {
		t.Fatalf("nothing synced: %v at %d", got, newest)
	}
	synced := []*structs.Allocation{{ID: "b", AllocModifyIndex: 9}, {ID: "c", ModifyIndex: 6}, nil}
	if got, newest := notSynced(pull, present, synced); !slices.Equal(got, []string{"a", "c"}) || newest != 7 {
		t.Fatalf("b synced, c older than its index: %v at %d", got, newest)
	}
	if got, _ := notSynced(nil, present, synced); len(got) != 0 {
		t.Fatalf("nothing to pull: %v", got)
	}
}
