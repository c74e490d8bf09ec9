package scheduler

import (
	"errors"
	"fmt"

	"github.com/droverhq/drover/structs"
)

// ReasonNodeAllocsUnavailable is the AllocationMetric.ConstraintFiltered
// key of nodes a lazy placer left out because their allocs could not be
// read.
const ReasonNodeAllocsUnavailable = "node allocations unavailable"

// ErrNodeAllocs wraps the loader's error for a node whose allocs could
// not be read (see Placer.LoadErrors).
var ErrNodeAllocs = errors.New("scheduler: node allocations unavailable")

// NewPlacerLazy is NewPlacer for a pass that knows the job's allocs but
// not the rest of the cluster's: jobAllocs are the job's allocs, and
// nodeAllocs reads the allocs of one node, of every job (in both, terminal
// allocs are ignored, and those the servers stopped may be left out), the
// first time a placement needs that node's usage
// (to check distinct hosts or fit, rank it, or place on it). Feasibility
// needs no usage, so infeasible nodes are never read. Both must come from
// one consistent snapshot; the placer reads each node at most once.
//
// The job's allocs are not indexed up front: a node's are counted from
// what nodeAllocs returns, less those the plan stops or replaces (Place
// releases them by the pointers the plan holds, which must be among
// jobAllocs). Only an alloc known by its ID alone (a replacement planned
// by hand, without the reconciler) or a spread to count makes the placer
// index them all.
//
// For the same nodes, seed and snapshot, every choice and metric is the
// one NewPlacer would make with all the allocs. A node whose allocs cannot
// be read is filtered for the rest of the placer's life, with the reason
// ReasonNodeAllocsUnavailable. A nil nodeAllocs means no other allocs.
func NewPlacerLazy(nodes []*structs.Node, jobAllocs []*structs.Allocation, nodeAllocs func(nodeID string) ([]*structs.Allocation, error), seed uint64) *Placer {
	return newPlacerLazy(nodes, nil, jobAllocs, nodeAllocs, seed)
}

// NewPlacerLazyJob is NewPlacerLazy for allocs that are all of one job,
// as a store's job index returns them: the placer takes the job's
// identity from the caller rather than from each alloc.
func NewPlacerLazyJob(nodes []*structs.Node, namespace, jobID string, jobAllocs []*structs.Allocation, nodeAllocs func(nodeID string) ([]*structs.Allocation, error), seed uint64) *Placer {
	return newPlacerLazy(nodes, &nsJob{namespace, jobID}, jobAllocs, nodeAllocs, seed)
}

// NewPlacerLazyTable is NewPlacerLazyJob over a NodeTable's nodes: the
// nodes' states are copied from the table rather than built, and the
// nodes a job may use are the table's (see NodeTable). Every choice and
// metric is NewPlacerLazyJob's over the table's nodes.
func NewPlacerLazyTable(t *NodeTable, namespace, jobID string, jobAllocs []*structs.Allocation, nodeAllocs func(nodeID string) ([]*structs.Allocation, error), seed uint64) *Placer {
	return lazyFrom(newPlacerFromTable(t, seed), &nsJob{namespace, jobID}, jobAllocs, nodeAllocs)
}

// newPlacerFromTable is newPlacer over a table's nodes: its index shared,
// each node's state copied from the table's when first used.
func newPlacerFromTable(t *NodeTable, seed uint64) *Placer {
	p := newPlacer(nil, 0, seed)
	p.table, p.byID = t, t.index
	// Made from the table's on first use (ns): a pass looks at a few
	// dozen of the nodes.
	p.nodes = make([]*nodeState, len(t.base))
	return p
}

// ns returns node i's state, made from the table's when the placer has
// none yet.
func (p *Placer) ns(i int) *nodeState {
	if s := p.nodes[i]; s != nil {
		return s
	}
	s := new(nodeState)
	*s = p.table.base[i]
	p.nodes[i] = s
	return s
}

// nodeAt returns node i, without making its state.
func (p *Placer) nodeAt(i int) *structs.Node {
	if s := p.nodes[i]; s != nil {
		return s.node
	}
	return p.table.base[i].node
}

func newPlacerLazy(nodes []*structs.Node, job *nsJob, jobAllocs []*structs.Allocation, nodeAllocs func(nodeID string) ([]*structs.Allocation, error), seed uint64) *Placer {
	return lazyFrom(newPlacer(nodes, 0, seed), job, jobAllocs, nodeAllocs)
}

