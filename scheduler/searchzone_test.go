package scheduler

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/droverhq/drover/structs"
)

// TestSearchZoneMatchesSearchPool compares the walk over a zone's nodes
// with the walk over the whole pool that filters the other zones' nodes,
// on random clusters (zones of random sizes, nodes without the attribute,
// nodes too small or of another datacenter, random cursors and limits, an
// eager placer and one with a table): the same node, the same cursor to
// continue from and the same metric.
func TestSearchZoneMatchesSearchPool(t *testing.T) {
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 48))
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			zones := []string{"a", "b", "c", "d", "e"}[:1+r.IntN(5)]
			var nodes []*structs.Node
			for i := range 1 + r.IntN(60) {
				n := testNode(fmt.Sprintf("n%d", i), "ready")
				switch k := r.IntN(10); {
				case k == 0: // no zone attribute
				case k == 1:
					n.Meta = map[string]string{"zone": zones[r.IntN(len(zones))]}
					n.NodeResources.Memory.MemoryMB = 100 // too small
				case k == 2:
					n.Meta = map[string]string{"zone": zones[r.IntN(len(zones))]}
					n.Datacenter = "dc2" // not in the job's datacenters
				default:
					n.Meta = map[string]string{"zone": zones[r.IntN(len(zones))]}
				}
				nodes = append(nodes, n)
			}
			job := baseJob()
			job.TaskGroups[0].Update.Zones = &structs.ZoneStrategy{Attribute: "${meta.zone}", Mode: structs.ZoneModeByZone}
			tg := job.TaskGroups[0]
			seedP := r.Uint64()
			table := NewNodeTable(nodes)
			for _, mk := range []func() *Placer{
				func() *Placer { return NewPlacer(nodes, nil, seedP) },
				func() *Placer { return newPlacerFromTable(table, seedP) },
			} {
				pa, pb := mk(), mk()
				pool, _ := pa.pool(job)
				poolB, _ := pb.pool(job)
				if !reflect.DeepEqual(pool, poolB) {
					t.Fatal("two placers of one seed shuffled their pools apart")
				}
				ga, gb := pa.newGroupCtx(job, tg, pool), pb.newGroupCtx(job, tg, pool)
				ca, cb := 0, 0
				for step := range 20 {
					zone := append(zones, "")[r.IntN(len(zones)+1)]
					pl := Placement{TaskGroup: tg.Name, InZone: true, Zone: zone}
					limit := 1 + r.IntN(4)
					if r.IntN(4) == 0 && len(pool) > 0 {
						ca = r.IntN(len(pool))
						cb = ca
					}
					ma, mb := &structs.AllocationMetric{}, &structs.AllocationMetric{}
					var besta, bestb int
					besta, ca = pa.searchPool(ga, pl, pool, ca, limit, ma)
					bestb, cb = pb.searchZone(gb, pl, pool, cb, limit, mb)
					if besta != bestb || ca != cb || !reflect.DeepEqual(ma, mb) {
						t.Fatalf("step %d, zone %q, limit %d: pool walk gave node %d, cursor %d, %+v; zone walk node %d, cursor %d, %+v",
							step, zone, limit, besta, ca, ma, bestb, cb, mb)
					}
					if besta >= 0 && r.IntN(2) == 0 {
						// Use the node up, as a placement would.
						pa.ns(besta).used.MemoryMB += 3000
						pb.ns(bestb).used.MemoryMB += 3000
					}
				}
			}
		})
	}
}
