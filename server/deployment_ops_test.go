package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/droverhq/drover/deployment"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// canaryVersion returns job changed destructively, with canary = 1 and
// auto_revert on.
func canaryVersion(job *structs.Job, runFor string) *structs.Job {
	j := job.Copy()
	j.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": runFor}
	j.TaskGroups[0].Update.Canary = 1
	j.TaskGroups[0].Update.AutoRevert = true
	j.Update.Canary = 1
	j.Update.AutoRevert = true
	return j
}

// wantRefusal checks that err is a refusal of the given sentinel, matching
// state.ErrInvalid (a 400 in the HTTP API), with text in its message.
func wantRefusal(t *testing.T, what string, err, sentinel error, text string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: accepted, want %v", what, sentinel)
	}
	if !errors.Is(err, sentinel) || !errors.Is(err, state.ErrInvalid) || !strings.Contains(err.Error(), text) {
		t.Fatalf("%s: error %q, want %v with %q", what, err, sentinel, text)
	}
}

// startCanaryRollout runs v0 of "web" (2 allocs, healthy, stable) and then
// v1 with one canary, and returns v1's deployment once its canary is placed.
func startCanaryRollout(t *testing.T, h *harness) (*structs.Job, *structs.Deployment) {
	t.Helper()
	for _, n := range []string{"a", "b"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 4000, 4096))
		must(t, err)
	}
	v0 := testJob("web", 2, 100)
	_, err := h.leader.RegisterJob(h.ctx, v0)
	must(t, err)
	h.waitFor("two v0 allocs", func(s *state.Snapshot) bool { return len(allocsOf(s, "web")) == 2 })
	h.markHealthy(allocsOf(h.store().Snapshot(), "web"))
	h.waitFor("v0 stable", func(s *state.Snapshot) bool {
		j, _ := s.JobByIDAndVersion(structs.DefaultNamespace, "web", 0)
		return j != nil && j.Stable
	})
	_, err = h.leader.RegisterJob(h.ctx, canaryVersion(v0, "2h"))
	must(t, err)
	var d *structs.Deployment
	h.waitFor("the v1 canary placed", func(s *state.Snapshot) bool {
		d = deploymentOf(s, "web", 1)
		return d != nil && len(d.TaskGroups["web"].PlacedCanaries) == 1
	})
	h.idle()
	return v0, d
}

