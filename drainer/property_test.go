package drainer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// randomWorld builds a cluster of a few nodes (some draining, with a
// deadline passed or not, some ignoring system jobs), a service job with a
// random migrate.max_parallel and maybe a zone budget, a system job and a
// batch job, and allocations of each spread over the nodes, some already
// marked, stopped or finished.
func randomWorld(r *rand.Rand) Input {
	var nodes []*structs.Node
	for i := range 2 + r.IntN(4) {
		drain := []string{"", "", "1h", "1h", "-1", "0"}[r.IntN(6)]
		n := node(fmt.Sprintf("n%d", i), []string{"a", "b"}[r.IntN(2)], drain, time.Duration(r.IntN(3))*time.Second, r.IntN(3) == 0)
		nodes = append(nodes, n)
	}
	budget := ""
	if r.IntN(2) == 0 {
		budget = []string{"1", "2", "50%"}[r.IntN(3)]
	}
	web := job("web", structs.JobTypeService, 6, 1+r.IntN(3), budget)
	sys := job("sys", structs.JobTypeSystem, 0, 0, "")
	bat := job("bat", structs.JobTypeBatch, 3, 0, "")
	var allocs []*structs.Allocation
	flags := func() []string {
		switch r.IntN(8) {
		case 0:
			return []string{"migrate"}
		case 1:
			return []string{"migrate", "stopped"}
		case 2:
			return []string{"complete"}
		case 3:
			return []string{"healthy"}
		}
		return nil
	}
	for i := range 6 {
		allocs = append(allocs, alloc(web, i, nodes[r.IntN(len(nodes))].ID, flags()...))
	}
	for i := range 3 {
		allocs = append(allocs, alloc(bat, i, nodes[r.IntN(len(nodes))].ID, flags()...))
	}
	for _, n := range nodes {
		if r.IntN(3) > 0 {
			allocs = append(allocs, alloc(sys, 0, n.ID, flags()...))
		}
	}
	return Input{Now: t0.Add(time.Duration(r.IntN(2)) * 2 * time.Hour), Nodes: nodes,
		Jobs: []*structs.Job{web, sys, bat}, Allocs: allocs, Pending: map[JobRef]bool{}}
}

// TestDecideProperties checks, on random worlds, what every decision must
// hold: on graceful drains a group never has more than max_parallel allocs
// on the move (nor a zone more than its budget) once the marks are
// written, unless it had as many before and then gains none; batch allocs
// are not touched before the deadline; system allocs only once nothing
// else is left on their node; past the deadline everything left is
// marked (ignored system allocs aside); a complete drain has nothing left.
func TestDecideProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for i := range 3000 {
		in := randomWorld(r)
		d := Decide(in)
		if err := checkDecision(in, d); err != nil {
			t.Fatalf("case %d: %v\nnodes:\n%s\ndecision:\n%s", i, err, dumpWorld(in), show(d))
		}
	}
}

func checkDecision(in Input, d Decision) error {
	marked := map[string]bool{}
	for _, id := range d.Migrate {
		marked[id] = true
	}
	nodes := map[string]*structs.Node{}
	for _, n := range in.Nodes {
		nodes[n.ID] = n
	}
	web := in.Jobs[0].TaskGroups[0]
	zones := web.Update != nil && web.Update.Zones != nil
	before, after := 0, 0
	zBefore, zAfter, zSize := map[string]int{}, map[string]int{}, map[string]int{}
	onNode := map[string][]*structs.Allocation{}
	for _, a := range in.Allocs {
		if !live(a) {
			if marked[a.ID] {
				return fmt.Errorf("%s marked though it does not run", a.ID)
			}
			continue
		}
		onNode[a.NodeID] = append(onNode[a.NodeID], a)
		n := nodes[a.NodeID]
		graceful := n.DrainStrategy != nil && !n.DrainStrategy.Deadlined(in.Now)
		if marked[a.ID] && a.DesiredTransition.ShouldMigrate() {
			return fmt.Errorf("%s marked twice", a.ID)
		}
		if marked[a.ID] && n.DrainStrategy == nil {
			return fmt.Errorf("%s marked on node %s that does not drain", a.ID, n.ID)
		}
		switch a.JobID {
		case "web":
			z := ""
			if zones {
				z = structs.ZoneOf(n, web.Update.Zones.Attribute)
			}
			zSize[z]++
			if a.DesiredTransition.ShouldMigrate() {
				before++
				after++
				zBefore[z]++
				zAfter[z]++
			}
			if marked[a.ID] && graceful {
				after++
				zAfter[z]++
			}
		case "bat":
			if marked[a.ID] && graceful {
				return fmt.Errorf("batch alloc %s marked before the deadline", a.ID)
			}
		}
	}
	if mp := web.Migrate.Parallel(); after > before && after > mp {
		return fmt.Errorf("group web: %d on the move after, %d before, max_parallel %d", after, before, mp)
	}
	if zones {
		for z, n := range zAfter {
			budget, _ := web.Update.Zones.BudgetFor(zSize[z])
			if n > zBefore[z] && n > max(1, budget) {
				return fmt.Errorf("zone %q: %d on the move after, %d before, budget %d", z, n, zBefore[z], budget)
			}
		}
	}
	done := map[string]bool{}
	for _, x := range d.Done {
		done[x.NodeID] = true
	}
	for _, n := range in.Nodes {
		if n.DrainStrategy == nil {
			if done[n.ID] {
				return fmt.Errorf("node %s done without a drain", n.ID)
			}
			continue
		}
		ignoreSys := n.DrainStrategy.IgnoreSystemJobs
		others := 0
		for _, a := range onNode[n.ID] {
			if a.JobID != "sys" {
				others++
			}
		}
		left := 0
		for _, a := range onNode[n.ID] {
			isSys := a.JobID == "sys"
			if isSys && ignoreSys {
				if marked[a.ID] {
					return fmt.Errorf("ignored system alloc %s marked", a.ID)
				}
				continue
			}
			left++
			if n.DrainStrategy.Deadlined(in.Now) && !marked[a.ID] && !a.DesiredTransition.ShouldMigrate() {
				return fmt.Errorf("%s left unmarked past the deadline of %s", a.ID, n.ID)
			}
			if isSys && marked[a.ID] && !n.DrainStrategy.Deadlined(in.Now) && others > 0 {
				return fmt.Errorf("system alloc %s marked while %d others run on %s", a.ID, others, n.ID)
			}
		}
		if done[n.ID] != (left == 0) {
			return fmt.Errorf("node %s: done %t with %d allocs left", n.ID, done[n.ID], left)
		}
	}
	// The same world in another order decides the same.
	rev := in
	rev.Allocs = slices.Clone(in.Allocs)
	slices.Reverse(rev.Allocs)
	if a, b := show(d), show(Decide(rev)); a != b {
		return fmt.Errorf("order changed the decision:\n%s\n%s", a, b)
	}
	return nil
}

func dumpWorld(in Input) string {
	s := fmt.Sprintf("now +%s\n", in.Now.Sub(t0))
	for _, n := range in.Nodes {
		s += fmt.Sprintf("node %s zone=%s drain=%+v\n", n.ID, n.Meta["zone"], n.DrainStrategy)
	}
	for _, a := range in.Allocs {
		s += fmt.Sprintf("alloc %s desired=%s client=%s migrate=%t healthy=%t\n", a.ID, a.DesiredStatus, a.ClientStatus,
			a.DesiredTransition.ShouldMigrate(), a.IsHealthy())
	}
	return s
}
