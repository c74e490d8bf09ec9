package scheduler

import (
	"fmt"
	"testing"

	"github.com/droverhq/drover/structs"
)

// placeJob builds a one-group service job and its first plan.
func placeJob(count int, mod func(j *structs.Job)) (*structs.Job, *Plan) {
	j := baseJob()
	j.TaskGroups[0].Count = count
	j.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: 100, MemoryMB: 256}
	j.TaskGroups[0].EphemeralDisk.SizeMB = 100
	if mod != nil {
		mod(j)
	}
	n := 0
	p := Reconcile(Input{Job: j, Now: baseTime, IDs: func() string { n++; return fmt.Sprintf("a%d", n) }, EvalID: "e"})
	return j, p
}

func nodes(n int, mod func(i int, n *structs.Node)) []*structs.Node {
	out := make([]*structs.Node, n)
	for i := range out {
		out[i] = testNode(fmt.Sprintf("n%d", i), "ready")
		if mod != nil {
			mod(i, out[i])
		}
	}
	return out
}

func perNode(allocs []*structs.Allocation) map[string]int {
	m := map[string]int{}
	for _, a := range allocs {
		m[a.NodeID]++
	}
	return m
}

func TestPlaceSkipsUnusableNodes(t *testing.T) {
	ns := nodes(6, func(i int, n *structs.Node) {
		switch i {
		case 0:
			n.Status = structs.NodeStatusDown
		case 1:
			n.Drain = true
		case 2:
			n.SchedulingEligibility = structs.NodeSchedulingIneligible
		case 3:
			n.Datacenter = "dc9"
		}
	})
	j, plan := placeJob(8, nil)
	res := NewPlacer(ns, nil, 1).Place(j, plan, baseTime)
	if len(res.Allocs) != 8 {
		t.Fatalf("placed %d, want 8 (failed: %+v)", len(res.Allocs), res.Failed)
	}
	for _, a := range res.Allocs {
		if a.NodeID != "n4" && a.NodeID != "n5" {
			t.Fatalf("alloc %s on unusable node %s", a.Name, a.NodeID)
		}
		if a.DesiredStatus != structs.AllocDesiredStatusRun || a.ClientStatus != structs.AllocClientStatusPending {
			t.Fatalf("alloc %s has status %s/%s", a.Name, a.DesiredStatus, a.ClientStatus)
		}
	}
}

func TestPlaceExplainsExhaustion(t *testing.T) {
	ns := nodes(2, func(i int, n *structs.Node) { n.NodeResources.Memory.MemoryMB = 1000 })
	j, plan := placeJob(5, func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Resources.MemoryMB = 600 })
	j.TaskGroups[0].Tasks[0].Resources.MemoryMB = 600
	res := NewPlacer(ns, nil, 1).Place(j, plan, baseTime)
	if len(res.Allocs) != 2 || len(res.Unplaced) != 3 {
		t.Fatalf("placed %d, unplaced %d; want 2, 3", len(res.Allocs), len(res.Unplaced))
	}
	m := res.Failed["web"]
	if m == nil {
		t.Fatal("no failure metric for web")
	}
	t.Logf("metric: %+v", m)
	if m.NodesExhausted != 2 || m.DimensionExhausted["memory"] != 2 || m.CoalescedFailures != 2 || m.NodesEvaluated != 2 {
		t.Fatalf("metric %+v", m)
	}
}

func TestPlaceExplainsConstraints(t *testing.T) {
	ns := nodes(4, func(i int, n *structs.Node) {
		if i == 3 {
			delete(n.Drivers, structs.DriverMock)
		}
	})
	j, plan := placeJob(1, func(j *structs.Job) {
		j.TaskGroups[0].Tasks[0].Driver = structs.DriverMock
		j.TaskGroups[0].Constraints = []*structs.Constraint{{LTarget: "${node.unique.name}", Operand: "!=", RTarget: "n0"}}
		j.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "windows"}}
	})
	res := NewPlacer(ns, nil, 1).Place(j, plan, baseTime)
	m := res.Failed["web"]
	if m == nil || len(res.Allocs) != 0 {
		t.Fatalf("want a failure, got %d allocs", len(res.Allocs))
	}
	if m.NodesFiltered != 4 || m.ConstraintFiltered["${attr.kernel.name} = windows"] != 4 || m.NodesInPool != 4 {
		t.Fatalf("metric %+v", m)
	}

	// Without the impossible constraint: n0 is excluded by name, n3 by driver.
	j.Constraints = nil
	res = NewPlacer(ns, nil, 1).Place(j, plan, baseTime)
	if len(res.Allocs) != 1 || res.Allocs[0].NodeID == "n0" || res.Allocs[0].NodeID == "n3" {
		t.Fatalf("placed %v", res.Allocs)
	}
	j.TaskGroups[0].Count = 5
	_, plan = placeJob(5, func(jj *structs.Job) { *jj = *j })
	res = NewPlacer(ns, nil, 1).Place(j, plan, baseTime)
	for _, a := range res.Allocs {
		if a.NodeID == "n0" || a.NodeID == "n3" {
			t.Fatalf("alloc on filtered node %s", a.NodeID)
		}
	}
}

