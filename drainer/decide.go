// Package drainer decides how draining nodes are emptied
// (website/commands/node-drain.md): which of their allocations to mark for
// migration now, which drains are complete, and when to look again. Decide
// is pure — one consistent snapshot and the time in, plain data out — and
// the leader's thin watcher (server/drainer.go) reads the state, writes the
// decision through Raft and arms one timer for WakeAt. Everything a drain
// depends on lives in the replicated state (the node's drain strategy and
// its deadline, the allocations' migrate marks), so a new leader continues
// a drain where the old one left it.
//
// The rules, as Nomad's where Nomad has one:
//   - A service allocation on a draining node is marked to migrate when its
//     group has room: at most migrate.max_parallel allocations of a group
//     are marked and still running at once, across every draining node.
//     The scheduler then places the replacement first and stops the marked
//     allocation once the replacement is healthy (scheduler/migrate.go),
//     which frees the room for the next one.
//   - When the group's update block has zones with a disruption budget, no
//     more of a zone's allocations of the group are on the move at once than
//     the budget allows.
//   - Batch allocations are left to finish until the deadline.
//   - System allocations are marked last, once nothing else is left on the
//     node, unless the drain ignores system jobs.
//   - At the deadline (at once for a forced drain) everything left is
//     marked, and the scheduler stops it without waiting for replacements.
//   - A drain is complete when nothing is left on the node (its system
//     allocations aside when ignored); the node stays ineligible.
package drainer

import (
	"cmp"
	"slices"
	"time"

	"github.com/droverhq/drover/structs"
)

// Input is what one decision looks at, from one snapshot.
type Input struct {
	// Now is the time of the decision.
	Now time.Time
	// Nodes are the cluster's nodes: the draining ones (DrainStrategy set)
	// and those the allocations run on, for their zones.
	Nodes []*structs.Node
	// Jobs are the latest versions of the jobs of Allocs; a job missing
	// here was purged.
	Jobs []*structs.Job
	// Allocs are every allocation of each job that has one on a draining
	// node, on any node, so that a group's moves are counted across nodes.
	Allocs []*structs.Allocation
	// Pending names the jobs with an evaluation waiting to be scheduled:
	// they need no other to act on what is marked.
	Pending map[JobRef]bool
	// Latest is, per job, the newest of its evaluations (highest create
	// index, latest create time): a pass created after a reason to act
	// has acted on it, so none is asked again for the same reason.
	Latest map[JobRef]EvalMark
}

// EvalMark is when a job's newest evaluation was created.
type EvalMark struct {
	CreateIndex uint64
	CreateTime  time.Time
}

// JobRef names a job.
type JobRef struct {
	Namespace, ID string
}

// JobEval asks for one evaluation of a job.
type JobEval struct {
	JobRef
	Type     string
	Priority int
}

// Done is a drain that is complete.
type Done struct {
	NodeID string
	// StartedAt is the drain's, so that the write applies to this drain
	// only.
	StartedAt time.Time
	// Deadlined: the deadline was reached (or the drain was forced).
	Deadlined bool
}

// Decision is what to write.
type Decision struct {
	// Migrate lists the allocations to mark DesiredTransition.Migrate, in
	// ID order.
	Migrate []string
	// Evals are the jobs that need a scheduling pass, in order: those with
	// newly marked allocations, and those whose marked allocations the
	// scheduler must act on now (a replacement turned healthy, a deadline
	// passed) and that have no evaluation waiting.
	Evals []JobEval
	// Done lists the complete drains, by node ID.
	Done []Done
	// WakeAt is the earliest drain deadline still ahead; zero when none.
	WakeAt time.Time
}

// Empty reports whether the decision writes nothing.
func (d Decision) Empty() bool {
	return len(d.Migrate) == 0 && len(d.Evals) == 0 && len(d.Done) == 0
}

// groupKey names a job's group.
type groupKey struct {
	JobRef
	group string
}

// decider holds one decision's indexes.
type decider struct {
	in    Input
	nodes map[string]*structs.Node
	jobs  map[JobRef]*structs.Job
	// live are each group's allocations that should run (desired run, not
	// finished on their client).
	live map[groupKey][]*structs.Allocation
	out  Decision
	// marked records this decision's marks; evals the jobs to evaluate.
	marked map[string]bool
	evals  map[JobRef]JobEval
}

