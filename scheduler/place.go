package scheduler

import (
	"maps"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/droverhq/drover/structs"
)

// Placer finds nodes for a plan's placements. It holds every node's usage
// (from the live allocs it was given, or for a lazy placer, read node by
// node when a placement first needs it) and updates it as it places, so
// one Placer can serve many plans in turn against the same snapshot.
//
// Each placement looks at nodes in a shuffled order from a rotating
// cursor, skips infeasible ones (feasibility is cached per group and node)
// and ranks at most Limit nodes that fit, as Nomad does, so a placement
// costs O(log n) node checks rather than O(n).
type Placer struct {
	nodes []*nodeState
	byID  map[string]int
	// allocs are the live allocs the placer knows by ID: every one given
	// to NewPlacer; for NewPlacerLazy, those of the job it released or
	// restored (all of them once indexed); plus the ones it placed. A
	// released alloc's node is stored as -1-node.
	allocs map[string]allocRef
	// load reads one node's allocs for a lazy placer (nil otherwise).
	load func(nodeID string) ([]*structs.Allocation, error)
	// loadVersioned, with a table, reads it through the table's kept
	// usage (NewPlacerLazyTableVersioned).
	loadVersioned VersionedNodeAllocs
	// jobAllocs are the allocs given to NewPlacerLazy; indexed is set
	// once the live ones are all in allocs.
	jobAllocs []*structs.Allocation
	indexed   bool
	// knownJobs are the jobs of the allocs a lazy placer was given up
	// front; anyJobKnown is set when there were too many to list.
	knownJobs   []nsJob
	anyJobKnown bool
	rng         *rand.Rand
	cache       *constraintCache
	// table, when the placer was built from one, holds the nodes' pools.
	table *NodeTable
	// Limit overrides the number of fitting nodes ranked per placement
	// (default max(2, ceil(log2 n))).
	Limit int
	// Spread ranks fitting nodes by how empty they would be instead of
	// how full (the scheduler configuration's SchedulerAlgorithm "spread").
	Spread bool
	// NoMemoryOversubscription places tasks without their memory_max (the
	// scheduler configuration's MemoryOversubscriptionEnabled false).
	NoMemoryOversubscription bool
}

type allocRef struct {
	alloc *structs.Allocation
	node  int
}

// liveOn returns the index of the node a live (not terminal) alloc is on,
// and false for a terminal alloc or one on a node the placer lacks.
func (p *Placer) liveOn(a *structs.Allocation) (int, bool) {
	if a == nil || a.TerminalStatus() {
		return 0, false
	}
	i, ok := p.byID[a.NodeID]
	return i, ok
}

// NewPlacer builds usage from allocs (terminal ones are ignored) over
// nodes. seed makes the node order, and so every choice, reproducible.
// It reads every alloc up front; NewPlacerLazy reads a node's allocs only
// when a placement looks at the node.
func NewPlacer(nodes []*structs.Node, allocs []*structs.Allocation, seed uint64) *Placer {
	p := newPlacer(nodes, len(allocs), seed)
	p.indexed = true
	for _, ns := range p.nodes {
		ns.loaded = true
	}
	for _, a := range allocs {
		if i, ok := p.liveOn(a); ok {
			p.ns(i).add(a, 1)
			p.allocs[a.ID] = allocRef{a, i}
		}
	}
	return p
}

// newPlacer indexes nodes (nil and duplicate IDs skipped) with no usage
// counted yet.
func newPlacer(nodes []*structs.Node, allocs int, seed uint64) *Placer {
	p := &Placer{
		byID:   make(map[string]int, len(nodes)),
		allocs: make(map[string]allocRef, allocs),
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		cache:  newConstraintCache(),
	}
	for _, n := range nodes {
		if n == nil {
			continue
		}
		if _, dup := p.byID[n.ID]; dup {
			continue
		}
		p.byID[n.ID] = len(p.nodes)
		p.nodes = append(p.nodes, newNodeState(n))
	}
	return p
}