func TestDeploymentVerbsOnTheLeader(t *testing.T) {
	h := newHarness(t)
	h.start()
	_, d := startCanaryRollout(t, h)
	canary := d.TaskGroups["web"].PlacedCanaries[0]

	_, err := h.leader.PromoteDeployment(h.ctx, d.ID, nil, true)
	wantRefusal(t, "promote before health", err, deployment.ErrCanariesUnhealthy, `task group "web" has 0/1 healthy allocations`)
	_, err = h.leader.PromoteDeployment(h.ctx, d.ID, []string{"db"}, false)
	wantRefusal(t, "promote an unknown group", err, deployment.ErrUnknownGroup, `"db"`)
	_, err = h.leader.PromoteDeployment(h.ctx, "no-such-id", nil, true)
	if !errors.Is(err, state.ErrNotFound) || !errors.Is(err, ErrDeploymentNotFound) {
		t.Fatalf("promote an unknown deployment: %v", err)
	}
	_, err = h.leader.SetAllocHealth(h.ctx, d.ID, nil, nil)
	wantRefusal(t, "health without allocs", err, deployment.ErrNoAllocs, "at least one")
	_, err = h.leader.SetAllocHealth(h.ctx, d.ID, []string{"nope"}, nil)
	wantRefusal(t, "health of a foreign alloc", err, deployment.ErrUnknownAlloc, `"nope"`)

	// Pause, refuse promotion while paused, resume with an evaluation.
	resp, err := h.leader.PauseDeployment(h.ctx, d.ID, true)
	must(t, err)
	if resp.EvalID != "" || resp.DeploymentModifyIndex == 0 {
		t.Fatalf("pause answer %+v", resp)
	}
	got, _ := h.store().Snapshot().DeploymentByID(d.ID)
	if got.Status != structs.DeploymentStatusPaused || got.StatusDescription != structs.DeploymentStatusDescriptionPaused {
		t.Fatalf("after pause: %s %q", got.Status, got.StatusDescription)
	}
	_, err = h.leader.PromoteDeployment(h.ctx, d.ID, nil, true)
	wantRefusal(t, "promote while paused", err, deployment.ErrPromotePaused, "paused")
	resp, err = h.leader.PauseDeployment(h.ctx, d.ID, false)
	must(t, err)
	ev, _ := h.store().Snapshot().EvalByID(resp.EvalID)
	if ev == nil || ev.TriggeredBy != structs.EvalTriggerDeploymentWatcher || ev.DeploymentID != d.ID || ev.CreateTime != h.clock.Now().UnixNano() {
		t.Fatalf("resume eval %+v", ev)
	}
	got, _ = h.store().Snapshot().DeploymentByID(d.ID)
	if got.Status != structs.DeploymentStatusRunning {
		t.Fatalf("after resume: %s", got.Status)
	}

	// Healthy by hand, then promote.
	_, err = h.leader.SetAllocHealth(h.ctx, d.ID, []string{canary}, nil)
	must(t, err)
	a, _ := h.store().Snapshot().AllocByID(canary)
	if !a.IsHealthy() {
		t.Fatalf("canary not healthy after allocation-health: %+v", a.DeploymentStatus)
	}
	resp, err = h.leader.PromoteDeployment(h.ctx, d.ID, []string{"web"}, false)
	must(t, err)
	got, _ = h.store().Snapshot().DeploymentByID(d.ID)
	if !got.TaskGroups["web"].Promoted || resp.EvalID == "" || resp.Index == 0 {
		t.Fatalf("after promote: %+v, answer %+v", got.TaskGroups["web"], resp)
	}

	// Fail with auto_revert: v0's spec comes back as version 2.
	resp, err = h.leader.FailDeployment(h.ctx, d.ID)
	must(t, err)
	if resp.RevertedJobVersion == nil || *resp.RevertedJobVersion != 0 {
		t.Fatalf("fail answer %+v", resp)
	}
	snap := h.store().Snapshot()
	got, _ = snap.DeploymentByID(d.ID)
	if got.Status != structs.DeploymentStatusFailed ||
		got.StatusDescription != "Deployment marked as failed - rolling back to job version 0" {
		t.Fatalf("after fail: %s %q", got.Status, got.StatusDescription)
	}
	cur, _ := snap.JobByID(structs.DefaultNamespace, "web")
	if cur.Version != 2 || cur.TaskGroups[0].Tasks[0].Config["run_for"] != "1h" {
		t.Fatalf("current job after revert: v%d %v", cur.Version, cur.TaskGroups[0].Tasks[0].Config)
	}
	if cur.RevertOf == nil || *cur.RevertOf != 0 {
		t.Fatalf("the reverted version is not marked as restoring version 0: %v", cur.RevertOf)
	}

	// Every verb is refused on the terminal deployment.
	_, err = h.leader.FailDeployment(h.ctx, d.ID)
	wantRefusal(t, "fail twice", err, deployment.ErrFailTerminal, "can't fail terminal deployment")
	_, err = h.leader.PromoteDeployment(h.ctx, d.ID, nil, true)
	wantRefusal(t, "promote terminal", err, deployment.ErrPromoteTerminal, "can't promote terminal deployment")
	_, err = h.leader.PauseDeployment(h.ctx, d.ID, true)
	wantRefusal(t, "pause terminal", err, deployment.ErrPauseTerminal, "can't pause terminal deployment")
	_, err = h.leader.PauseDeployment(h.ctx, d.ID, false)
	wantRefusal(t, "resume terminal", err, deployment.ErrResumeTerminal, "can't resume terminal deployment")
	_, err = h.leader.SetAllocHealth(h.ctx, d.ID, []string{canary}, nil)
	wantRefusal(t, "health on terminal", err, deployment.ErrHealthTerminal, "terminal deployment")
}

