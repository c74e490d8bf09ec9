package client

import (
	"fmt"
	"maps"
	"math/rand/v2"
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
	if got := syncedPresent(full, known, 5).toMap(known); !maps.Equal(got, full.Allocs) {
		t.Fatalf("with the map: %v", got)
	}
	current := &apiclient.NodeAllocsSync{KnownCurrent: true, Changed: []*structs.Allocation{
		{ID: "b", AllocModifyIndex: 7}, {ID: "new", ModifyIndex: 8},
	}}
	// late (above the index asked from) is not one of them unless it
	// changed: the servers dropped it.
	if got, want := syncedPresent(current, known, 5).toMap(known), map[string]uint64{"a": 3, "b": 7, "new": 8}; !maps.Equal(got, want) {
		t.Fatalf("from the digest: %v, want %v", got, want)
	}
}

// What an allocs-sync answer carried at the index the map gives is not
// fetched again; a change it left out, or carried older, is.
func TestNotSynced(t *testing.T) {
	present := indexOf(map[string]uint64{"a": 4, "b": 9, "c": 7, "d": 2})
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

// toMap lists the index: every alloc of it (known: those the agent knows).
func (p allocsIndex) toMap(known map[string]uint64) map[string]uint64 {
	out := map[string]uint64{}
	for id := range known {
		if i, ok := p.get(id); ok {
			out[id] = i
		}
	}
	p.each(func(id string, i uint64) { out[id] = i })
	return out
}

// presentRef is the index built as a map, as the agent did before
// allocsIndex: the reference allocsIndex is checked against.
func presentRef(s *apiclient.NodeAllocsSync, known map[string]uint64, since uint64) map[string]uint64 {
	if !s.KnownCurrent {
		return s.Allocs
	}
	present := map[string]uint64{}
	for id, idx := range known {
		if idx <= since {
			present[id] = idx
		}
	}
	for _, a := range s.Changed {
		if a != nil {
			present[a.ID] = allocIndex(a)
		}
	}
	return present
}

// allocsIndex and knownAllocs against the maps they replace, on random
// known sets, answers (short and long lists of changes, repeats, nils)
// and sequences of sets and removals.
func TestAllocsIndexAsMaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	id := func() string { return fmt.Sprintf("a%d", rng.IntN(30)) }
	for round := range 2000 {
		known := newKnownAllocs()
		ref := map[string]uint64{}
		for range rng.IntN(25) {
			i, idx := id(), uint64(1+rng.IntN(40))
			if rng.IntN(5) == 0 {
				known.remove(i)
				delete(ref, i)
				continue
			}
			known.set(i, idx)
			ref[i] = idx
		}
		since := uint64(rng.IntN(45))
		if got, want := known.digest(since), knownDigest(ref, since); got != want {
			t.Fatalf("round %d: digest %d, want %d", round, got, want)
		}
		s := &apiclient.NodeAllocsSync{KnownCurrent: rng.IntN(4) != 0, Allocs: map[string]uint64{}}
		for range rng.IntN(3) * rng.IntN(8) {
			if rng.IntN(10) == 0 {
				s.Changed = append(s.Changed, nil)
				continue
			}
			s.Changed = append(s.Changed, &structs.Allocation{ID: id(), AllocModifyIndex: uint64(since + uint64(rng.IntN(10)))})
		}
		for range rng.IntN(10) {
			s.Allocs[id()] = uint64(rng.IntN(50))
		}
		p, want := syncedPresent(s, known.idx, since), presentRef(s, ref, since)
		if got := p.toMap(ref); !maps.Equal(got, want) {
			t.Fatalf("round %d: index %v, want %v", round, got, want)
		}
		for range 5 {
			i := id()
			gi, gok := p.get(i)
			wi, wok := want[i]
			if gi != wi || gok != wok || p.has(i) != wok {
				t.Fatalf("round %d: get(%s) %d %v, want %d %v", round, i, gi, gok, wi, wok)
			}
		}
		gotPull, gotNewest := changedAllocs(p, ref)
		wantPull, wantNewest := changedAllocs(indexOf(want), ref)
		if !slices.Equal(gotPull, wantPull) || gotNewest != wantNewest {
			t.Fatalf("round %d: pull %v at %d, want %v at %d", round, gotPull, gotNewest, wantPull, wantNewest)
		}
		if p.holdsAllKnown(known) {
			for i := range ref {
				if _, ok := want[i]; !ok {
					t.Fatalf("round %d: holds all known, but not %s", round, i)
				}
			}
		}
	}
}

// BenchmarkSyncBookkeeping measures what the agent does with an
// allocs-sync answer that matched its digest, before reconcile: the
// digest it sends, the index it reads, the allocs it finds changed; for
// a node holding 20 and 200 allocs, one of them changed.
func BenchmarkSyncBookkeeping(b *testing.B) {
	for _, n := range []int{20, 200} {
		b.Run(fmt.Sprintf("known=%d", n), func(b *testing.B) {
			known := newKnownAllocs()
			ids := make([]string, n)
			for i := range ids {
				ids[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
				known.set(ids[i], uint64(10+i))
			}
			since := uint64(10 + n)
			s := &apiclient.NodeAllocsSync{KnownCurrent: true, Changed: []*structs.Allocation{{ID: ids[0], AllocModifyIndex: since + 1}}}
			b.ReportAllocs()
			for b.Loop() {
				_ = known.digest(since)
				p := syncedPresent(s, known.idx, since)
				if pull, _ := changedAllocs(p, known.idx); len(pull) != 1 {
					b.Fatal(pull)
				}
			}
		})
	}
}
