package scheduler

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// placeSummary prints everything a placement decided: each new alloc's
// node, ports and metric, each group's failure metric and the unplaced
// placements. Allocation times are left out (they are wall-clock).
func placeSummary(res *PlaceResult) string {
	var b strings.Builder
	metric := func(m *structs.AllocationMetric) string {
		if m == nil {
			return "<nil>"
		}
		c := *m
		c.AllocationTime = 0
		return fmt.Sprintf("%+v", c)
	}
	for _, a := range res.Allocs {
		fmt.Fprintf(&b, "alloc %s %s node=%s ports=%+v", a.ID, a.Name, a.NodeID, a.AllocatedResources.Shared.Ports)
		for _, n := range a.AllocatedResources.Shared.Networks {
			fmt.Fprintf(&b, " net=%+v", *n)
		}
		fmt.Fprintf(&b, " metric=%s\n", metric(a.Metrics))
	}
	groups := make([]string, 0, len(res.Failed))
	for g := range res.Failed {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		fmt.Fprintf(&b, "failed %s %s\n", g, metric(res.Failed[g]))
	}
	for _, pl := range res.Unplaced {
		fmt.Fprintf(&b, "unplaced %s %s node=%q replaces=%q\n", pl.AllocID, pl.Name, pl.NodeID, pl.Replaces)
	}
	return b.String()
}

// usageSummary prints every node's usage, loading the nodes a lazy placer
// has not read yet.
func usageSummary(p *Placer) string {
	var b strings.Builder
	for i := range p.nodes {
		ns := p.ns(i)
		if !p.usable(i) {
			fmt.Fprintf(&b, "%s unusable\n", ns.node.ID)
			continue
		}
		var ports []int
		for port, n := range ns.ports {
			for range n {
				ports = append(ports, port)
			}
		}
		sort.Ints(ports)
		jobs := map[string]int{}
		for k, n := range ns.jobs {
			if n != 0 {
				jobs[fmt.Sprintf("%s/%s/%t", k.job, k.group, k.whole)] = n
			}
		}
		fmt.Fprintf(&b, "%s used=%+v ports=%v jobs=%v\n", ns.node.ID, ns.used, ports, jobs)
	}
	return b.String()
}

// usableNodes counts the nodes whose allocs p could read.
func usableNodes(p *Placer) int {
	n := 0
	for i := range p.nodes {
		if p.usable(i) {
			n++
		}
	}
	return n
}

// countingLoader serves allocs by node and records how often each node is
// read.
type countingLoader struct {
	byNode map[string][]*structs.Allocation
	calls  map[string]int
	fail   map[string]bool
}

func newCountingLoader(byNode map[string][]*structs.Allocation) *countingLoader {
	return &countingLoader{byNode: byNode, calls: map[string]int{}, fail: map[string]bool{}}
}

var errTestLoad = errors.New("test: read failed")

func (l *countingLoader) load(id string) ([]*structs.Allocation, error) {
	l.calls[id]++
	if l.fail[id] {
		return nil, errTestLoad
	}
	return l.byNode[id], nil
}

