package scheduler

import (
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