// Decide returns what to do about every draining node of in.
func Decide(in Input) Decision {
	d := &decider{
		in: in, nodes: map[string]*structs.Node{}, jobs: map[JobRef]*structs.Job{},
		live: map[groupKey][]*structs.Allocation{}, marked: map[string]bool{}, evals: map[JobRef]JobEval{},
	}
	for _, n := range in.Nodes {
		if n != nil {
			d.nodes[n.ID] = n
		}
	}
	for _, j := range in.Jobs {
		if j != nil {
			d.jobs[JobRef{nsOf(j.Namespace), j.ID}] = j
		}
	}
	onNode := map[string][]*structs.Allocation{}
	for _, a := range sortAllocs(in.Allocs) {
		if !live(a) {
			continue
		}
		d.live[keyOf(a)] = append(d.live[keyOf(a)], a)
		onNode[a.NodeID] = append(onNode[a.NodeID], a)
	}
	draining := d.drainingNodes()
	// Deadlines first: whatever is left there goes now, and takes no room
	// from the groups' budgets (it stops without waiting).
	var graceful []*structs.Node
	for _, n := range draining {
		if n.DrainStrategy.Deadlined(in.Now) {
			d.deadlined(n, onNode[n.ID])
			continue
		}
		graceful = append(graceful, n)
		if infinite, at := n.DrainStrategy.DeadlineTime(); !infinite && (d.out.WakeAt.IsZero() || at.Before(d.out.WakeAt)) {
			d.out.WakeAt = at
		}
	}
	d.services(graceful, onNode)
	for _, n := range graceful {
		d.systemsLast(n, onNode[n.ID])
	}
	for _, n := range draining {
		d.complete(n, onNode[n.ID])
	}
	d.settled(onNode, draining)
	slices.Sort(d.out.Migrate)
	for _, e := range d.evals {
		d.out.Evals = append(d.out.Evals, e)
	}
	slices.SortFunc(d.out.Evals, func(a, b JobEval) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.ID, b.ID))
	})
	return d.out
}