// TestLazyPlacerMatchesEager places random plans over random clusters with
// both placers and the same seed: every choice, port, metric and the final
// usage of every node must be the same. The lazy placer must read a node
// at most once, and never one no placement could use.
func TestLazyPlacerMatchesEager(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	placed, replaced, stopped, pinned, loadedSome, tabled, keptHits := 0, 0, 0, 0, 0, 0, 0
	for i := 0; i < 3000; i++ {
		w := randomCluster(r)
		plan := Reconcile(w.in)
		limit := 0
		if r.IntN(4) == 0 {
			limit = 1 + r.IntN(4)
		}
		seed := r.Uint64()

		eager := NewPlacer(w.in.Nodes, w.all(), seed)
		eager.Limit = limit
		want := eager.Place(w.in.Job, plan, w.in.Now)

		// Sometimes some other jobs' allocs are known up front too (up to
		// every alloc of the cluster): that must change nothing either.
		upFront := w.in.Allocs
		if r.IntN(4) == 0 {
			upFront = append([]*structs.Allocation{}, upFront...)
			for _, a := range w.others {
				if r.IntN(2) == 0 {
					upFront = append(upFront, a)
				}
			}
		}
		loader := newCountingLoader(w.byNode())
		lazy := NewPlacerLazy(w.in.Nodes, upFront, loader.load, seed)
		if len(upFront) == len(w.in.Allocs) && r.IntN(2) == 0 {
			// The job's own allocs, the job named by the caller (a
			// worker's pass).
			lazy = NewPlacerLazyJob(w.in.Nodes, w.in.Job.Namespace, w.in.Job.ID, upFront, loader.load, seed)
		}
		lazy.Limit = limit
		got := lazy.Place(w.in.Job, plan, w.in.Now)

		if a, b := placeSummary(want), placeSummary(got); a != b {
			t.Fatalf("case %d: placements differ\neager:\n%s\nlazy:\n%s\nplan:\n%s", i, a, b, plan)
		}
		for _, n := range w.in.Nodes {
			c := loader.calls[n.ID]
			if c > 1 {
				t.Fatalf("case %d: node %s read %d times", i, n.ID, c)
			}
			if c > 0 && (!n.Ready() || !inPool(w.in.Job, n) || n.Attributes["kernel.name"] != "linux") {
				t.Fatalf("case %d: node %s read though no placement can use it", i, n.ID)
			}
		}
		if len(loader.calls) > 0 && len(loader.calls) < len(w.in.Nodes) {
			loadedSome++
		}
		if a, b := usageSummary(eager), usageSummary(lazy); a != b {
			t.Fatalf("case %d: usage differs\neager:\n%s\nlazy:\n%s\nplan:\n%s", i, a, b, plan)
		}
		if len(upFront) == len(w.in.Allocs) {
			// A worker's pass over the leader's NodeTable: twice from one
			// table, since a placer must leave the table as it was.
			table := NewNodeTable(w.in.Nodes)
			for k := 0; k < 2; k++ {
				tl := newCountingLoader(w.byNode())
				tp := NewPlacerLazyTable(table, w.in.Job.Namespace, w.in.Job.ID, upFront, tl.load, seed)
				tp.Limit = limit
				res := tp.Place(w.in.Job, plan, w.in.Now)
				if a, b := placeSummary(want), placeSummary(res); a != b {
					t.Fatalf("case %d: placements from a node table (placer %d) differ\neager:\n%s\ntable:\n%s\nplan:\n%s", i, k, a, b, plan)
				}
				if a, b := usageSummary(eager), usageSummary(tp); a != b {
					t.Fatalf("case %d: usage from a node table (placer %d) differs\neager:\n%s\ntable:\n%s", i, k, a, b)
				}
				tabled++
			}
			// Through the table's kept usage (a versioned loader): the
			// first placer counts each node it loads and keeps the sums,
			// the second takes them without reading, and a new version
			// is read again. Each must place and count as the eager one:
			// the kept sums must leave every placer as it was.
			for k, version := range []string{"v1", "v1", "v2"} {
				reads := map[string]int{}
				vl := newCountingLoader(w.byNode())
				load := func(id string) (any, func() ([]*structs.Allocation, error), error) {
					return version, func() ([]*structs.Allocation, error) {
						reads[id]++
						return vl.load(id)
					}, nil
				}
				vp := NewPlacerLazyTableVersioned(table, w.in.Job.Namespace, w.in.Job.ID, upFront, load, seed)
				vp.Limit = limit
				res := vp.Place(w.in.Job, plan, w.in.Now)
				if a, b := placeSummary(want), placeSummary(res); a != b {
					t.Fatalf("case %d: placements through kept usage (placer %d) differ\neager:\n%s\nkept:\n%s\nplan:\n%s", i, k, a, b, plan)
				}
				if a, b := usageSummary(eager), usageSummary(vp); a != b {
					t.Fatalf("case %d: usage through kept usage (placer %d) differs\neager:\n%s\nkept:\n%s", i, k, a, b)
				}
				switch {
				case k == 1 && len(reads) > 0:
					t.Fatalf("case %d: the second placer at one version read %d nodes again", i, len(reads))
				case k != 1 && len(reads) == 0 && len(w.in.Nodes) > 0 && usableNodes(vp) > 0:
					t.Fatalf("case %d: placer %d at a new version read no node", i, k)
				}
				if k == 1 {
					keptHits += usableNodes(vp)
				}
			}
		}
		placed += len(got.Allocs)
		stopped += len(plan.Stop)
		for _, pl := range plan.Place {
			if pl.Replaces != "" {
				replaced++
			}
			if pl.NodeID != "" {
				pinned++
			}
		}
	}
	t.Logf("placed %d, replacing %d, stopped %d, pinned %d; %d cases read only some nodes; %d placers from a node table; %d nodes' usage taken as kept", placed, replaced, stopped, pinned, loadedSome, tabled, keptHits)
	// The worlds must exercise what the comparison is for.
	if placed == 0 || replaced == 0 || stopped == 0 || pinned == 0 || loadedSome == 0 || tabled == 0 || keptHits == 0 {
		t.Fatalf("random worlds too tame: placed %d, replacing %d, stopped %d, pinned %d, partial reads %d",
			placed, replaced, stopped, pinned, loadedSome)
	}
}

