package scheduler

import (
	"fmt"
	"testing"

	"github.com/droverhq/drover/structs"
)

// benchCluster builds n ready nodes in 3 datacenters-worth of racks, with
// room for about 3 allocs of the benchmark job per node at 1,000 nodes.
func benchCluster(n int) []*structs.Node {
	out := make([]*structs.Node, n)
	for i := range out {
		node := testNode(fmt.Sprintf("node-%05d", i), "ready")
		node.Meta = map[string]string{"rack": fmt.Sprintf("r%d", i%20)}
		node.NodeClass = "m5"
		out[i] = node
	}
	return out
}

func benchJob(count int) *structs.Job {
	j := baseJob()
	tg := j.TaskGroups[0]
	tg.Count = count
	tg.Tasks[0].Resources = &structs.Resources{CPU: 250, MemoryMB: 512}
	tg.EphemeralDisk.SizeMB = 100
	tg.Networks = []*structs.NetworkResource{{DynamicPorts: []structs.Port{{Label: "http"}}}}
	j.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}
	return j
}

// benchPlace reports placements per second for one pass placing a job of
// count allocs on a cluster of nodes: reconcile plus placement.
func benchPlace(b *testing.B, nodes, count int) {
	ns := benchCluster(nodes)
	job := benchJob(count)
	b.ReportAllocs()
	b.ResetTimer()
	placed, cpu0 := 0, cpuSeconds()
	for i := 0; i < b.N; i++ {
		n := 0
		plan := Reconcile(Input{Job: job, Nodes: ns, Now: baseTime, IDs: func() string { n++; return fmt.Sprint("a", n) }})
		res := NewPlacer(ns, nil, uint64(i)).Place(job, plan, baseTime)
		if len(res.Allocs) != count {
			b.Fatalf("placed %d of %d: %+v", len(res.Allocs), count, res.Failed)
		}
		placed += len(res.Allocs)
	}
	reportRates(b, placed, cpu0)
}

// reportRates reports placements per wall-clock second and per CPU-second
// of this process (the latter is steadier on a busy machine).
func reportRates(b *testing.B, placed int, cpu0 float64) {
	b.ReportMetric(float64(placed)/b.Elapsed().Seconds(), "placements/s")
	if cpu := cpuSeconds() - cpu0; cpu > 0 {
		b.ReportMetric(float64(placed)/cpu, "placements/cpu-s")
	}
}

func BenchmarkPlace1000Nodes(b *testing.B) { benchPlace(b, 1000, 2500) }
func BenchmarkPlace5000Nodes(b *testing.B) { benchPlace(b, 5000, 5000) }

// BenchmarkPlace5000NodesSpread adds an even spread over 20 racks.
func BenchmarkPlace5000NodesSpread(b *testing.B) {
	ns := benchCluster(5000)
	job := benchJob(5000)
	job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 100}}
	b.ResetTimer()
	placed, cpu0 := 0, cpuSeconds()
	for i := 0; i < b.N; i++ {
		n := 0
		plan := Reconcile(Input{Job: job, Nodes: ns, Now: baseTime, IDs: func() string { n++; return fmt.Sprint("a", n) }})
		res := NewPlacer(ns, nil, uint64(i)).Place(job, plan, baseTime)
		placed += len(res.Allocs)
	}
	reportRates(b, placed, cpu0)
}

// BenchmarkReconcileRolling5000 times one reconcile pass over a 5,000-alloc
// group in the middle of a rolling update.
func BenchmarkReconcileRolling5000(b *testing.B) {
	ns := benchCluster(1000)
	old := benchJob(5000)
	nj := old.Copy()
	nj.Version = 1
	nj.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
	nj.TaskGroups[0].Update.MaxParallel = 50
	var allocs []*structs.Allocation
	yes := true
	for i := 0; i < 5000; i++ {
		a := &structs.Allocation{
			ID: fmt.Sprint("a", i), Name: structs.AllocName("example", "web", i), JobID: "example", Job: old,
			TaskGroup: "web", NodeID: ns[i%len(ns)].ID, DesiredStatus: "run", ClientStatus: "running",
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &yes},
		}
		allocs = append(allocs, a)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		p := Reconcile(Input{Job: nj, Allocs: allocs, Nodes: ns, Now: baseTime, IDs: func() string { n++; return fmt.Sprint("n", n) }})
		if len(p.Place) != 50 {
			b.Fatalf("placed %d", len(p.Place))
		}
	}
}

// BenchmarkPlaceZoneStage times the placements of a zone's change of stage
// in a zone rollout: 500 replacements pinned to one zone of 20 on 5,000
// nodes, through a table of the nodes as the leader places.
func BenchmarkPlaceZoneStage(b *testing.B) {
	ns := benchCluster(5000)
	for i, n := range ns {
		n.Meta["zone"] = fmt.Sprintf("zone-%02d", i%20)
	}
	job := benchJob(500)
	job.TaskGroups[0].Networks = nil
	job.TaskGroups[0].Update.Zones = &structs.ZoneStrategy{Attribute: "${meta.zone}", Mode: structs.ZoneModeByZone}
	plan := &Plan{}
	for i := range 500 {
		plan.Place = append(plan.Place, Placement{TaskGroup: "web", Name: structs.AllocName(job.ID, "web", i), Index: i, InZone: true, Zone: "zone-07"})
	}
	table := NewNodeTable(ns)
	b.ReportAllocs()
	b.ResetTimer()
	placed, cpu0 := 0, cpuSeconds()
	for i := 0; i < b.N; i++ {
		res := newPlacerFromTable(table, uint64(i)).Place(job, plan, baseTime)
		if len(res.Allocs) != 500 {
			b.Fatalf("placed %d of 500: %+v", len(res.Allocs), res.Failed)
		}
		placed += len(res.Allocs)
	}
	reportRates(b, placed, cpu0)
}
