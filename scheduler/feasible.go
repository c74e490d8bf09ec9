package scheduler

import (
	"math"
	"path"

	"github.com/droverhq/drover/structs"
)

// Reasons a node is filtered, as keys of AllocationMetric.ConstraintFiltered.
const (
	reasonMissingDrivers = "missing drivers"
)

func nodePool(n *structs.Node) string {
	if n.NodePool == "" {
		return structs.DefaultNodePool
	}
	return n.NodePool
}

// inPool reports whether the node is one the job may use at all: its
// datacenter matches one of the job's (globs allowed; none means any) and
// its node pool is the job's ("all" matches every pool).
func inPool(job *structs.Job, n *structs.Node) bool {
	pool := job.NodePool
	if pool == "" {
		pool = structs.DefaultNodePool
	}
	if pool != "all" && pool != nodePool(n) {
		return false
	}
	if len(job.Datacenters) == 0 {
		return true
	}
	for _, dc := range job.Datacenters {
		if dc == n.Datacenter {
			return true
		}
		if ok, err := path.Match(dc, n.Datacenter); err == nil && ok {
			return true
		}
	}
	return false
}

// groupConstraints returns the job's, the group's and the tasks'
// constraints, which all apply to the group's node.
func groupConstraints(job *structs.Job, tg *structs.TaskGroup) []*structs.Constraint {
	out := make([]*structs.Constraint, 0, len(job.Constraints)+len(tg.Constraints))
	out = append(out, job.Constraints...)
	out = append(out, tg.Constraints...)
	for _, t := range tg.Tasks {
		if t != nil {
			out = append(out, t.Constraints...)
		}
	}
	return out
}

// hasDistinctHosts reports whether the constraints ask for at most one of
// the job's allocs per node.
func hasDistinctHosts(cs []*structs.Constraint) bool {
	for _, c := range cs {
		if c != nil && c.Operand == structs.ConstraintDistinctHosts && c.RTarget != "false" {
			return true
		}
	}
	return false
}

// driversOK reports whether every task's driver is detected and healthy on
// the node.
func driversOK(tg *structs.TaskGroup, n *structs.Node) bool {
	for _, t := range tg.Tasks {
		if t == nil {
			continue
		}
		d := n.Drivers[t.Driver]
		if d == nil || !d.Detected || !d.Healthy {
			return false
		}
	}
	return true
}

// nodeFeasible checks the node's fixed properties against the group:
// constraints and drivers. It returns the reason when the node is filtered.
func nodeFeasible(cs []*structs.Constraint, tg *structs.TaskGroup, n *structs.Node, cache *constraintCache) (bool, string) {
	for _, c := range cs {
		if !meetsConstraint(c, n, cache) {
			return false, constraintKey(c)
		}
	}
	if !driversOK(tg, n) {
		return false, reasonMissingDrivers
	}
	if !hasPerAllocVolume(tg) && !hostVolumesOK(tg, 0, n) {
		return false, ReasonMissingHostVolumes
	}
	return true, ""
}

// staticFeasible reports whether the group may run on the node at all,
// leaving resources aside: pool, datacenter, constraints and drivers.
func staticFeasible(job *structs.Job, tg *structs.TaskGroup, n *structs.Node) (bool, string) {
	if n == nil || !inPool(job, n) {
		return false, "node pool or datacenter"
	}
	return nodeFeasible(groupConstraints(job, tg), tg, n, nil)
}

// groupAffinities returns the job's, the group's and the tasks'
// affinities, which all weigh the group's node.
func groupAffinities(job *structs.Job, tg *structs.TaskGroup) []*structs.Affinity {
	var out []*structs.Affinity
	out = append(out, job.Affinities...)
	out = append(out, tg.Affinities...)
	for _, t := range tg.Tasks {
		if t != nil {
			out = append(out, t.Affinities...)
		}
	}
	return out
}

// affinityScore rates a node for a set of affinities, as Nomad's node
// affinity: the weights of the affinities that hold on the node, summed,
// over the sum of all weights' magnitudes — from -1 (every repelling
// affinity holds and no attracting one) to 1. An affinity holds as the
// constraint of the same attribute, operator and value would.
func affinityScore(affs []*structs.Affinity, n *structs.Node, cache *constraintCache) float64 {
	var total, sum float64
	for _, a := range affs {
		if a == nil {
			continue
		}
		w := float64(a.Weight)
		sum += math.Abs(w)
		if meetsConstraint(&structs.Constraint{LTarget: a.LTarget, RTarget: a.RTarget, Operand: a.Operand}, n, cache) {
			total += w
		}
	}
	if sum == 0 {
		return 0
	}
	return total / sum
}
