package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// startRunning runs a job of count allocs with max_parallel to a
// successful first deployment, every alloc running and healthy.
func startRunning(t *testing.T, h *harness, count, maxParallel int, surge ...int) *structs.Job {
	t.Helper()
	for _, n := range []string{"a", "b"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 4000, 4096))
		must(t, err)
	}
	job := testJob("web", count, 100)
	job.TaskGroups[0].Update.MaxParallel = maxParallel
	if len(surge) > 0 {
		job.TaskGroups[0].Update.MaxSurge = structs.Count(surge[0])
	}
	_, err := h.leader.RegisterJob(h.ctx, job)
	must(t, err)
	h.waitFor("the allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == count })
	h.markHealthy(allocsOf(h.store().Snapshot(), "web"))
	h.waitFor("v0 successful", func(s *state.Snapshot) bool {
		d := deploymentOf(s, "web", 0)
		return d != nil && d.Status == structs.DeploymentStatusSuccessful
	})
	h.idle()
	return job
}

// restarted returns the allocs the restart d reached in place.
func restarted(allocs []*structs.Allocation, d string) (in, healthy []*structs.Allocation) {
	for _, a := range allocs {
		if a.DeploymentID == d && a.DesiredRestart != nil && a.DesiredRestart.DeploymentID == d {
			in = append(in, a)
			if a.IsHealthy() {
				healthy = append(healthy, a)
			}
		}
	}
	return in, healthy
}

// A restart in place marks max_parallel allocs at a time, each once, with
// the same IDs; the next batch waits for their health; the restart ends
// successful with every alloc marked once.
func TestRestartInPlaceRollsByMaxParallel(t *testing.T) {
	h := newHarness(t)
	h.start()
	defer h.stop()
	startRunning(t, h, 5, 2)
	ids := map[string]bool{}
	for _, a := range allocsOf(h.store().Snapshot(), "web") {
		ids[a.ID] = true
	}
	resp, err := h.leader.RestartJob(h.ctx, RestartRequest{JobID: "web"})
	must(t, err)
	d := resp.DeploymentID
	for step := 0; ; step++ {
		h.idle()
		live := allocsOf(h.store().Snapshot(), "web")
		in, healthy := restarted(live, d)
		if waiting := len(in) - len(healthy); waiting > 2 {
			t.Fatalf("step %d: %d allocs restarting at once, max_parallel 2", step, waiting)
		}
		if len(live) != 5 {
			t.Fatalf("step %d: %d live allocs", step, len(live))
		}
		for _, a := range live {
			if !ids[a.ID] {
				t.Fatalf("a restart in place placed %s", a.ID)
			}
		}
		if len(healthy) == 5 {
			break
		}
		if step > 10 {
			t.Fatalf("no progress\n%s", h.dump())
		}
		var fresh []*structs.Allocation
		for _, a := range in {
			if !a.IsHealthy() {
				fresh = append(fresh, a)
			}
		}
		h.markHealthy(fresh)
	}
	h.waitFor("the restart successful", func(s *state.Snapshot) bool {
		dep, _ := s.DeploymentByID(d)
		return dep != nil && dep.Status == structs.DeploymentStatusSuccessful
	})
}

// With -reschedule and max_surge the allocs are replaced, create before
// destroy: serving never drops below count.
func TestRestartRescheduleReplacesWithSurge(t *testing.T) {
	h := newHarness(t)
	h.start()
	defer h.stop()
	startRunning(t, h, 4, 2, 2)
	old := map[string]bool{}
	for _, a := range allocsOf(h.store().Snapshot(), "web") {
		old[a.ID] = true
	}
	resp, err := h.leader.RestartJob(h.ctx, RestartRequest{JobID: "web", Reschedule: true})
	must(t, err)
	for step := 0; ; step++ {
		h.idle()
		live := allocsOf(h.store().Snapshot(), "web")
		serving, fresh := 0, []*structs.Allocation{}
		for _, a := range live {
			if old[a.ID] || a.IsHealthy() {
				serving++
			}
			if a.DeploymentID == resp.DeploymentID && !a.IsHealthy() {
				fresh = append(fresh, a)
			}
		}
		if serving < 4 {
			t.Fatalf("step %d: %d serving, below count 4\n%s", step, serving, h.dump())
		}
		if len(fresh) == 0 {
			break
		}
		h.markHealthy(fresh)
		if step > 10 {
			t.Fatalf("no progress\n%s", h.dump())
		}
	}
	h.waitFor("the restart successful, every alloc new", func(s *state.Snapshot) bool {
		dep, _ := s.DeploymentByID(resp.DeploymentID)
		live := allocsOf(s, "web")
		for _, a := range live {
			if old[a.ID] {
				return false
			}
		}
		return dep != nil && dep.Status == structs.DeploymentStatusSuccessful && len(live) == 4
	})
}

