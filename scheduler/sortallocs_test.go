package scheduler

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/droverhq/drover/structs"
)

// referenceSort is the plain definition sortAllocs must match: non-nil
// allocs by group, index and ID, ties in input order.
func referenceSort(in []*structs.Allocation) []*structs.Allocation {
	var out []*structs.Allocation
	for _, a := range in {
		if a != nil {
			out = append(out, a)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.TaskGroup != b.TaskGroup {
			return a.TaskGroup < b.TaskGroup
		}
		if ai, bi := a.Index(), b.Index(); ai != bi {
			return ai < bi
		}
		return a.ID < b.ID
	})
	return out
}

func TestSortAllocsMatchesReference(t *testing.T) {
	names := func(rng *rand.Rand, i int) string {
		switch rng.IntN(12) {
		case 0:
			return "web.g[x]" // unparsable: index -1
		case 1:
			return fmt.Sprintf("web.g[%d]", -rng.IntN(5)-2) // negative
		case 2:
			return fmt.Sprintf("web.g[%d]", 1<<40+rng.IntN(3)) // far beyond the count
		}
		return fmt.Sprintf("web.g[%d]", rng.IntN(i+1))
	}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := rng.IntN(300)
		var in []*structs.Allocation
		for range n {
			if rng.IntN(20) == 0 {
				in = append(in, nil)
				continue
			}
			name := names(rng, n)
			if seed%2 == 0 {
				// Dense indexes only: the counting sort path.
				name = structs.AllocName("web", "g", rng.IntN(n/2+1))
			}
			in = append(in, &structs.Allocation{
				ID:        fmt.Sprintf("%02d", rng.IntN(40)), // duplicates on purpose
				Name:      name,
				TaskGroup: []string{"a", "b", "c"}[rng.IntN(3)],
			})
		}
		got, want := sortAllocs(in), referenceSort(in)
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d allocs, want %d", seed, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d: position %d is %s %s %s, want %s %s %s", seed, i,
					got[i].TaskGroup, got[i].Name, got[i].ID, want[i].TaskGroup, want[i].Name, want[i].ID)
			}
		}
	}
}
