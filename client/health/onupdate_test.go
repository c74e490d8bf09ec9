package health

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/structs"
)

// on_update = "ignore": the check runs but the deployment does not wait
// for it; "ignore_warnings": its warnings pass; "require_healthy" (or
// unset): only a pass passes.
func TestOnUpdate(t *testing.T) {
	checks := []Check{
		{Name: "svc/required"},
		{Name: "svc/warnings-ok", OnUpdate: structs.OnUpdateIgnoreWarnings},
		{Name: "svc/ignored", OnUpdate: structs.OnUpdateIgnore},
	}
	names := DeploymentChecks(checks)
	if !slices.Equal(names, []string{"svc/required", "svc/warnings-ok"}) {
		t.Fatalf("DeploymentChecks = %v", names)
	}

	f := newFixture(t, structs.UpdateHealthCheckChecks, names...)
	f.running("web")
	f.running("side")
	f.tracker.CheckResult(CheckResult{Name: "svc/required", Status: structs.CheckPassing})
	f.tracker.CheckResult(CheckResult{Name: "svc/warnings-ok", Status: structs.CheckWarning, OnUpdate: structs.OnUpdateIgnoreWarnings})
	// The ignored check keeps failing: it is not the tracker's concern.
	f.tracker.CheckResult(CheckResult{Name: "svc/ignored", Status: structs.CheckCritical, OnUpdate: structs.OnUpdateIgnore})
	f.advanceTo(10 * time.Second)
	f.want(t, true, 10*time.Second)

	// A warning of a check that requires health does not pass.
	g := newFixture(t, structs.UpdateHealthCheckChecks, "svc/required")
	g.running("web")
	g.running("side")
	g.tracker.CheckResult(CheckResult{Name: "svc/required", Status: structs.CheckWarning})
	g.advanceTo(30 * time.Second)
	g.wantNone(t)
	g.advanceTo(time.Minute)
	g.want(t, false, time.Minute)
}

// A check's on_update travels from the job to its results.
func TestOnUpdateReachesResults(t *testing.T) {
	svc := &structs.Service{Name: "svc", Checks: []*structs.ServiceCheck{{
		Name: "s", Type: structs.CheckTypeScript, Command: "true", TaskName: "t", OnUpdate: structs.OnUpdateIgnoreWarnings,
		Interval: time.Hour, Timeout: time.Second,
	}}}
	tg := &structs.TaskGroup{Name: "g", Tasks: []*structs.Task{{Name: "t", Services: []*structs.Service{svc}}}}
	exec := func(ctx context.Context, task string, cmd []string) ([]byte, int, error) {
		return []byte("meh"), 1, nil
	}
	checks, err := AllocChecks(&structs.Allocation{}, tg, nil, exec)
	if err != nil || len(checks) != 1 || checks[0].OnUpdate != structs.OnUpdateIgnoreWarnings {
		t.Fatalf("checks = %+v, %v", checks, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan CheckResult, 1)
	wait := RunChecks(ctx, clock.Real{}, checks, func(r CheckResult) {
		select {
		case got <- r:
		default:
		}
	})
	r := <-got
	cancel()
	wait()
	if r.Status != structs.CheckWarning || r.OnUpdate != structs.OnUpdateIgnoreWarnings || !r.PassesDeployment() {
		t.Fatalf("result = %+v (passes the deployment: %v)", r, r.PassesDeployment())
	}
}
