package scheduler

import (
	"slices"
	"strings"
	"sync"

	"github.com/droverhq/drover/structs"
)

// NodeTable is a list of nodes prepared once for many passes: the nodes
// by ID, and each node's state before any alloc is counted (capacity,
// port range, reserved ports). Building them cost a pass over every node
// of the cluster, and a rollout's passes (each placing a few allocs) ran
// it a thousand times over the same nodes. A caller that keeps one
// NodeTable per version of its node list (the leader: one per nodes
// table index) gives it to Input.Table and NewPlacerLazyTable; a table is
// read-only once built and safe for concurrent use.
type NodeTable struct {
	nodes []*structs.Node
	// byID maps a node's ID to its node and to its position in base.
	byID  map[string]*structs.Node
	index map[string]int
	// base are the nodes' states with nothing counted, in nodes' order
	// without nil or duplicate IDs; a placer copies a node's when it first
	// looks at the node.
	base []nodeState

	// pools caches each job placement domain's ready nodes (their
	// positions in base, in order) and their count per datacenter.
	mu    sync.Mutex
	pools map[string]tablePool
	// usage keeps each node's usage as a versioned loader last gave it
	// (nodeusage.go).
	usage map[string]*nodeUsage
	// zones caches, per zones attribute, each node's zone (by position in
	// base).
	zones map[string][]string
	// feasible caches, per job and group, what placements found of each
	// node's feasibility (keepFeasibility).
	feasible map[feasKey]feasibility
}

// feasKey names a job's group. The job is the stored object, which a write
// of the job replaces: one pointer is one content.
type feasKey struct {
	job   *structs.Job
	group string
}

// feasibility is a group's groupCtx.feas and reasons, by position in base.
type feasibility struct {
	feas    []uint8
	reasons []string
}

type tablePool struct {
	nodes []int
	avail map[string]int
}

// maxTablePools bounds the placement domains a table remembers.
const maxTablePools = 64

// NewNodeTable prepares nodes (kept as given; nil and duplicate IDs are
// left out of the placer's states, as NewPlacer leaves them out).
func NewNodeTable(nodes []*structs.Node) *NodeTable {
	t := &NodeTable{
		nodes: nodes,
		byID:  make(map[string]*structs.Node, len(nodes)),
		index: make(map[string]int, len(nodes)),
		base:  make([]nodeState, 0, len(nodes)),
	}
	for _, n := range nodes {
		if n == nil {
			continue
		}
		t.byID[n.ID] = n
		if _, dup := t.index[n.ID]; dup {
			continue
		}
		t.index[n.ID] = len(t.base)
		t.base = append(t.base, *newNodeState(n))
	}
	// The reconciler's map keeps the last of duplicate IDs, as
	// newReconciler's loop does; the placer the first.
	return t
}

// zonesOf returns each node's zone under attribute (structs.ZoneOf), by
// position in base, resolved once per attribute. The caller must not
// modify it.
func (t *NodeTable) zonesOf(attribute string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if z, ok := t.zones[attribute]; ok {
		return z
	}
	z := make([]string, len(t.base))
	for i := range t.base {
		z[i] = structs.ZoneOf(t.base[i].node, attribute)
	}
	if t.zones == nil || len(t.zones) >= maxTablePools {
		t.zones = map[string][]string{}
	}
	t.zones[attribute] = z
	return z
}

// feasibility returns copies of what earlier placements found of each
// node's feasibility for job's group (0: not checked yet), for a placer to
// fill further.
func (t *NodeTable) feasibility(job *structs.Job, group string) ([]uint8, []string) {
	t.mu.Lock()
	f, ok := t.feasible[feasKey{job, group}]
	t.mu.Unlock()
	if !ok {
		return make([]uint8, len(t.base)), make([]string, len(t.base))
	}
	return slices.Clone(f.feas), slices.Clone(f.reasons)
}

// keepFeasibility keeps what a placer found of the nodes' feasibility for
// job's group, for the next placer of the same job and nodes: a node's
// feasibility depends only on the node, the job and the group (not on
// what runs on it), so the next pass need not check again the constraints
// of the nodes this one looked at. A node not checked by either stays
// unchecked.
func (t *NodeTable) keepFeasibility(job *structs.Job, group string, feas []uint8, reasons []string) {
	if job == nil || len(feas) != len(t.base) {
		return
	}
	k := feasKey{job, group}
	t.mu.Lock()
	defer t.mu.Unlock()
	if prev, ok := t.feasible[k]; ok {
		// Another pass kept its own meanwhile: keep both findings.
		for i, v := range prev.feas {
			if feas[i] == 0 && v != 0 {
				feas[i], reasons[i] = v, prev.reasons[i]
			}
		}
	}
	if t.feasible == nil || len(t.feasible) >= maxTablePools {
		t.feasible = map[feasKey]feasibility{}
	}
	t.feasible[k] = feasibility{feas, reasons}
}

// Nodes returns the nodes the table was built from.
func (t *NodeTable) Nodes() []*structs.Node { return t.nodes }

// pool returns the positions of the nodes ready and in job's node pool
// and datacenters, in node order, and their count per datacenter. The
// caller must not modify them.
func (t *NodeTable) pool(job *structs.Job) ([]int, map[string]int) {
	key := poolKey(job)
	t.mu.Lock()
	if p, ok := t.pools[key]; ok {
		t.mu.Unlock()
		return p.nodes, p.avail
	}
	t.mu.Unlock()
	p := tablePool{nodes: make([]int, 0, len(t.base)), avail: map[string]int{}}
	for i := range t.base {
		n := t.base[i].node
		if n.Ready() && inPool(job, n) {
			p.nodes = append(p.nodes, i)
			p.avail[n.Datacenter]++
		}
	}
	t.mu.Lock()
	if t.pools == nil || len(t.pools) >= maxTablePools {
		t.pools = map[string]tablePool{}
	}
	t.pools[key] = p
	t.mu.Unlock()
	return p.nodes, p.avail
}

// poolKey names what inPool reads of a job: its node pool and
// datacenters.
func poolKey(job *structs.Job) string {
	return job.NodePool + "\x00" + strings.Join(job.Datacenters, "\x00")
}
