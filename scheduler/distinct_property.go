package scheduler

import (
	"strconv"

	"github.com/droverhq/drover/structs"
)

// ConstraintDistinctProperty is Nomad's distinct_property operator: at
// most RTarget (default 1) of the job's allocs — or the group's, for a
// group or task constraint — on nodes sharing one value of LTarget.
const ConstraintDistinctProperty = "distinct_property"

// distinctProperty is one distinct_property constraint of a group.
type distinctProperty struct {
	attr  string
	limit int
	// group is set for a group or task constraint: only the group's
	// allocs count; for a job constraint, all the job's.
	group bool
}

// distinctProperties lists the group's distinct_property constraints
// with their scope.
func distinctProperties(job *structs.Job, tg *structs.TaskGroup) []distinctProperty {
	var out []distinctProperty
	add := func(cs []*structs.Constraint, group bool) {
		for _, c := range cs {
			if c != nil && c.Operand == ConstraintDistinctProperty {
				out = append(out, distinctProperty{attr: c.LTarget, limit: distinctLimit(c.RTarget), group: group})
			}
		}
	}
	add(job.Constraints, false)
	add(tg.Constraints, true)
	for _, t := range tg.Tasks {
		if t != nil {
			add(t.Constraints, true)
		}
	}
	return out
}

// distinctLimit reads a distinct_property's value: a positive count,
// 1 when empty (the job file's checks refuse anything else).
func distinctLimit(s string) int {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return n
	}
	return 1
}

// distinctPropertyOK reports whether one more alloc of the group on node
// i keeps every distinct_property constraint; it names the one it breaks.
// The count is of the live allocs the placer knows (released ones, being
// replaced, do not count; those placed in this plan do).
func (p *Placer) distinctPropertyOK(g *groupCtx, i int) (bool, string) {
	if len(g.distinct) == 0 {
		return true, ""
	}
	p.indexJobAllocs()
	node := p.nodeAt(i)
	for _, d := range g.distinct {
		v, ok := resolveTarget(d.attr, node)
		if !ok {
			return false, "missing property " + d.attr
		}
		n := 0
		for _, r := range p.allocs {
			a := r.alloc
			if r.node < 0 || a.JobID != g.key.job || !sameNamespace(a.Namespace, g.namespace) || (d.group && a.TaskGroup != g.tg.Name) {
				continue
			}
			if w, ok := resolveTarget(d.attr, p.nodeAt(r.node)); ok && w == v {
				n++
			}
		}
		if n >= d.limit {
			return false, ConstraintDistinctProperty + " " + d.attr
		}
	}
	return true, ""
}