func TestFailWithoutAutoRevertKeepsTheJob(t *testing.T) {
	h := newHarness(t)
	h.start()
	for _, n := range []string{"a"} {
		_, _, err := h.leader.RegisterNode(h.ctx, testNode(n, 4000, 4096))
		must(t, err)
	}
	_, err := h.leader.RegisterJob(h.ctx, testJob("web", 1, 100))
	must(t, err)
	var d *structs.Deployment
	h.waitFor("the v0 deployment", func(s *state.Snapshot) bool { d = deploymentOf(s, "web", 0); return d != nil })
	resp, err := h.leader.FailDeployment(h.ctx, d.ID)
	must(t, err)
	if resp.RevertedJobVersion != nil || resp.EvalID == "" {
		t.Fatalf("fail answer %+v", resp)
	}
	snap := h.store().Snapshot()
	got, _ := snap.DeploymentByID(d.ID)
	cur, _ := snap.JobByID(structs.DefaultNamespace, "web")
	if got.StatusDescription != structs.DeploymentStatusDescriptionFailedByUser || cur.Version != 0 {
		t.Fatalf("after fail: %q, job v%d", got.StatusDescription, cur.Version)
	}
}

func TestRevertAndStability(t *testing.T) {
	h := newHarness(t)
	h.start()
	v0 := testJob("web", 1, 100)
	_, err := h.leader.RegisterJob(h.ctx, v0)
	must(t, err)
	v1 := v0.Copy()
	v1.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "2h"}
	_, err = h.leader.RegisterJob(h.ctx, v1)
	must(t, err)

	one, zero, five := uint64(1), uint64(0), uint64(5)
	_, err = h.leader.RevertJob(h.ctx, "", "web", 0, &zero)
	wantRefusal(t, "revert enforcing the wrong version", err, ErrRevertRefused, "current job has version 1; enforcing version 0")
	_, err = h.leader.RevertJob(h.ctx, "", "web", 1, nil)
	wantRefusal(t, "revert to the current version", err, ErrRevertRefused, "current version 1")
	if _, err = h.leader.RevertJob(h.ctx, "", "web", 5, &one); !errors.Is(err, state.ErrNotFound) || !errors.Is(err, ErrJobVersionNotFound) {
		t.Fatalf("revert to a missing version: %v", err)
	}
	if _, err = h.leader.RevertJob(h.ctx, "", "nope", 0, nil); !errors.Is(err, ErrJobNotFound) {
		t.Fatalf("revert of a missing job: %v", err)
	}
	resp, err := h.leader.RevertJob(h.ctx, "", "web", 0, &one)
	must(t, err)
	snap := h.store().Snapshot()
	cur, _ := snap.JobByID(structs.DefaultNamespace, "web")
	ev, _ := snap.EvalByID(resp.EvalID)
	if resp.JobVersion != 2 || cur.Version != 2 || cur.TaskGroups[0].Tasks[0].Config["run_for"] != "1h" ||
		resp.JobModifyIndex != cur.JobModifyIndex || ev == nil || ev.TriggeredBy != structs.EvalTriggerJobRegister {
		t.Fatalf("after revert: answer %+v, job v%d, eval %+v", resp, cur.Version, ev)
	}
	if cur.RevertOf == nil || *cur.RevertOf != 0 {
		t.Fatalf("the reverted version is not marked as restoring version 0: %v", cur.RevertOf)
	}
	// A submitted job never carries the mark: only a revert sets it.
	v3 := v0.Copy()
	v3.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "3h"}
	v3.RevertOf = &one
	_, err = h.leader.RegisterJob(h.ctx, v3)
	must(t, err)
	if cur, _ = h.store().Snapshot().JobByID(structs.DefaultNamespace, "web"); cur.Version != 3 || cur.RevertOf != nil {
		t.Fatalf("submitted job v%d kept RevertOf %v", cur.Version, cur.RevertOf)
	}

	st, err := h.leader.SetJobStability(h.ctx, "", "web", 1, true)
	must(t, err)
	snap = h.store().Snapshot()
	j1, _ := snap.JobByIDAndVersion(structs.DefaultNamespace, "web", 1)
	if !j1.Stable || st.Index == 0 {
		t.Fatalf("v1 not stable after SetJobStability: %+v", st)
	}
	if _, err := h.leader.SetJobStability(h.ctx, "", "web", five, true); !errors.Is(err, ErrJobVersionNotFound) {
		t.Fatalf("stability of a missing version: %v", err)
	}
	if _, err := h.leader.SetJobStability(h.ctx, "", "nope", 0, true); !errors.Is(err, ErrJobNotFound) {
		t.Fatalf("stability of a missing job: %v", err)
	}
}
