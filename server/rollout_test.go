package server

import (
	"testing"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// markHealthy reports the allocs running and healthy, as a client would.
func (h *harness) markHealthy(allocs []*structs.Allocation) {
	h.t.Helper()
	yes := true
	var updates []*structs.Allocation
	for _, a := range allocs {
		updates = append(updates, &structs.Allocation{
			ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &yes, Timestamp: h.clock.Now()},
		})
	}
	if _, err := h.leader.UpdateAllocsFromClient(h.ctx, updates); err != nil {
		h.t.Fatal(err)
	}
}

func deploymentOf(s *state.Snapshot, jobID string, version uint64) *structs.Deployment {
	deps, _ := s.DeploymentsByJob(structs.DefaultNamespace, jobID)
	for _, d := range deps {
		if d.JobVersion == version {
			return d
		}
	}
	return nil
}

func byVersion(allocs []*structs.Allocation, v uint64) []*structs.Allocation {
	var out []*structs.Allocation
	for _, a := range allocs {
		if a.JobVersion() == v {
			out = append(out, a)
		}
	}
	return out
}

func TestRollingUpdateAdvancesOnHealth(t *testing.T) {
	h := newHarness(t)
	h.start()
	for _, n := range []string{"a", "b"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 4000, 4096))
		must(t, err)
	}
	v1 := testJob("web", 3, 100)
	_, err := h.leader.RegisterJob(h.ctx, v1)
	must(t, err)
	h.waitFor("three v0 allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 3 })
	h.markHealthy(allocsOf(h.store().Snapshot(), "web"))
	h.waitFor("the first deployment successful and v0 stable", func(s *state.Snapshot) bool {
		d := deploymentOf(s, "web", 0)
		j, _ := s.JobByIDAndVersion(structs.DefaultNamespace, "web", 0)
		return d != nil && d.Status == structs.DeploymentStatusSuccessful && j != nil && j.Stable
	})

	// A destructive change rolls one alloc at a time.
	v2 := v1.Copy()
	v2.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "2h"}
	_, err = h.leader.RegisterJob(h.ctx, v2)
	must(t, err)
	for step := 1; step <= 3; step++ {
		h.waitFor("the next replacement", func(s *state.Snapshot) bool {
			return len(byVersion(allocsOf(s, "web"), 1)) == step
		})
		h.idle()
		snap := h.store().Snapshot()
		live := allocsOf(snap, "web")
		newer := byVersion(live, 1)
		if len(newer) != step || len(live) != 3 {
			t.Fatalf("step %d: %d new of %d live allocs, want %d of 3\n%s", step, len(newer), len(live), step, h.dump())
		}
		var unhealthy []*structs.Allocation
		for _, a := range newer {
			if !a.IsHealthy() {
				unhealthy = append(unhealthy, a)
			}
		}
		if len(unhealthy) != 1 {
			t.Fatalf("step %d: %d new allocs awaiting health, want 1 (max_parallel)", step, len(unhealthy))
		}
		h.markHealthy(unhealthy)
	}
	h.waitFor("the second deployment successful and v1 stable", func(s *state.Snapshot) bool {
		d := deploymentOf(s, "web", 1)
		j, _ := s.JobByIDAndVersion(structs.DefaultNamespace, "web", 1)
		return d != nil && d.Status == structs.DeploymentStatusSuccessful && j != nil && j.Stable
	})
	h.idle()
	snap := h.store().Snapshot()
	if live := allocsOf(snap, "web"); len(live) != 3 || len(byVersion(live, 1)) != 3 {
		t.Fatalf("after the rollout: %d live, %d of v1\n%s", len(live), len(byVersion(live, 1)), h.dump())
	}
	d := deploymentOf(snap, "web", 1)
	if s := d.TaskGroups["web"]; s.HealthyAllocs != 3 || s.PlacedAllocs != 3 {
		t.Fatalf("deployment counters: %+v", s)
	}
}

// startRollout runs v0 of a three-alloc job to a successful deployment,
// registers a destructive v1 and waits for its first replacement.
func startRollout(t *testing.T, h *harness) *structs.Job {
	t.Helper()
	for _, n := range []string{"a", "b"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 4000, 4096))
		must(t, err)
	}
	v0 := testJob("web", 3, 100)
	_, err := h.leader.RegisterJob(h.ctx, v0)
	must(t, err)
	h.waitFor("three v0 allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 3 })
	h.markHealthy(allocsOf(h.store().Snapshot(), "web"))
	h.waitFor("v0 successful", func(s *state.Snapshot) bool {
		d := deploymentOf(s, "web", 0)
		return d != nil && d.Status == structs.DeploymentStatusSuccessful
	})
	v1 := v0.Copy()
	v1.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "2h"}
	_, err = h.leader.RegisterJob(h.ctx, v1)
	must(t, err)
	h.waitFor("the first v1 alloc", func(s *state.Snapshot) bool { return len(byVersion(allocsOf(s, "web"), 1)) == 1 })
	h.idle()
	return v1
}
