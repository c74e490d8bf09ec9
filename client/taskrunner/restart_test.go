package taskrunner

import (
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

func TestRestartTracker(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fail := &structs.RestartPolicy{Attempts: 2, Interval: time.Minute, Delay: 5 * time.Second, Mode: structs.RestartPolicyModeFail}
	delay := &structs.RestartPolicy{Attempts: 2, Interval: time.Minute, Delay: 5 * time.Second, Mode: structs.RestartPolicyModeDelay}
	type step struct {
		at      time.Duration
		success bool
		want    decision
	}
	exceeded := func(p *structs.RestartPolicy) string {
		return "Exceeded allowed attempts 2 in interval 1m0s and mode is \"" + p.Mode + "\""
	}
	for _, tc := range []struct {
		name    string
		policy  *structs.RestartPolicy
		jobType string
		steps   []step
	}{
		{"fail mode gives up after attempts", fail, structs.JobTypeService, []step{
			{0, false, decision{restart: true, delay: 5 * time.Second, reason: ReasonWithinPolicy}},
			{10 * time.Second, false, decision{restart: true, delay: 5 * time.Second, reason: ReasonWithinPolicy}},
			{20 * time.Second, false, decision{reason: exceeded(fail), failed: true}},
		}},
		{"interval resets the count", fail, structs.JobTypeService, []step{
			{0, false, decision{restart: true, delay: 5 * time.Second, reason: ReasonWithinPolicy}},
			{10 * time.Second, false, decision{restart: true, delay: 5 * time.Second, reason: ReasonWithinPolicy}},
			{70 * time.Second, false, decision{restart: true, delay: 5 * time.Second, reason: ReasonWithinPolicy}},
		}},
		{"delay mode waits out the interval", delay, structs.JobTypeService, []step{
			{0, false, decision{restart: true, delay: 5 * time.Second, reason: ReasonWithinPolicy}},
			{10 * time.Second, false, decision{restart: true, delay: 5 * time.Second, reason: ReasonWithinPolicy}},
			{20 * time.Second, false, decision{restart: true, delay: 40 * time.Second, reason: exceeded(delay)}},
			{60 * time.Second, false, decision{restart: true, delay: 5 * time.Second, reason: ReasonWithinPolicy}},
		}},
		{"batch success is complete", fail, structs.JobTypeBatch, []step{
			{0, true, decision{reason: ReasonUnnecessary}},
		}},
		{"sysbatch success is complete", fail, structs.JobTypeSysBatch, []step{
			{0, true, decision{reason: ReasonUnnecessary}},
		}},
		{"sysbatch failure restarts within its policy", fail, structs.JobTypeSysBatch, []step{
			{0, false, decision{restart: true, delay: 5 * time.Second, reason: ReasonWithinPolicy}},
			{10 * time.Second, false, decision{restart: true, delay: 5 * time.Second, reason: ReasonWithinPolicy}},
			{20 * time.Second, false, decision{reason: exceeded(fail), failed: true}},
		}},
		{"service success restarts", fail, structs.JobTypeService, []step{
			{0, true, decision{restart: true, delay: 5 * time.Second, reason: ReasonWithinPolicy}},
		}},
		{"no attempts", &structs.RestartPolicy{Mode: structs.RestartPolicyModeFail}, structs.JobTypeService, []step{
			{0, false, decision{reason: ReasonNoRestarts, failed: true}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRestartTracker(tc.policy, tc.jobType, false)
			for i, s := range tc.steps {
				if got := r.next(s.success, t0.Add(s.at)); got != s.want {
					t.Fatalf("step %d: got %+v, want %+v", i, got, s.want)
				}
			}
		})
	}
}

func TestDefaultRestartPolicy(t *testing.T) {
	r := newRestartTracker(nil, structs.JobTypeBatch, false)
	if r.policy.Attempts != 3 || !r.batch {
		t.Fatalf("batch default: %+v", r.policy)
	}
	// sysbatch takes batch's defaults, as Nomad's.
	r = newRestartTracker(nil, structs.JobTypeSysBatch, false)
	if r.policy != *structs.DefaultRestartPolicy(structs.JobTypeBatch) || !r.batch {
		t.Fatalf("sysbatch default: %+v", r.policy)
	}
}

// TestLifecycleEphemeralNotRestartedOnSuccess: a service job's prestart
// (or poststart, poststop) task that is not a sidecar runs to completion,
// as Nomad's; a failure still goes through the policy.
func TestLifecycleEphemeralNotRestartedOnSuccess(t *testing.T) {
	p := &structs.RestartPolicy{Attempts: 2, Delay: time.Second, Interval: time.Minute, Mode: structs.RestartPolicyModeFail}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newRestartTracker(p, structs.JobTypeService, true)
	if got := r.next(true, t0); got.restart || got.failed || got.reason != ReasonUnnecessary {
		t.Fatalf("success: %+v", got)
	}
	if got := r.next(false, t0); !got.restart {
		t.Fatalf("failure: %+v", got)
	}
}
