package scheduler

import "github.com/droverhq/drover/structs"

// What one pass allocates per alloc, kept small: a rollout's job is
// reconciled in full on every health report, and a pass over 10,000
// allocs made one holder, a few map entries and three parses of the
// alloc's name per alloc.

// holderChunk is how many holders one allocation of a group's slab holds
// at least.
const holderChunk = 64

// hold returns a holder of the group's pass with h's value. Holders are
// cut from slabs of the size of the group rather than allocated one by
// one; a pointer to one stays valid for the pass.
func (g *groupPass) hold(h holder) *holder {
	if len(g.slab) == cap(g.slab) {
		g.slab = make([]holder, 0, max(holderChunk, g.slabHint))
	}
	g.slab = append(g.slab, h)
	return &g.slab[len(g.slab)-1]
}

// indexSet is a set of a group's indexes. Indexes are small (below the
// group's count, give or take), so the set is a slice of flags; an index
// far beyond the number of elements (a hand-made name) falls back to a
// map.
type indexSet struct {
	flags []bool
	m     map[int]bool
}

// newIndexSet returns a set sized for n elements.
func newIndexSet(n int) *indexSet {
	return &indexSet{flags: make([]bool, 0, n)}
}

// denseLimit bounds the flags slice: indexes above it go to the map.
func (s *indexSet) denseLimit() int { return 4*cap(s.flags) + 1024 }

// add puts i in the set and reports whether it was there already.
func (s *indexSet) add(i int) (had bool) {
	if i >= 0 && i < s.denseLimit() {
		if i >= len(s.flags) {
			s.flags = append(s.flags, make([]bool, i+1-len(s.flags))...)
		}
		had, s.flags[i] = s.flags[i], true
		return had
	}
	if s.m == nil {
		s.m = map[int]bool{}
	}
	had, s.m[i] = s.m[i], true
	return had
}

// has reports whether i is in the set.
func (s *indexSet) has(i int) bool {
	if i >= 0 && i < len(s.flags) {
		return s.flags[i]
	}
	return s.m[i]
}

// groupIndexes returns the parsed indexes of a group's allocs as
// allocsByGroup sorted them, or nil when allocs is not that slice (then
// each alloc's name is parsed).
func (r *reconciler) groupIndexes(group string, allocs []*structs.Allocation) []int {
	idx := r.groupIdx[group]
	if len(idx) != len(allocs) || len(allocs) == 0 || &r.groupAllocs[group][0] != &allocs[0] {
		return nil
	}
	return idx
}

// allocIndex returns the i-th alloc's index from idx when given.
func allocIndex(idx []int, i int, a *structs.Allocation) int {
	if idx != nil {
		return idx[i]
	}
	return a.Index()
}
