package server

import (
	"testing"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// reportHealthy reports the allocs running and healthy in one client
// update and returns the index of its entry.
func reportHealthy(t *testing.T, h *harness, allocs []*structs.Allocation) uint64 {
	t.Helper()
	yes := true
	var updates []*structs.Allocation
	for _, a := range allocs {
		updates = append(updates, &structs.Allocation{
			ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &yes, Timestamp: h.clock.Now()},
		})
	}
	index, err := h.leader.UpdateAllocsFromClient(h.ctx, updates)
	must(t, err)
	return index
}

// assertNextStageInOnePass checks that the health report at index, which
// completed a stage, asked for no scheduling pass of its own, and that
// the pass that placed next (the evaluation of placed) is the first one
// of the job created since: the watcher's, written with the stage's
// start.
func assertNextStageInOnePass(t *testing.T, h *harness, index uint64, placed *structs.Allocation) {
	t.Helper()
	snap := h.store().Snapshot()
	evals, err := snap.EvalsByJob(structs.DefaultNamespace, "web")
	must(t, err)
	var next *structs.Evaluation
	for _, e := range evals {
		if e.ID == placed.EvalID {
			next = e
		}
	}
	if next == nil {
		t.Fatalf("the evaluation %s that placed %s is not stored\n%s", placed.EvalID, placed.ID, h.dump())
	}
	if next.TriggeredBy != structs.EvalTriggerDeploymentWatcher || next.CreateIndex <= index {
		t.Fatalf("the next stage was placed by evaluation %s (%s, created at %d), want the watcher's, after the health at %d",
			next.ID, next.TriggeredBy, next.CreateIndex, index)
	}
	for _, e := range evals {
		if e.CreateIndex >= index && e.CreateIndex < next.CreateIndex {
			t.Fatalf("evaluation %s (%s, %s) created at %d, between the health that completed the stage (%d) and the pass that started the next (%d)",
				e.ID, e.TriggeredBy, e.Status, e.CreateIndex, index, next.CreateIndex)
		}
	}
}

// The health report that completes a zone leaves the next zone's start to
// the watcher, whose decision starts it and asks for its pass in one
// write: no pass that places nothing comes between them.
func TestZoneChangeInOnePass(t *testing.T) {
	h := newHarness(t)
	h.start()
	for _, n := range []struct{ name, zone string }{{"a1", "a"}, {"a2", "a"}, {"b1", "b"}, {"b2", "b"}} {
		node := testNode(n.name, 250, 4096)
		node.Meta = map[string]string{"zone": n.zone}
		_, _, err := h.leader.RegisterNode(h.ctx, node)
		must(t, err)
	}
	v0 := testJob("web", 4, 100)
	_, err := h.leader.RegisterJob(h.ctx, v0)
	must(t, err)
	h.waitFor("four v0 allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 4 })
	h.markHealthy(allocsOf(h.store().Snapshot(), "web"))
	h.waitFor("v0 stable", func(s *state.Snapshot) bool {
		j, _ := s.JobByIDAndVersion(structs.DefaultNamespace, "web", 0)
		return j != nil && j.Stable
	})

	v1 := v0.Copy()
	v1.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "2h"}
	v1.TaskGroups[0].Update.MaxParallel = 4 // a zone is one batch
	v1.TaskGroups[0].Update.Zones = &structs.ZoneStrategy{Attribute: "${meta.zone}", Mode: structs.ZoneModeByZone}
	_, err = h.leader.RegisterJob(h.ctx, v1)
	must(t, err)

	var first *structs.ZoneState
	h.waitFor("the first zone placed", func(s *state.Snapshot) bool {
		d := deploymentOf(s, "web", 1)
		if d == nil || len(d.TaskGroups["web"].Zones) != 2 {
			return false
		}
		first = d.TaskGroups["web"].Zones[0]
		return first.Size > 0 && len(byVersion(allocsOf(s, "web"), 1)) == first.Size
	})
	index := reportHealthy(t, h, byVersion(allocsOf(h.store().Snapshot(), "web"), 1))

	var placed *structs.Allocation
	h.waitFor("a replacement in the second zone", func(s *state.Snapshot) bool {
		for _, a := range byVersion(allocsOf(s, "web"), 1) {
			if a.Zone != first.Name {
				placed = a
				return true
			}
		}
		return false
	})
	d := deploymentOf(h.store().Snapshot(), "web", 1)
	if z := d.TaskGroups["web"].Zones[1]; z.State != structs.ZoneStateRolling {
		t.Fatalf("zone %s %q while its replacements are placed", z.Name, z.State)
	}
	assertNextStageInOnePass(t, h, index, placed)
}

// Likewise for groups one at a time (group_order): the health that
// completes the first group leaves the second's start, and its pass, to
// the watcher's one write.
func TestGroupChangeInOnePass(t *testing.T) {
	h := newHarness(t)
	h.start()
	for _, n := range []string{"a", "b"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 4000, 4096))
		must(t, err)
	}
	v0 := testJob("web", 2, 100)
	db := v0.TaskGroups[0].Copy()
	db.Name = "db"
	v0.TaskGroups = append(v0.TaskGroups, db)
	for _, tg := range v0.TaskGroups {
		tg.Update.MaxParallel = 2 // a group is one batch
	}
	v0.Update.GroupOrder = []string{"db", "web"}
	_, err := h.leader.RegisterJob(h.ctx, v0)
	must(t, err)
	h.waitFor("four v0 allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 4 })
	h.markHealthy(allocsOf(h.store().Snapshot(), "web"))
	h.waitFor("v0 stable", func(s *state.Snapshot) bool {
		j, _ := s.JobByIDAndVersion(structs.DefaultNamespace, "web", 0)
		return j != nil && j.Stable
	})

	v1 := v0.Copy()
	for _, tg := range v1.TaskGroups {
		tg.Tasks[0].Config = map[string]any{"run_for": "2h"}
	}
	_, err = h.leader.RegisterJob(h.ctx, v1)
	must(t, err)
	inGroup := func(s *state.Snapshot, group string) []*structs.Allocation {
		var out []*structs.Allocation
		for _, a := range byVersion(allocsOf(s, "web"), 1) {
			if a.TaskGroup == group {
				out = append(out, a)
			}
		}
		return out
	}
	h.waitFor("db's replacements", func(s *state.Snapshot) bool { return len(inGroup(s, "db")) == 2 })
	if n := len(inGroup(h.store().Snapshot(), "web")); n != 0 {
		t.Fatalf("%d replacements of web while db rolls", n)
	}
	index := reportHealthy(t, h, inGroup(h.store().Snapshot(), "db"))

	var placed *structs.Allocation
	h.waitFor("a replacement of web", func(s *state.Snapshot) bool {
		if got := inGroup(s, "web"); len(got) > 0 {
			placed = got[0]
			return true
		}
		return false
	})
	d := deploymentOf(h.store().Snapshot(), "web", 1)
	if s := d.TaskGroups["web"]; s.State != structs.GroupStateRolling {
		t.Fatalf("group web %q while its replacements are placed", s.State)
	}
	assertNextStageInOnePass(t, h, index, placed)
}