func TestPlacePorts(t *testing.T) {
	ns := nodes(2, func(i int, n *structs.Node) {
		n.NodeResources.MinDynamicPort, n.NodeResources.MaxDynamicPort = 30000, 30003
		n.Attributes["unique.network.ip-address"] = fmt.Sprintf("10.0.0.%d", i+1)
	})
	used := &structs.Allocation{
		ID: "old", NodeID: "n0", JobID: "other", TaskGroup: "x", DesiredStatus: "run", ClientStatus: "running",
		AllocatedResources: &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{
			Ports: []structs.PortMapping{{Label: "http", Value: 8080}},
		}},
	}
	j, plan := placeJob(2, func(j *structs.Job) {
		j.TaskGroups[0].Networks = []*structs.NetworkResource{{
			ReservedPorts: []structs.Port{{Label: "http", Value: 8080}},
			DynamicPorts:  []structs.Port{{Label: "a"}, {Label: "b", To: -1}},
		}}
	})
	res := NewPlacer(ns, []*structs.Allocation{used}, 7).Place(j, plan, baseTime)
	if len(res.Allocs) != 1 || res.Allocs[0].NodeID != "n1" {
		t.Fatalf("want one alloc on n1, got %d (%+v)", len(res.Allocs), res.Failed["web"])
	}
	if m := res.Failed["web"]; m == nil || m.DimensionExhausted[dimPortCollision] == 0 {
		t.Fatalf("want a port collision, got %+v", res.Failed["web"])
	}
	ports := res.Allocs[0].AllocatedResources.Shared.Ports
	if len(ports) != 3 {
		t.Fatalf("ports %+v", ports)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p.Value] {
			t.Fatalf("port %d twice", p.Value)
		}
		seen[p.Value] = true
		if p.HostIP != "10.0.0.2" {
			t.Fatalf("host ip %q", p.HostIP)
		}
		if p.Label != "http" && (p.Value < 30000 || p.Value > 30003) {
			t.Fatalf("dynamic port %d outside range", p.Value)
		}
		if p.Label == "b" && p.To != p.Value {
			t.Fatalf("to=-1 should map to the host port: %+v", p)
		}
	}

	// Dynamic range of 4 ports, 2 per alloc: a node takes two such allocs.
	j2, plan2 := placeJob(5, func(j *structs.Job) {
		j.TaskGroups[0].Networks = []*structs.NetworkResource{{DynamicPorts: []structs.Port{{Label: "a"}, {Label: "b"}}}}
	})
	res = NewPlacer(ns, nil, 7).Place(j2, plan2, baseTime)
	if len(res.Allocs) != 4 || res.Failed["web"].DimensionExhausted[dimDynamicPorts] == 0 {
		t.Fatalf("placed %d, failed %+v", len(res.Allocs), res.Failed["web"])
	}
}

func TestPlaceDistinctHosts(t *testing.T) {
	ns := nodes(3, nil)
	j, plan := placeJob(4, func(j *structs.Job) {
		j.TaskGroups[0].Constraints = []*structs.Constraint{{Operand: structs.ConstraintDistinctHosts, RTarget: "true"}}
	})
	res := NewPlacer(ns, nil, 3).Place(j, plan, baseTime)
	if len(res.Allocs) != 3 {
		t.Fatalf("placed %d, want 3", len(res.Allocs))
	}
	for n, c := range perNode(res.Allocs) {
		if c != 1 {
			t.Fatalf("node %s has %d allocs", n, c)
		}
	}
	if res.Failed["web"].ConstraintFiltered[structs.ConstraintDistinctHosts] != 3 {
		t.Fatalf("metric %+v", res.Failed["web"])
	}
}