// PlaceResult is what placement made of a plan.
type PlaceResult struct {
	// Allocs are the new allocations, in plan order.
	Allocs []*structs.Allocation
	// Failed explains, per group, why placements found no node; later
	// failures of a group are coalesced into its first.
	Failed map[string]*structs.AllocationMetric
	// Unplaced are the placements that found no node. Their Replaces
	// allocs must keep running.
	Unplaced []Placement
}

// groupCtx is what placement needs per group, built once per plan.
type groupCtx struct {
	tg          *structs.TaskGroup
	req         structs.ComparableResources
	constraints []*structs.Constraint
	distinctJob bool
	distinctTG  bool
	// distinct are the distinct_property constraints; namespace is the
	// job's, to count its allocs.
	distinct  []distinctProperty
	namespace string
	feas      []uint8 // 0 unknown, 1 feasible, 2 filtered
	reasons   []string
	spreads   []*spreadState
	// affinities are the job's, the group's and its tasks'; affinity
	// caches each node's score (NaN: not yet computed).
	affinities []*structs.Affinity
	affinity   []float64
	key        jobGroup
	// zoneAttr is the group's zones attribute ("" without zones); zones
	// caches each node's zone under it ("\x00" when not yet resolved).
	zoneAttr string
	zones    []string
	// zonePos holds each zone's positions in the pool of the Place call
	// (zoneAt).
	zonePos map[string][]int
	// perAlloc: a per_alloc host volume makes feasibility depend on the
	// allocation's index, so it is checked per placement (hostvolume.go).
	perAlloc bool
}

// ReasonZone is the AllocationMetric.ConstraintFiltered key of nodes left
// out because they are not in the zone of the alloc a replacement replaces.
const ReasonZone = "not in the zone of the replaced allocation"

// zoneOf returns node i's zone for the group: from the table's zones of
// its nodes when the placer has a table, which resolves them once for all
// its passes.
func (g *groupCtx) zoneOf(p *Placer, i int) string {
	if p.table != nil {
		// The table's slice is shared by every placer: read only.
		if g.zones == nil {
			g.zones = p.table.zonesOf(g.zoneAttr)
		}
		return g.zones[i]
	}
	if g.zones == nil {
		g.zones = make([]string, len(p.nodes))
		for j := range g.zones {
			g.zones[j] = "\x00"
		}
	}
	if g.zones[i] == "\x00" {
		g.zones[i] = structs.ZoneOf(p.nodeAt(i), g.zoneAttr)
	}
	return g.zones[i]
}

// zoneAt returns, for each zone, the positions in pool of its nodes in
// ascending order, computed once per group and pool.
func (g *groupCtx) zoneAt(p *Placer, pool []int) map[string][]int {
	if g.zonePos == nil {
		g.zonePos = map[string][]int{}
		for k, i := range pool {
			z := g.zoneOf(p, i)
			g.zonePos[z] = append(g.zonePos[z], k)
		}
	}
	return g.zonePos
}

// inZone reports whether node i may take placement pl: any node, unless pl
// must land in a zone.
func (g *groupCtx) inZone(p *Placer, pl Placement, i int, m *structs.AllocationMetric) bool {
	if !pl.InZone || g.zoneAttr == "" || g.zoneOf(p, i) == pl.Zone {
		return true
	}
	filter(m, ReasonZone)
	return false
}