// drainingNodes returns the nodes with a drain, oldest drain first.
func (d *decider) drainingNodes() []*structs.Node {
	var out []*structs.Node
	for _, n := range d.nodes {
		if n.DrainStrategy != nil {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b *structs.Node) int {
		return cmp.Or(a.DrainStrategy.StartedAt.Compare(b.DrainStrategy.StartedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// deadlined marks everything left on a node past its deadline (system
// allocations too, unless ignored), and asks for a pass of every job with
// a marked allocation there: the scheduler stops them now.
func (d *decider) deadlined(n *structs.Node, allocs []*structs.Allocation) {
	for _, a := range allocs {
		if d.kind(a) == kindSystem && n.DrainStrategy.IgnoreSystemJobs {
			continue
		}
		if !a.DesiredTransition.ShouldMigrate() {
			d.mark(a)
			continue
		}
		// Marked before: a pass created since the deadline (since the
		// node's drain was forced) stops it; ask for one unless there is.
		last := d.in.Latest[refOf(a)]
		if _, at := n.DrainStrategy.DeadlineTime(); at.IsZero() && last.CreateIndex <= n.ModifyIndex ||
			!at.IsZero() && last.CreateTime.Before(at) {
			d.evalFor(a, false)
		}
	}
}

// services marks, group by group, the service allocations of the
// graceful drains that fit in the group's room.
func (d *decider) services(nodes []*structs.Node, onNode map[string][]*structs.Allocation) {
	var order []groupKey
	cands := map[groupKey][]*structs.Allocation{}
	for _, n := range nodes {
		for _, a := range onNode[n.ID] {
			if d.kind(a) != kindService || a.DesiredTransition.ShouldMigrate() {
				continue
			}
			k := keyOf(a)
			if _, ok := cands[k]; !ok {
				order = append(order, k)
			}
			cands[k] = append(cands[k], a)
		}
	}
	for _, k := range order {
		d.group(k, cands[k])
	}
}

// group marks the group's candidates (in drain order) while it has room:
// migrate.max_parallel less its allocations marked and still running, and,
// with a zone disruption budget, the zone's budget less its own.
func (d *decider) group(k groupKey, cands []*structs.Allocation) {
	job := d.jobs[k.JobRef]
	tg := job.LookupTaskGroup(k.group)
	if job.Stopped() || tg == nil {
		// The scheduler stops these whatever the mark; nothing to pace.
		for _, a := range cands {
			d.mark(a)
		}
		return
	}
	room := tg.Migrate.Parallel()
	var zones *structs.ZoneStrategy
	if u := tg.Update; u != nil && u.Zones != nil && u.Zones.DisruptionBudget != nil {
		zones = u.Zones
	}
	size, moving := map[string]int{}, map[string]int{}
	for _, a := range d.live[k] {
		z := d.zone(zones, a)
		size[z]++
		if a.DesiredTransition.ShouldMigrate() {
			room--
			moving[z]++
		}
	}
	for _, a := range cands {
		if room <= 0 {
			return
		}
		z := d.zone(zones, a)
		if zones != nil {
			if budget, _ := zones.BudgetFor(size[z]); moving[z] >= max(1, budget) {
				continue
			}
		}
		d.mark(a)
		room--
		moving[z]++
	}
}

// systemsLast marks a node's system allocations once nothing else is
// left on it, unless the drain ignores them.
func (d *decider) systemsLast(n *structs.Node, allocs []*structs.Allocation) {
	if n.DrainStrategy.IgnoreSystemJobs {
		return
	}
	for _, a := range allocs {
		if d.kind(a) != kindSystem {
			return
		}
	}
	for _, a := range allocs {
		if !a.DesiredTransition.ShouldMigrate() {
			d.mark(a)
		}
	}
}

// complete records a drain with nothing left on its node (its system
// allocations aside when ignored).
func (d *decider) complete(n *structs.Node, allocs []*structs.Allocation) {
	for _, a := range allocs {
		if d.kind(a) != kindSystem || !n.DrainStrategy.IgnoreSystemJobs {
			return
		}
	}
	d.out.Done = append(d.out.Done, Done{NodeID: n.ID, StartedAt: n.DrainStrategy.StartedAt,
		Deadlined: n.DrainStrategy.Deadlined(d.in.Now)})
}

// settled asks for a pass of each job with a marked allocation on a
// draining node whose replacement is healthy: the scheduler stops it. (The
// report that makes a replacement healthy asks for the same pass; this
// covers a health that came otherwise, or a pass lost with a leader.)
func (d *decider) settled(onNode map[string][]*structs.Allocation, draining []*structs.Node) {
	for _, n := range draining {
		for _, a := range onNode[n.ID] {
			if !a.DesiredTransition.ShouldMigrate() || d.marked[a.ID] {
				continue
			}
			for _, b := range d.live[keyOf(a)] {
				if b != a && !b.DesiredTransition.ShouldMigrate() && b.Index() == a.Index() &&
					b.IsCanary() == a.IsCanary() && b.IsHealthy() {
					// Once: a pass created after the health was
					// recorded has seen it.
					if b.DeploymentStatus.ModifyIndex >= d.in.Latest[refOf(a)].CreateIndex {
						d.evalFor(a, false)
					}
					break
				}
			}
		}
	}
}

// mark marks a and asks for a pass of its job.
func (d *decider) mark(a *structs.Allocation) {
	if d.marked[a.ID] {
		return
	}
	d.marked[a.ID] = true
	d.out.Migrate = append(d.out.Migrate, a.ID)
	d.evalFor(a, true)
}

// evalFor asks for a pass of a's job: always for a new mark (it goes in
// the same write), otherwise only when none is waiting.
func (d *decider) evalFor(a *structs.Allocation, marked bool) {
	ref := JobRef{nsOf(a.Namespace), a.JobID}
	if !marked && d.in.Pending[ref] {
		return
	}
	if _, ok := d.evals[ref]; ok {
		return
	}
	e := JobEval{JobRef: ref, Type: structs.JobTypeService, Priority: structs.DefaultJobPriority}
	if j := d.jobs[ref]; j != nil {
		e.Type, e.Priority = j.Type, j.Priority
	} else if a.Job != nil {
		e.Type, e.Priority = a.Job.Type, a.Job.Priority
	}
	d.evals[ref] = e
}

type allocKind int

const (
	kindService allocKind = iota
	kindBatch
	kindSystem
)

// kind is how a drain treats the allocation, by its job's type.
func (d *decider) kind(a *structs.Allocation) allocKind {
	typ := ""
	if j := d.jobs[JobRef{nsOf(a.Namespace), a.JobID}]; j != nil {
		typ = j.Type
	} else if a.Job != nil {
		typ = a.Job.Type
	}
	switch {
	case structs.PerNode(typ):
		return kindSystem
	case typ == structs.JobTypeBatch:
		return kindBatch
	}
	return kindService
}

// zone is a's zone under zones (its stamped zone, else its node's); ""
// without zones.
func (d *decider) zone(zones *structs.ZoneStrategy, a *structs.Allocation) string {
	if zones == nil {
		return ""
	}
	if a.Zone != "" {
		return a.Zone
	}
	return structs.ZoneOf(d.nodes[a.NodeID], zones.Attribute)
}

// live reports whether a should run: desired run and not finished on its
// client.
func live(a *structs.Allocation) bool {
	return a != nil && a.DesiredStatus == structs.AllocDesiredStatusRun && !a.ClientTerminalStatus()
}

func keyOf(a *structs.Allocation) groupKey {
	return groupKey{refOf(a), a.TaskGroup}
}

func refOf(a *structs.Allocation) JobRef { return JobRef{nsOf(a.Namespace), a.JobID} }

func nsOf(ns string) string {
	if ns == "" {
		return structs.DefaultNamespace
	}
	return ns
}

// sortAllocs returns the allocations in a stable order: by job, group,
// index, then ID; so that marks go to the lowest indexes first.
func sortAllocs(in []*structs.Allocation) []*structs.Allocation {
	out := slices.Clone(in)
	slices.SortFunc(out, func(a, b *structs.Allocation) int {
		if a == nil || b == nil {
			return cmp.Compare(boolInt(a == nil), boolInt(b == nil))
		}
		return cmp.Or(cmp.Compare(nsOf(a.Namespace), nsOf(b.Namespace)), cmp.Compare(a.JobID, b.JobID),
			cmp.Compare(a.TaskGroup, b.TaskGroup), cmp.Compare(a.Index(), b.Index()), cmp.Compare(a.ID, b.ID))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