// Bad requests are refused with nothing written.
func TestRestartRefusals(t *testing.T) {
	h := newHarness(t)
	h.start()
	defer h.stop()
	startRunning(t, h, 2, 1)
	for _, c := range []struct {
		req  RestartRequest
		want string
	}{
		{RestartRequest{JobID: "web", Groups: []string{"nope"}}, `group "nope" not found`},
		{RestartRequest{JobID: "web", Tasks: []string{"nope"}}, `task "nope" not found`},
		{RestartRequest{JobID: "web", BatchSize: "0"}, "-batch-size must be"},
		{RestartRequest{JobID: "web", BatchSize: "0%"}, "-batch-size must be"},
		{RestartRequest{JobID: "web", OnError: "maybe"}, "-on-error must be"},
		{RestartRequest{JobID: "web", Reschedule: true, AllTasks: true}, "-reschedule"},
	} {
		_, err := h.leader.RestartJob(h.ctx, c.req)
		if !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an invalid request saying %q", c.req, err, c.want)
		}
	}
	// A batch job with -reschedule, a job with nothing running.
	batch := testJob("etl", 1, 100)
	batch.Type, batch.Update, batch.TaskGroups[0].Update = structs.JobTypeBatch, nil, nil
	idle := testJob("idle", 0, 100)
	for _, j := range []*structs.Job{batch, idle} {
		_, err := h.leader.RegisterJob(h.ctx, j)
		must(t, err)
	}
	h.idle()
	for _, c := range []struct {
		req  RestartRequest
		want string
	}{
		{RestartRequest{JobID: "etl", Reschedule: true}, "-reschedule is not supported for batch jobs"},
		{RestartRequest{JobID: "idle"}, `job "idle" has no running allocations to restart`},
	} {
		if _, err := h.leader.RestartJob(h.ctx, c.req); !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an invalid request saying %q", c.req, err, c.want)
		}
	}
	if _, err := h.leader.RestartJob(h.ctx, RestartRequest{JobID: "nope"}); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("unknown job: %v", err)
	}
	first, err := h.leader.RestartJob(h.ctx, RestartRequest{JobID: "web"})
	must(t, err)
	if _, err := h.leader.RestartJob(h.ctx, RestartRequest{JobID: "web"}); !errors.Is(err, ErrInvalidRequest) ||
		!strings.Contains(err.Error(), "active restart "+first.DeploymentID) {
		t.Errorf("a second restart: %v", err)
	}
	deps, _ := h.store().Snapshot().DeploymentsByJob(structs.DefaultNamespace, "web")
	if len(deps) != 2 {
		t.Errorf("%d deployments, want the first version's and one restart", len(deps))
	}
}

// -plan answers the batches and writes nothing.
func TestRestartPlan(t *testing.T) {
	h := newHarness(t)
	h.start()
	defer h.stop()
	startRunning(t, h, 4, 2)
	before, _ := h.store().Snapshot().DeploymentsByJob(structs.DefaultNamespace, "web")
	resp, err := h.leader.RestartJob(h.ctx, RestartRequest{JobID: "web", Plan: true})
	must(t, err)
	if len(resp.RestartPlan) != 2 || len(resp.RestartPlan[0].Allocs) != 2 || resp.RestartPlan[1].Batch != 2 {
		t.Fatalf("plan %+v", resp.RestartPlan)
	}
	after, _ := h.store().Snapshot().DeploymentsByJob(structs.DefaultNamespace, "web")
	if len(after) != len(before) || resp.DeploymentID != "" {
		t.Fatalf("the plan wrote a deployment")
	}
}

// A scale during a restart leaves it running: the allocs the scale adds
// join it without a restart, every old alloc is still restarted once, and
// the restart ends successful with the new count.
func TestRestartGoesOnThroughAScale(t *testing.T) {
	h := newHarness(t)
	h.start()
	defer h.stop()
	startRunning(t, h, 4, 1)
	old := map[string]bool{}
	for _, a := range allocsOf(h.store().Snapshot(), "web") {
		old[a.ID] = true
	}
	resp, err := h.leader.RestartJob(h.ctx, RestartRequest{JobID: "web"})
	must(t, err)
	d := resp.DeploymentID
	h.idle()
	six := int64(6)
	_, err = h.leader.ScaleJob(h.ctx, ScaleRequest{Namespace: structs.DefaultNamespace, JobID: "web", Group: "web", Count: &six})
	must(t, err)
	// Each step waits for the next batch (an alloc of the restart with
	// its health unknown) or the end, then reports the batch healthy.
	fresh := func(s *state.Snapshot) []*structs.Allocation {
		var out []*structs.Allocation
		for _, a := range allocsOf(s, "web") {
			if a.DeploymentID == d && !a.IsHealthy() {
				out = append(out, a)
			}
		}
		return out
	}
	for step := 0; step < 20; step++ {
		h.waitFor("the next batch or the end", func(s *state.Snapshot) bool {
			dep, _ := s.DeploymentByID(d)
			return !dep.Active() || len(fresh(s)) > 0
		})
		snap := h.store().Snapshot()
		if dep, _ := snap.DeploymentByID(d); dep.Status != structs.DeploymentStatusRunning {
			if dep.Status != structs.DeploymentStatusSuccessful {
				t.Fatalf("restart %s: %s\n%s", dep.Status, dep.StatusDescription, h.dump())
			}
			break
		}
		h.markHealthy(fresh(snap))
	}
	if dep, _ := h.store().Snapshot().DeploymentByID(d); dep.Status != structs.DeploymentStatusSuccessful {
		t.Fatalf("restart %s after 20 batches\n%s", dep.Status, h.dump())
	}
	live := allocsOf(h.store().Snapshot(), "web")
	if len(live) != 6 {
		t.Fatalf("%d live allocs, want 6", len(live))
	}
	for _, a := range live {
		switch {
		case old[a.ID] && (a.DesiredRestart == nil || a.DesiredRestart.DeploymentID != d):
			t.Errorf("old alloc %s was not restarted", a.ID)
		case !old[a.ID] && a.DesiredRestart != nil:
			t.Errorf("alloc %s, added by the scale, was restarted", a.ID)
		case a.DeploymentID != d:
			t.Errorf("alloc %s is not in the restart", a.ID)
		}
	}
}
