package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// TestZoneRolloutProperty drives random zone rollouts (zones of random
// sizes and an unzoned node, zone_by_zone or concurrent, explicit orders,
// disruption budgets, success thresholds, surge) with random failures
// through the reconciler, moving zones on as the deployment watcher does,
// and asserts at every step: each replacement is pinned to the zone of the
// alloc it replaces; only rolling zones get replacements; one pass of a
// zone_by_zone rollout with the whole zone as its threshold replaces in
// one zone only; in flight plus failed in a zone never exceed its
// disruption budget; and the C.1 invariants hold (zone_by_zone). Every
// rollout ends with all allocs new and healthy.
func TestZoneRolloutProperty(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 16))
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			zoneRollout(t, r)
		})
	}
}

func zoneRollout(t *testing.T, r *rand.Rand) {
	names := []string{"a", "b", "c", "d"}[:1+r.IntN(4)]
	var nodes []*structs.Node
	zoneNodes := map[string][]*structs.Node{}
	for _, z := range names {
		for i := range 1 + r.IntN(2) {
			n := testNode(fmt.Sprintf("n%s%d", z, i), "ready")
			n.Meta = map[string]string{"zone": z}
			nodes = append(nodes, n)
			zoneNodes[z] = append(zoneNodes[z], n)
		}
	}
	if r.IntN(3) == 0 {
		n := testNode("nx", "ready")
		nodes = append(nodes, n)
		zoneNodes[""] = append(zoneNodes[""], n)
	}
	count := 2 + r.IntN(10)
	u := structs.DefaultUpdateStrategy()
	u.MaxParallel = 1 + r.IntN(4)
	z := &structs.ZoneStrategy{Attribute: "${meta.zone}", Mode: structs.ZoneModeByZone}
	if r.IntN(4) == 0 {
		z.Mode = structs.ZoneModeConcurrent
	}
	if r.IntN(3) == 0 {
		z.Order = []string{names[r.IntN(len(names))], "zz"}
	}
	if r.IntN(2) == 0 {
		z.DisruptionBudget = structs.Count(1 + r.IntN(3))
	}
	if z.ByZone() && r.IntN(3) == 0 {
		z.SuccessThreshold = structs.Percent(50 + r.IntN(51))
	}
	if r.IntN(3) == 0 {
		u.MaxSurge = structs.Count(r.IntN(3))
	}
	u.Zones = z
	old := baseJob()
	old.TaskGroups[0].Count = count
	old.TaskGroups[0].Update = u.Copy()
	job := old.Copy()
	job.Version = 1
	job.TaskGroups[0].Tasks[0].Env = map[string]string{"A": "2"}
	s := &rolloutSim{t: t, r: r, job: job, now: baseTime, failPct: r.IntN(25), nodes: nodes}
	nodeByID := map[string]*structs.Node{}
	for _, n := range nodes {
		nodeByID[n.ID] = n
	}
	for i := range count {
		n := nodes[r.IntN(len(nodes))]
		ok := true
		s.allocs = append(s.allocs, &structs.Allocation{
			ID: fmt.Sprintf("old%d", i), Name: structs.AllocName(job.ID, "web", i), JobID: job.ID, Job: old,
			TaskGroup: "web", NodeID: n.ID, NodeName: n.Name, DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusRunning, DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &ok},
		})
	}
	zoneOf := func(a *structs.Allocation) string {
		if a.Zone != "" {
			return a.Zone
		}
		return structs.ZoneOf(nodeByID[a.NodeID], z.Attribute)
	}
	failed := map[string]int{}
	byID := func() map[string]*structs.Allocation {
		m := map[string]*structs.Allocation{}
		for _, a := range s.allocs {
			m[a.ID] = a
		}
		return m
	}
	for step := 0; step < 600; step++ {
		if z.ByZone() {
			s.check(step, "before the pass")
		}
		p := Reconcile(Input{Job: s.job, Allocs: s.allocs, Deployment: s.dep, Nodes: s.nodes, Now: s.now, IDs: s.id, EvalID: "eval"})
		all := byID()
		if testing.Verbose() {
			t.Logf("step %d plan:\n%s", step, p)
		}
		var states map[string]string
		if s.dep != nil || p.Deployment != nil {
			d := s.dep
			if p.Deployment != nil {
				d = p.Deployment
			}
			if st := d.TaskGroups["web"]; st != nil {
				states = map[string]string{}
				for _, zs := range st.Zones {
					states[zs.Name] = zs.State
				}
			}
		}
		passZones := map[string]bool{}
		started := map[string]int{}
		for _, pl := range p.Place {
			prev := all[pl.PreviousAlloc]
			if prev == nil {
				continue
			}
			if !pl.InZone || pl.Zone != zoneOf(prev) {
				t.Fatalf("step %d: replacement %s of %s in zone %q not pinned to %q (InZone %t)\n%s", step, pl.Name, prev.ID, pl.Zone, zoneOf(prev), pl.InZone, s.dump())
			}
			if prev.Job.Version != job.Version && !pl.Reschedule {
				passZones[pl.Zone] = true
				started[pl.Zone]++
				if st, ok := states[pl.Zone]; ok && st != structs.ZoneStateRolling {
					t.Fatalf("step %d: replacement in zone %q, which is %s\n%s", step, pl.Zone, st, s.dump())
				}
			}
		}
		if z.ByZone() && z.SuccessThreshold == nil && len(passZones) > 1 {
			t.Fatalf("step %d: one pass replaced in zones %v\n%s", step, passZones, s.dump())
		}
		// Place on a node of the pinned zone.
		for i := range p.Place {
			pl := &p.Place[i]
			if pl.InZone {
				if ns := zoneNodes[pl.Zone]; len(ns) > 0 {
					pl.NodeID = ns[0].ID
				}
			}
		}
		s.apply(p)
		for _, pl := range p.Place {
			for _, a := range s.allocs {
				if a.ID == pl.AllocID {
					if pl.NodeID != "" {
						a.NodeID, a.NodeName = pl.NodeID, pl.NodeID
					}
					a.Zone = structs.ZoneOf(nodeByID[a.NodeID], z.Attribute)
				}
			}
		}
		if z.ByZone() {
			s.check(step, "after the plan")
		}
		// A zone's budget: a replacement starts only while the zone's
		// allocs in flight (not yet healthy, retries included) and its
		// failures so far stay within it.
		if z.DisruptionBudget != nil && s.dep != nil && len(started) > 0 {
			for _, zs := range s.dep.TaskGroups["web"].Zones {
				if started[zs.Name] == 0 {
					continue
				}
				inflight := 0
				for _, a := range s.allocs {
					if a.DesiredStatus == structs.AllocDesiredStatusRun && !a.ClientTerminalStatus() && a.DeploymentID == s.dep.ID &&
						!a.IsHealthy() && zoneOf(a) == zs.Name {
						inflight++
					}
				}
				if lim, _ := z.BudgetFor(zs.Size); inflight+zs.Failed > lim {
					t.Fatalf("step %d: zone %q: %d in flight after starting %d, and %d failed, over its budget %d\n%s",
						step, zs.Name, inflight, started[zs.Name], zs.Failed, lim, s.dump())
				}
			}
		}

		if s.done() {
			return
		}
		s.now = s.now.Add(time.Minute)
		before := map[string]bool{}
		for _, a := range s.allocs {
			if a.IsUnhealthy() {
				before[a.ID] = true
			}
		}
		s.settle()
		if s.dep == nil {
			continue
		}
		st := s.dep.TaskGroups["web"]
		for _, a := range s.allocs {
			if a.IsUnhealthy() && !before[a.ID] && a.DeploymentID == s.dep.ID {
				failed[zoneOf(a)]++
			}
		}
		// The watcher: failures per zone; a zone at its budget is resumed
		// by the operator (its failures accepted); a zone done when all its
		// allocs are new and healthy, the next one rolling once the
		// current reaches its threshold.
		healthy := map[string]int{}
		for _, a := range s.allocs {
			if a.DesiredStatus == structs.AllocDesiredStatusRun && !a.ClientTerminalStatus() && a.DeploymentID == s.dep.ID && a.IsHealthy() {
				healthy[zoneOf(a)]++
			}
		}
		for i, zs := range st.Zones {
			zs.Failed = failed[zs.Name]
			if lim, ok := z.BudgetFor(zs.Size); ok && zs.Failed >= lim {
				failed[zs.Name], zs.Failed = 0, 0
			}
			if healthy[zs.Name] >= zs.Size {
				zs.State = structs.ZoneStateDone
			}
			if zs.State != structs.ZoneStateWaiting && healthy[zs.Name] >= z.ThresholdFor(zs.Size) && i+1 < len(st.Zones) &&
				st.Zones[i+1].State == structs.ZoneStateWaiting {
				st.Zones[i+1].State = structs.ZoneStateRolling
			}
		}
	}
	t.Fatalf("zone rollout did not finish in 600 steps\n%s", s.dump())
}