func TestPlaceSpread(t *testing.T) {
	zones := []string{"a", "b", "c"}
	ns := nodes(12, func(i int, n *structs.Node) { n.Meta = map[string]string{"zone": zones[i%3]} })
	byZone := func(allocs []*structs.Allocation) map[string]int {
		m := map[string]int{}
		for _, a := range allocs {
			for _, n := range ns {
				if n.ID == a.NodeID {
					m[n.Meta["zone"]]++
				}
			}
		}
		return m
	}
	j, plan := placeJob(9, func(j *structs.Job) {
		j.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${meta.zone}", Weight: 100}}
	})
	res := NewPlacer(ns, nil, 5).Place(j, plan, baseTime)
	if got := byZone(res.Allocs); got["a"] != 3 || got["b"] != 3 || got["c"] != 3 {
		t.Fatalf("even spread: %v", got)
	}
	j, plan = placeJob(10, func(j *structs.Job) {
		j.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${meta.zone}", Weight: 100,
			SpreadTarget: []*structs.SpreadTarget{{Value: "a", Percent: 70}, {Value: "b", Percent: 30}}}}
	})
	res = NewPlacer(ns, nil, 5).Place(j, plan, baseTime)
	if got := byZone(res.Allocs); got["a"] != 7 || got["b"] != 3 || got["c"] != 0 {
		t.Fatalf("target spread: %v", got)
	}
}

func TestPlaceAntiAffinityAndBinPack(t *testing.T) {
	// Without other load, anti-affinity spreads a job's allocs over nodes.
	ns := nodes(4, nil)
	j, plan := placeJob(4, nil)
	p := NewPlacer(ns, nil, 9)
	p.Limit = 4
	res := p.Place(j, plan, baseTime)
	if got := perNode(res.Allocs); len(got) != 4 {
		t.Fatalf("anti-affinity: %v", got)
	}
	// Another job's load makes a node more attractive to bin packing.
	other := &structs.Allocation{
		ID: "busy", NodeID: "n2", JobID: "other", TaskGroup: "x", DesiredStatus: "run", ClientStatus: "running",
		AllocatedResources: &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
			"t": {Cpu: structs.AllocatedCpuResources{CpuShares: 3000}, Memory: structs.AllocatedMemoryResources{MemoryMB: 6000}},
		}},
	}
	j, plan = placeJob(1, nil)
	p = NewPlacer(ns, []*structs.Allocation{other}, 9)
	p.Limit = 4
	res = p.Place(j, plan, baseTime)
	if len(res.Allocs) != 1 || res.Allocs[0].NodeID != "n2" {
		t.Fatalf("bin packing chose %v", res.Allocs[0].NodeID)
	}
}

func TestPlaceFreesReplacedAndStopped(t *testing.T) {
	// One node with room for exactly one alloc: a destructive update must
	// reuse the space of the alloc it replaces.
	ns := nodes(1, func(i int, n *structs.Node) { n.NodeResources.Memory.MemoryMB = 300 })
	oldJob := baseJob()
	oldJob.TaskGroups[0].Count = 1
	oldJob.TaskGroups[0].Tasks[0].Resources.MemoryMB = 256
	old := &structs.Allocation{
		ID: "old", Name: "example.web[0]", NodeID: "n0", JobID: "example", Job: oldJob, TaskGroup: "web",
		DesiredStatus: "run", ClientStatus: "running",
		AllocatedResources: &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
			"main": {Memory: structs.AllocatedMemoryResources{MemoryMB: 256}},
		}},
	}
	nj := oldJob.Copy()
	nj.Version = 1
	nj.TaskGroups[0].Tasks[0].Env = map[string]string{"A": "2"}
	n := 0
	plan := Reconcile(Input{Job: nj, Allocs: []*structs.Allocation{old}, Nodes: ns, Now: baseTime,
		IDs: func() string { n++; return fmt.Sprint("id", n) }})
	if len(plan.Place) != 1 || plan.Place[0].Replaces != "old" {
		t.Fatalf("plan: %s", plan)
	}
	res := NewPlacer(ns, []*structs.Allocation{old}, 1).Place(nj, plan, baseTime)
	if len(res.Allocs) != 1 || res.Allocs[0].PreviousAllocation != "old" || res.Allocs[0].DeploymentID == "" {
		t.Fatalf("placed %v failed %+v", res.Allocs, res.Failed)
	}
}

func TestPlacePinned(t *testing.T) {
	ns := nodes(3, nil)
	j := baseJob()
	j.Type = structs.JobTypeSystem
	n := 0
	plan := Reconcile(Input{Job: j, Nodes: ns, Now: baseTime, IDs: func() string { n++; return fmt.Sprint("id", n) }})
	ns[1].Status = structs.NodeStatusDown // went down between reconcile and placement
	res := NewPlacer(ns, nil, 1).Place(j, plan, baseTime)
	if len(res.Allocs) != 2 || len(res.Unplaced) != 1 || res.Unplaced[0].NodeID != "n1" {
		t.Fatalf("allocs %d unplaced %+v", len(res.Allocs), res.Unplaced)
	}
	for _, a := range res.Allocs {
		if a.NodeID == "n1" {
			t.Fatal("placed on a down node")
		}
	}
}