func lazyFrom(p *Placer, job *nsJob, jobAllocs []*structs.Allocation, nodeAllocs func(nodeID string) ([]*structs.Allocation, error)) *Placer {
	p.load = nodeAllocs
	p.jobAllocs = jobAllocs
	if job != nil {
		p.knownJobs = []nsJob{*job}
	} else {
		for _, a := range jobAllocs {
			if a != nil {
				p.noteKnownJob(a)
			}
		}
	}
	if p.anyJobKnown {
		p.indexJobAllocs()
	}
	return p
}

// indexJobAllocs puts the job's live allocs in p.allocs, keeping the
// entries already there (released, restored or placed).
func (p *Placer) indexJobAllocs() {
	if p.indexed {
		return
	}
	p.indexed = true
	for _, a := range p.jobAllocs {
		if _, seen := p.allocs[a.ID]; seen {
			continue
		}
		if i, ok := p.liveOn(a); ok {
			p.allocs[a.ID] = allocRef{a, i}
		}
	}
}

// maxKnownJobs bounds the jobs a lazy placer tells apart cheaply; past it
// every loaded alloc is looked up by ID.
const maxKnownJobs = 4

// nsJob is a job's identity.
type nsJob struct{ namespace, id string }

// noteKnownJob records the job of an alloc given up front, so that
// loading a node looks up by ID only the allocs of those jobs.
func (p *Placer) noteKnownJob(a *structs.Allocation) {
	if p.anyJobKnown {
		return
	}
	k := nsJob{a.Namespace, a.JobID}
	for _, j := range p.knownJobs {
		if j == k {
			return
		}
	}
	if len(p.knownJobs) == maxKnownJobs {
		p.anyJobKnown, p.knownJobs = true, nil
		return
	}
	p.knownJobs = append(p.knownJobs, k)
}

// ofKnownJob reports whether a is of a job whose allocs the placer was
// given up front. Allocs of other jobs are told apart by their job,
// sparing a map lookup for most of a node's allocs.
func (p *Placer) ofKnownJob(a *structs.Allocation) bool {
	return p.knownJob(nsJob{a.Namespace, a.JobID})
}

// knownJob is ofKnownJob for a job's identity.
func (p *Placer) knownJob(k nsJob) bool {
	if p.anyJobKnown {
		return true
	}
	for _, j := range p.knownJobs {
		if k.id == j.id && k.namespace == j.namespace {
			return true
		}
	}
	return false
}

// usable loads node i's usage if it is not loaded yet, and reports
// whether the node's allocs are known.
func (p *Placer) usable(i int) bool {
	ns := p.ns(i)
	if !ns.loaded {
		p.loadNode(ns)
	}
	return ns.loadErr == nil
}

// loadNode counts in the node's live allocs, as the loader returns them,
// except that an alloc the placer holds an entry for (released by this
// plan, or restored) counts only if that entry has it live on the node.
func (p *Placer) loadNode(ns *nodeState) {
	ns.loaded = true
	if p.load == nil {
		return
	}
	if p.loadVersioned != nil && p.table != nil {
		p.loadNodeVersioned(ns)
		return
	}
	i := p.byID[ns.node.ID]
	allocs, err := p.load(ns.node.ID)
	if err != nil {
		ns.loadErr = fmt.Errorf("%w: node %s: %w", ErrNodeAllocs, ns.node.ID, err)
		return
	}
	for _, a := range allocs {
		if a == nil || a.TerminalStatus() || a.NodeID != ns.node.ID {
			continue
		}
		if p.ofKnownJob(a) {
			if r, ok := p.allocs[a.ID]; ok {
				if r.node == i {
					ns.add(r.alloc, 1)
				}
				continue
			}
		}
		ns.add(a, 1)
	}
}

// LoadErrors returns the errors of nodes whose allocs could not be read,
// each wrapping ErrNodeAllocs, in node order.
func (p *Placer) LoadErrors() []error {
	var out []error
	for _, ns := range p.nodes {
		if ns != nil && ns.loadErr != nil {
			out = append(out, ns.loadErr)
		}
	}
	return out
}

// sameNamespace compares namespaces, the empty one being the default.
func sameNamespace(a, b string) bool {
	if a == "" {
		a = structs.DefaultNamespace
	}
	if b == "" {
		b = structs.DefaultNamespace
	}
	return a == b
}
