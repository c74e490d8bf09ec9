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
	total := pow10(freeFrac(ns.used.CPU, req.CPU, ns.capacity.CPU)) +
		pow10(freeFrac(ns.used.MemoryMB, req.MemoryMB, ns.capacity.MemoryMB))
	return (20 - total) / 18
}

func pow10(x float64) float64 { return math.Exp(x * math.Ln10) }

// fitScore is binPackScore, or with spread its mirror, as Nomad's
// spread fit: (10^freeCPU + 10^freeMem - 2) / 18, emptier nodes higher.
func fitScore(ns *nodeState, req structs.ComparableResources, spread bool) float64 {
	if spread {
		return 1 - binPackScore(ns, req)
	}
	return binPackScore(ns, req)
}

// antiAffinity penalises nodes already running allocs of the same job and
// group: -(collisions+1)/count, as Nomad's. ok is false without collisions.
func antiAffinity(ns *nodeState, key jobGroup, count int) (float64, bool) {
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
// value of the attribute (interned as an index into known) and how many of
// the group's allocs run per value.
type spreadState struct {
	spread *structs.Spread
	value  []int32 // per placer node index; -1 when unset or not in pool
	known  []string
	counts []int     // per known value
	target []float64 // desired fraction per known value
	hasTgt bool      // targets given (else even spread)
}

func newSpreadState(sp *structs.Spread, p *Placer, pool []int) *spreadState {
	s := &spreadState{spread: sp, value: make([]int32, len(p.nodes))}
	for i := range s.value {
		s.value[i] = -1
	}
	ids := map[string]int32{}
	for _, i := range pool {
		v, ok := resolveTarget(sp.Attribute, p.nodeAt(i))
		if !ok {
			continue
		}
		id, seen := ids[v]
		if !seen {
			id = int32(len(s.known))
			ids[v] = id
			s.known = append(s.known, v)
		}
		s.value[i] = id
	}
	s.counts = make([]int, len(s.known))
	if len(sp.SpreadTarget) > 0 {
		s.hasTgt = true
		listed := map[string]float64{}
		sum := 0.0
		for _, t := range sp.SpreadTarget {
			if t != nil {
				listed[t.Value] = float64(t.Percent) / 100
				sum += float64(t.Percent) / 100
			}
		}
		rest := math.Max(0, 1-sum)
		s.target = make([]float64, len(s.known))
		for id, v := range s.known {
			if f, ok := listed[v]; ok {
				s.target[id] = f
			} else {
				s.target[id] = rest
			}
		}
	}
	return s
}

// count records an alloc on node i.
func (s *spreadState) count(i int) {
	if id := s.value[i]; id >= 0 {
		s.counts[id]++
	}
}

// boost rates node i for this spread in [-1, 1]: positive where the value
// has fewer allocs than its share.
func (s *spreadState) boost(i, count int) float64 {
	id := s.value[i]
	if id < 0 {
		return -1
	}
	used := float64(s.counts[id])
	if s.hasTgt {
		desired := s.target[id] * float64(count)
		if desired <= 0 {
			return -1
		}
		return math.Max(-1, math.Min(1, (desired-used)/desired))
	}
	lo, hi := math.MaxInt, 0
	for _, c := range s.counts {
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