// TestLazyPlacerReleasedBeforeLoad replaces an alloc that fills its node
// before the node is read: the replacement must see the node free, and
// the loaded node must not count the replaced alloc again.
func TestLazyPlacerReleasedBeforeLoad(t *testing.T) {
	ns := nodes(1, func(_ int, n *structs.Node) { n.NodeResources.Memory.MemoryMB = 1000 })
	old := baseJob()
	old.TaskGroups[0].Count = 1
	old.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: 100, MemoryMB: 600}
	job := old.Copy()
	job.Version = 1
	job.TaskGroups[0].Tasks[0].Env = map[string]string{"A": "2"}
	a := &structs.Allocation{
		ID: "old", Name: structs.AllocName("example", "web", 0), JobID: "example", Job: old, TaskGroup: "web",
		NodeID: "n0", DesiredStatus: "run", ClientStatus: "running",
		AllocatedResources: &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
			"main": {Memory: structs.AllocatedMemoryResources{MemoryMB: 600}},
		}},
	}
	n := 0
	plan := Reconcile(Input{Job: job, Allocs: []*structs.Allocation{a}, Nodes: ns, Now: baseTime, EvalID: "e",
		IDs: func() string { n++; return fmt.Sprint("new", n) }})
	if len(plan.Place) != 1 || plan.Place[0].Replaces != "old" {
		t.Fatalf("want one replacement of old, got\n%s", plan)
	}
	loader := newCountingLoader(map[string][]*structs.Allocation{"n0": {a}})
	p := NewPlacerLazy(ns, []*structs.Allocation{a}, loader.load, 1)
	res := p.Place(job, plan, baseTime)
	if len(res.Allocs) != 1 || res.Allocs[0].NodeID != "n0" {
		t.Fatalf("replacement not placed on n0: %s", placeSummary(res))
	}
	if used := p.nodes[0].used.MemoryMB; used != 600 {
		t.Fatalf("n0 uses %d MB, want 600 (the replacement only)", used)
	}
}

// TestLazyPlacerRestoresUnloadedRelease fails a replacement while its old
// alloc's node is not read: the old alloc must count again once it is.
func TestLazyPlacerRestoresUnloadedRelease(t *testing.T) {
	ns := nodes(2, func(i int, n *structs.Node) {
		if i == 1 {
			n.Attributes["kernel.name"] = "windows"
		}
	})
	job := baseJob()
	job.TaskGroups[0].Count = 1
	job.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}
	job.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: 100, MemoryMB: 600}
	a := &structs.Allocation{
		ID: "old", JobID: "example", Job: job, TaskGroup: "web", NodeID: "n1",
		DesiredStatus: "run", ClientStatus: "running",
		AllocatedResources: &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
			"main": {Memory: structs.AllocatedMemoryResources{MemoryMB: 600}},
		}},
	}
	// n0 is full, n1 infeasible: the replacement fails and never reads n1.
	ns[0].NodeResources.Memory.MemoryMB = 100
	plan := &Plan{EvalID: "e", Place: []Placement{{AllocID: "new", Name: "example.web[0]", TaskGroup: "web", Replaces: "old"}}}
	loader := newCountingLoader(map[string][]*structs.Allocation{"n1": {a}})
	p := NewPlacerLazy(ns, []*structs.Allocation{a}, loader.load, 1)
	res := p.Place(job, plan, baseTime)
	if len(res.Allocs) != 0 || len(res.Unplaced) != 1 {
		t.Fatalf("want the replacement unplaced: %s", placeSummary(res))
	}
	if loader.calls["n1"] != 0 {
		t.Fatalf("infeasible n1 read %d times", loader.calls["n1"])
	}
	if !p.usable(1) || p.nodes[1].used.MemoryMB != 600 {
		t.Fatalf("n1 uses %d MB after loading, want 600 (old still runs)", p.nodes[1].used.MemoryMB)
	}
}

// TestLazyPlacerLoadError leaves out a node whose allocs cannot be read,
// with a reason in the metric, and reads it only once.
func TestLazyPlacerLoadError(t *testing.T) {
	ns := nodes(3, nil)
	j, plan := placeJob(4, func(j *structs.Job) {
		j.TaskGroups[0].Constraints = []*structs.Constraint{{Operand: structs.ConstraintDistinctHosts, RTarget: "true"}}
	})
	loader := newCountingLoader(nil)
	loader.fail["n1"] = true
	p := NewPlacerLazy(ns, nil, loader.load, 3)
	res := p.Place(j, plan, baseTime)
	if len(res.Allocs) != 2 {
		t.Fatalf("placed %d, want 2: %s", len(res.Allocs), placeSummary(res))
	}
	for _, a := range res.Allocs {
		if a.NodeID == "n1" {
			t.Fatalf("alloc %s placed on unreadable n1", a.ID)
		}
	}
	m := res.Failed["web"]
	if m == nil || m.ConstraintFiltered[ReasonNodeAllocsUnavailable] == 0 {
		t.Fatalf("want %q in the failure metric, got %+v", ReasonNodeAllocsUnavailable, m)
	}
	if loader.calls["n1"] != 1 {
		t.Fatalf("n1 read %d times, want 1", loader.calls["n1"])
	}
	errs := p.LoadErrors()
	if len(errs) != 1 || !errors.Is(errs[0], ErrNodeAllocs) || !errors.Is(errs[0], errTestLoad) {
		t.Fatalf("load errors %v", errs)
	}
}

// TestLazyPlacerNilLoader places against the job's own allocs alone.
func TestLazyPlacerNilLoader(t *testing.T) {
	ns := nodes(2, nil)
	j, plan := placeJob(3, nil)
	res := NewPlacerLazy(ns, nil, nil, 1).Place(j, plan, baseTime)
	want := NewPlacer(ns, nil, 1).Place(j, plan, baseTime)
	if a, b := placeSummary(want), placeSummary(res); a != b {
		t.Fatalf("eager:\n%s\nlazy:\n%s", a, b)
	}
}