// Place finds a node for each of plan's placements of job. Stopped allocs
// free their resources first; a replaced alloc frees its resources for its
// own replacement, and keeps them if the replacement fails.
func (p *Placer) Place(job *structs.Job, plan *Plan, now time.Time) *PlaceResult {
	res := &PlaceResult{}
	if job == nil || plan == nil {
		return res
	}
	for _, s := range plan.Stop {
		if s.Alloc != nil {
			p.releaseAlloc(s.Alloc)
		}
	}
	pool, avail := p.pool(job)
	limit := p.Limit
	if limit <= 0 {
		limit = max(2, bits.Len(uint(len(pool))))
	}
	groups := map[string]*groupCtx{}
	cursor := 0
	for _, pl := range plan.Place {
		g := groups[pl.TaskGroup]
		if g == nil {
			tg := job.LookupTaskGroup(pl.TaskGroup)
			if tg == nil {
				res.Unplaced = append(res.Unplaced, pl)
				continue
			}
			g = p.newGroupCtx(job, tg, pool)
			groups[pl.TaskGroup] = g
		}
		if m := res.Failed[pl.TaskGroup]; m != nil && pl.NodeID == "" {
			m.CoalescedFailures++
			res.Unplaced = append(res.Unplaced, pl)
			continue
		}
		// A replaced alloc's resources are free to its own replacement
		// only: if the replacement fails, the old alloc keeps running.
		switch {
		case pl.replaced != nil && pl.replaced.ID == pl.Replaces:
			p.releaseAlloc(pl.replaced)
		case pl.Replaces != "":
			p.release(pl.Replaces)
		}
		start := time.Now()
		metric := &structs.AllocationMetric{NodesInPool: len(pool)}
		var best int
		if pl.NodeID != "" {
			best = p.pinned(job, g, pl, metric)
		} else if i := p.sticky(job, g, pl, metric); i >= 0 {
			best = i
		} else {
			glimit := limit
			if len(g.spreads) > 0 {
				glimit *= 2
			}
			if len(g.affinities) > 0 {
				// As Nomad's: a preference is only as good as the nodes
				// it is weighed on, so every fitting node is ranked.
				glimit = len(pool)
			}
			best, cursor = p.search(g, pl, pool, cursor, glimit, metric)
		}
		var a *structs.Allocation
		if best >= 0 {
			var dim string
			if a, dim = p.commit(job, g, pl, best, plan.EvalID, now); a == nil {
				exhaust(metric, p.ns(best), dim)
			}
		}
		metric.AllocationTime = time.Since(start)
		if a == nil {
			metric.NodesAvailable = avail
			if res.Failed == nil {
				res.Failed = map[string]*structs.AllocationMetric{}
			}
			if prev := res.Failed[pl.TaskGroup]; prev != nil {
				prev.CoalescedFailures++
			} else {
				res.Failed[pl.TaskGroup] = metric
			}
			p.unplace(res, pl)
			continue
		}
		a.Metrics = metric
		res.Allocs = append(res.Allocs, a)
	}
	if p.table != nil {
		for _, g := range groups {
			p.table.keepFeasibility(job, g.tg.Name, g.feas, g.reasons)
		}
	}
	return res
}

// unplace records a failed placement and puts its replaced alloc back.
func (p *Placer) unplace(res *PlaceResult, pl Placement) {
	res.Unplaced = append(res.Unplaced, pl)
	if pl.Replaces != "" {
		if r, ok := p.allocs[pl.Replaces]; ok && r.node < 0 {
			p.restore(pl.Replaces)
		}
	}
}

// releaseAlloc releases one of the allocs the placer was given, found by
// its pointer: a lazy placer need not index the job's allocs for it.
func (p *Placer) releaseAlloc(a *structs.Allocation) {
	if _, ok := p.allocs[a.ID]; !ok && !p.indexed {
		i, live := p.liveOn(a)
		if !live {
			return
		}
		p.allocs[a.ID] = allocRef{a, i}
	}
	p.release(a.ID)
}

// release frees a live alloc's resources, remembering it was freed. On a
// node not loaded yet only the mark changes: loading counts the alloc in
// only if it is live then.
func (p *Placer) release(id string) {
	r, ok := p.allocs[id]
	if !ok && !p.indexed {
		p.indexJobAllocs()
		r, ok = p.allocs[id]
	}
	if !ok || r.node < 0 {
		return
	}
	// A node whose state is not made yet has nothing loaded.
	if ns := p.nodes[r.node]; ns != nil && ns.loaded {
		ns.add(r.alloc, -1)
	}
	p.allocs[id] = allocRef{r.alloc, -1 - r.node}
}

func (p *Placer) restore(id string) {
	r := p.allocs[id]
	i := -1 - r.node
	if ns := p.nodes[i]; ns != nil && ns.loaded {
		ns.add(r.alloc, 1)
	}
	p.allocs[id] = allocRef{r.alloc, i}
}

