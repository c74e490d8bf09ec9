package scheduler

import (
	"math"

	"github.com/droverhq/drover/structs"
)

// binPackScore rates how tightly the placement packs the node, as Nomad's
// fit score: 20 - (10^freeCPU + 10^freeMem) over the free fractions after
// placing, normalised to [0, 1]. Fuller nodes score higher.
func binPackScore(ns *nodeState, req structs.ComparableResources) float64 {
	freeFrac := func(used, want, capacity int64) float64 {
		if capacity <= 0 {
			return 0
		}
		f := 1 - float64(used+want)/float64(capacity)
		return math.Max(0, math.Min(1, f))
	}
	total := math.Pow(10, freeFrac(ns.used.CPU, req.CPU, ns.capacity.CPU)) +
		math.Pow(10, freeFrac(ns.used.MemoryMB, req.MemoryMB, ns.capacity.MemoryMB))
	return (20 - total) / 18
}

// antiAffinity penalises nodes already running allocs of the same job and
// group: -(collisions+1)/count, as Nomad's. ok is false without collisions.
func antiAffinity(ns *nodeState, key string, count int) (float64, bool) {
	c := ns.jobs[key]
	if c <= 0 {
		return 0, false
	}
	if count < 1 {
		count = 1
	}
	return -float64(c+1) / float64(count), true
}

// spreadState tracks one spread block for one group: each pool node's
// value of the attribute and how many of the group's allocs run per value.
type spreadState struct {
	spread  *structs.Spread
	values  []string // per placer node index; "" when unset
	set     []bool
	counts  map[string]int
	targets map[string]float64 // value → desired fraction
	rest    float64            // fraction for values not listed
	known   []string           // every value seen in the pool, for even spread
}

func newSpreadState(sp *structs.Spread, p *Placer, pool []int) *spreadState {
	s := &spreadState{
		spread: sp, values: make([]string, len(p.nodes)), set: make([]bool, len(p.nodes)),
		counts: map[string]int{},
	}
	seen := map[string]bool{}
	for _, i := range pool {
		v, ok := resolveTarget(sp.Attribute, p.nodes[i].node)
		s.values[i], s.set[i] = v, ok
		if ok && !seen[v] {
			seen[v] = true
			s.known = append(s.known, v)
		}
	}
	if len(sp.SpreadTarget) > 0 {
		s.targets = map[string]float64{}
		sum := 0.0
		for _, t := range sp.SpreadTarget {
			if t != nil {
				s.targets[t.Value] = float64(t.Percent) / 100
				sum += float64(t.Percent) / 100
			}
		}
		s.rest = math.Max(0, 1-sum)
	}
	return s
}

// boost rates a node for this spread in [-1, 1]: positive where the value
// has fewer allocs than its share.
func (s *spreadState) boost(i, count int) float64 {
	if !s.set[i] {
		return -1
	}
	v := s.values[i]
	used := float64(s.counts[v])
	if s.targets != nil {
		frac, ok := s.targets[v]
		if !ok {
			frac = s.rest
		}
		desired := frac * float64(count)
		if desired <= 0 {
			return -1
		}
		return math.Max(-1, math.Min(1, (desired-used)/desired))
	}
	lo, hi := math.MaxInt, 0
	for _, k := range s.known {
		c := s.counts[k]
		lo, hi = min(lo, c), max(hi, c)
	}
	switch {
	case hi == lo:
		return 0
	case int(used) == lo:
		return 1
	}
	return -math.Min(1, (used-float64(lo))/float64(hi-lo))
}