// pool returns the indexes of ready nodes in the job's datacenters and
// node pool, shuffled, and their count per datacenter.
func (p *Placer) pool(job *structs.Job) ([]int, map[string]int) {
	if p.table != nil {
		nodes, avail := p.table.pool(job)
		pool := slices.Clone(nodes)
		p.rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		return pool, maps.Clone(avail)
	}
	pool := make([]int, 0, len(p.nodes))
	avail := map[string]int{}
	for i, ns := range p.nodes {
		if ns.node.Ready() && inPool(job, ns.node) {
			pool = append(pool, i)
			avail[ns.node.Datacenter]++
		}
	}
	p.rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	return pool, avail
}

func (p *Placer) newGroupCtx(job *structs.Job, tg *structs.TaskGroup, pool []int) *groupCtx {
	g := &groupCtx{
		tg: tg, req: tg.GroupResources(), constraints: groupConstraints(job, tg),
		key: groupKey(job.ID, tg.Name),
	}
	if p.table != nil {
		// What the passes before this one found of the nodes they looked
		// at, for the same job and group.
		g.feas, g.reasons = p.table.feasibility(job, tg.Name)
	} else {
		g.feas, g.reasons = make([]uint8, len(p.nodes)), make([]string, len(p.nodes))
	}
	if tg.Update != nil && tg.Update.Zones != nil && job.Type != structs.JobTypeBatch {
		g.zoneAttr = tg.Update.Zones.Attribute
	}
	g.affinities = groupAffinities(job, tg)
	if len(g.affinities) > 0 {
		g.affinity = make([]float64, len(p.nodes))
		for i := range g.affinity {
			g.affinity[i] = math.NaN()
		}
	}
	g.distinctJob = hasDistinctHosts(job.Constraints)
	g.distinctTG = hasDistinctHosts(tg.Constraints)
	g.distinct, g.namespace = distinctProperties(job, tg), job.Namespace
	g.perAlloc = hasPerAllocVolume(tg)
	for _, sp := range append(append([]*structs.Spread{}, job.Spreads...), tg.Spreads...) {
		if sp == nil {
			continue
		}
		s := newSpreadState(sp, p, pool)
		p.indexJobAllocs()
		for _, r := range p.allocs {
			if r.node >= 0 && r.alloc.JobID == job.ID && r.alloc.TaskGroup == tg.Name && sameNamespace(r.alloc.Namespace, job.Namespace) {
				s.count(r.node)
			}
		}
		g.spreads = append(g.spreads, s)
	}
	return g
}

// check evaluates one node for the group: feasibility (cached), distinct
// hosts and fit. It returns false with the metric updated when the node is
// out.
func (p *Placer) check(g *groupCtx, pl Placement, i int, m *structs.AllocationMetric) bool {
	ns := p.ns(i)
	m.NodesEvaluated++
	if g.feas[i] == 0 {
		ok, why := nodeFeasible(g.constraints, g.tg, ns.node, p.cache)
		g.feas[i] = 2
		if ok {
			g.feas[i] = 1
		}
		g.reasons[i] = why
	}
	if g.feas[i] == 2 {
		filter(m, g.reasons[i])
		return false
	}
	if g.perAlloc && !hostVolumesOK(g.tg, pl.Index, ns.node) {
		filter(m, ReasonMissingHostVolumes)
		return false
	}
	if !p.usable(i) {
		filter(m, ReasonNodeAllocsUnavailable)
		return false
	}
	if g.distinctJob && ns.jobs[jobKey(g.key.job)] > 0 || g.distinctTG && ns.jobs[g.key] > 0 {
		filter(m, structs.ConstraintDistinctHosts)
		return false
	}
	if ok, why := p.distinctPropertyOK(g, i); !ok {
		filter(m, why)
		return false
	}
	if ok, dim := g.req.Fits(ns.free()); !ok {
		exhaust(m, ns, dim)
		return false
	}
	return true
}

func filter(m *structs.AllocationMetric, why string) {
	m.NodesFiltered++
	if m.ConstraintFiltered == nil {
		m.ConstraintFiltered = map[string]int{}
	}
	m.ConstraintFiltered[why]++
}

func exhaust(m *structs.AllocationMetric, ns *nodeState, dim string) {
	m.NodesExhausted++
	if m.DimensionExhausted == nil {
		m.DimensionExhausted = map[string]int{}
	}
	m.DimensionExhausted[dim]++
	if c := ns.node.NodeClass; c != "" {
		if m.ClassExhausted == nil {
			m.ClassExhausted = map[string]int{}
		}
		m.ClassExhausted[c]++
	}
}

// search walks the shuffled pool from cursor and returns the best of the
// first limit fitting nodes (or -1), and the cursor to continue from.
func (p *Placer) search(g *groupCtx, pl Placement, pool []int, cursor, limit int, m *structs.AllocationMetric) (int, int) {
	if pl.InZone && g.zoneAttr != "" {
		return p.searchZone(g, pl, pool, cursor, limit, m)
	}
	return p.searchPool(g, pl, pool, cursor, limit, m)
}

// searchPool is search over every node of the pool.
func (p *Placer) searchPool(g *groupCtx, pl Placement, pool []int, cursor, limit int, m *structs.AllocationMetric) (int, int) {
	best, bestScore, found := -1, math.Inf(-1), 0
	n := len(pool)
	for seen := 0; seen < n && found < limit; seen++ {
		i := pool[cursor]
		cursor++
		if cursor == n {
			cursor = 0
		}
		if !g.inZone(p, pl, i, m) || !p.check(g, pl, i, m) {
			continue
		}
		found++
		if s := p.score(g, pl, i); s > bestScore {
			best, bestScore = i, s
		}
	}
	if best >= 0 {
		// The chosen node's score, which a disconnect's best_score
		// compares (disconnect.go).
		m.Scores = map[string]float64{p.nodeAt(best).ID + disconnectScoreSuffix: bestScore}
	}
	return best, cursor
}

// searchZone is search for a placement that must land in pl.Zone. It
// walks only the zone's nodes, in the pool's order from cursor, and
// returns what searchPool returns (the node, the cursor to continue from
// and the metric, where each node of another zone that searchPool would
// have passed is filtered for ReasonZone): in a zone rollout a zone holds
// a small share of the pool, and searchPool passed a whole zone's worth
// of other nodes for each placement.
func (p *Placer) searchZone(g *groupCtx, pl Placement, pool []int, cursor, limit int, m *structs.AllocationMetric) (int, int) {
	at := g.zoneAt(p, pool)[pl.Zone]
	n := len(pool)
	best, bestScore, found := -1, math.Inf(-1), 0
	// passed counts the pool's positions searchPool would have seen, and
	// visited those of them in the zone.
	passed, visited, next := 0, 0, cursor
	first, _ := slices.BinarySearch(at, cursor)
	for v := 0; v < len(at) && found < limit; v++ {
		k := at[(first+v)%len(at)]
		d := k - next
		if d < 0 {
			d += n
		}
		passed += d + 1
		visited++
		if next = k + 1; next == n {
			next = 0
		}
		i := pool[k]
		if !p.check(g, pl, i, m) {
			continue
		}
		found++
		if s := p.score(g, pl, i); s > bestScore {
			best, bestScore = i, s
		}
	}
	if found < limit {
		// searchPool went round the whole pool, back to where it began.
		passed, next = n, cursor
	}
	if other := passed - visited; other > 0 {
		m.NodesFiltered += other
		if m.ConstraintFiltered == nil {
			m.ConstraintFiltered = map[string]int{}
		}
		m.ConstraintFiltered[ReasonZone] += other
	}
	if best >= 0 {
		m.Scores = map[string]float64{p.nodeAt(best).ID + disconnectScoreSuffix: bestScore}
	}
	return best, next
}

// pinned evaluates the one node a placement is pinned to.
func (p *Placer) pinned(job *structs.Job, g *groupCtx, pl Placement, m *structs.AllocationMetric) int {
	i, ok := p.byID[pl.NodeID]
	if !ok {
		return -1
	}
	ns := p.ns(i)
	if !ns.node.Ready() || !inPool(job, ns.node) {
		filter(m, "node not ready or not in pool")
		return -1
	}
	if !g.inZone(p, pl, i, m) || !p.check(g, pl, i, m) {
		return -1
	}
	return i
}

// score ranks a fitting node: the mean of bin packing, job anti-affinity
// (when the node already runs the group and the group has no spread), a
// penalty for the node a rescheduled alloc failed on, spread, and node
// affinity (when some affinity matches the node), as Nomad's score
// normalization.
func (p *Placer) score(g *groupCtx, pl Placement, i int) float64 {
	ns := p.ns(i)
	sum, n := fitScore(ns, g.req, p.Spread), 1.0
	// Spread already distributes the group; anti-affinity would fight its
	// targets, so it applies only to groups without spread.
	if s, ok := antiAffinity(ns, g.key, g.tg.Count); ok && len(g.spreads) == 0 {
		sum += s
		n++
	}
	if pl.Reschedule && pl.PreviousNode == ns.node.ID {
		sum--
		n++
	}
	if len(g.spreads) > 0 {
		var w, total float64
		for _, s := range g.spreads {
			wt := float64(s.spread.Weight)
			if wt <= 0 {
				wt = 50
			}
			total += wt * s.boost(i, g.tg.Count)
			w += wt
		}
		sum += total / w
		n++
	}
	if s := g.affinityOf(p, i); s != 0 {
		sum += s
		n++
	}
	return sum / n
}

// affinityOf returns node i's affinity score for the group (cached).
func (g *groupCtx) affinityOf(p *Placer, i int) float64 {
	if len(g.affinities) == 0 {
		return 0
	}
	if math.IsNaN(g.affinity[i]) {
		g.affinity[i] = affinityScore(g.affinities, p.nodeAt(i), p.cache)
	}
	return g.affinity[i]
}

// commit builds the allocation on node i and records its usage.
func (p *Placer) commit(job *structs.Job, g *groupCtx, pl Placement, i int, evalID string, now time.Time) (*structs.Allocation, string) {
	ns := p.ns(i)
	var nets []*structs.NetworkResource
	nets = append(nets, g.tg.Networks...)
	ports, assigned, dim := assignPorts(nets, ns, p.rng)
	if dim != "" {
		return nil, dim
	}
	ar := &structs.AllocatedResources{
		Tasks:  make(map[string]*structs.AllocatedTaskResources, len(g.tg.Tasks)),
		Shared: structs.AllocatedSharedResources{DiskMB: g.req.DiskMB, Networks: assigned, Ports: ports},
	}
	for _, t := range g.tg.Tasks {
		if t == nil {
			continue
		}
		tr := &structs.AllocatedTaskResources{}
		if t.Resources != nil {
			tr.Cpu.CpuShares = int64(t.Resources.CPU)
			tr.Memory.MemoryMB = int64(t.Resources.MemoryMB)
			if !p.NoMemoryOversubscription {
				tr.Memory.MemoryMaxMB = int64(t.Resources.MemoryMaxMB)
			}
		}
		ar.Tasks[t.Name] = tr
	}
	a := &structs.Allocation{
		ID: pl.AllocID, Namespace: job.Namespace, EvalID: evalID, Name: pl.Name,
		NodeID: ns.node.ID, NodeName: ns.node.Name, JobID: job.ID, Job: job, TaskGroup: pl.TaskGroup,
		AllocatedResources: ar, DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus: structs.AllocClientStatusPending, DeploymentID: pl.DeploymentID,
		PreviousAllocation: pl.PreviousAlloc, RescheduleTracker: pl.RescheduleTracker,
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
	}
	if pl.Canary {
		a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
	}
	if g.zoneAttr != "" {
		a.Zone = g.zoneOf(p, i)
	}
	ns.add(a, 1)
	p.allocs[a.ID] = allocRef{a, i}
	for _, s := range g.spreads {
		s.count(i)
	}
	return a, ""
}
