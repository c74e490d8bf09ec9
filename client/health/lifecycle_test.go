package health

import (
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/structs"
)

// TestLifecycleHealth: deployment health of an allocation with lifecycle
// tasks, as Nomad judges it. "web" is the main task, "proxy" a prestart
// sidecar (both must run), "init" a prestart and "announce" a poststart
// task that are not sidecars (they may have completed, if successfully).
// Poststop tasks are not given to the tracker at all.
func TestLifecycleHealth(t *testing.T) {
	type step struct {
		at    time.Duration
		task  string
		state string
		fail  bool
	}
	for _, c := range []struct {
		name    string
		steps   []step
		healthy *bool // nil: undecided at the end
		at      time.Duration
	}{
		{"prestart completed, sidecar and main running", []step{
			{0, "init", structs.TaskStateRunning, false},
			{1 * time.Second, "init", structs.TaskStateDead, false},
			{1 * time.Second, "proxy", structs.TaskStateRunning, false},
			{2 * time.Second, "web", structs.TaskStateRunning, false},
			{3 * time.Second, "announce", structs.TaskStateRunning, false},
			{4 * time.Second, "announce", structs.TaskStateDead, false},
		}, ptr(true), 12 * time.Second},
		{"poststart still running counts as running", []step{
			{0, "init", structs.TaskStateDead, false},
			{0, "proxy", structs.TaskStateRunning, false},
			{0, "web", structs.TaskStateRunning, false},
			{1 * time.Second, "announce", structs.TaskStateRunning, false},
		}, ptr(true), 11 * time.Second},
		{"failed prestart is unhealthy at once", []step{
			{0, "proxy", structs.TaskStateRunning, false},
			{2 * time.Second, "init", structs.TaskStateDead, true},
		}, ptr(false), 2 * time.Second},
		{"failed poststart is unhealthy at once", []step{
			{0, "init", structs.TaskStateDead, false},
			{0, "proxy", structs.TaskStateRunning, false},
			{0, "web", structs.TaskStateRunning, false},
			{3 * time.Second, "announce", structs.TaskStateDead, true},
		}, ptr(false), 3 * time.Second},
		{"dead sidecar is unhealthy even when it succeeded", []step{
			{0, "init", structs.TaskStateDead, false},
			{0, "proxy", structs.TaskStateRunning, false},
			{0, "web", structs.TaskStateRunning, false},
			{0, "announce", structs.TaskStateDead, false},
			{4 * time.Second, "proxy", structs.TaskStateDead, false},
		}, ptr(false), 4 * time.Second},
		{"poststart not yet run: not healthy yet", []step{
			{0, "init", structs.TaskStateDead, false},
			{0, "proxy", structs.TaskStateRunning, false},
			{0, "web", structs.TaskStateRunning, false},
		}, nil, 0},
		{"a task given to no list is ignored", []step{
			{0, "init", structs.TaskStateDead, false},
			{0, "proxy", structs.TaskStateRunning, false},
			{0, "web", structs.TaskStateRunning, false},
			{0, "announce", structs.TaskStateDead, false},
			{1 * time.Second, "cleanup", structs.TaskStateDead, true},
		}, ptr(true), 10 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := clock.NewFake(t0)
			s := structs.DefaultUpdateStrategy()
			s.HealthCheck = structs.UpdateHealthCheckTaskStates
			s.MinHealthyTime = 10 * time.Second
			s.HealthyDeadline = time.Minute
			var results []Result
			tr, err := NewTracker(Config{
				Strategy: s, Tasks: []string{"web", "proxy"}, Ephemeral: []string{"init", "announce"}, Clock: clk,
				OnResult: func(r Result) { results = append(results, r) },
			})
			if err != nil {
				t.Fatal(err)
			}
			tr.Start()
			for _, st := range c.steps {
				clk.Set(t0.Add(st.at))
				ts := &structs.TaskState{State: st.state, Failed: st.fail}
				if st.state == structs.TaskStateRunning {
					ts.StartedAt = clk.Now()
				}
				tr.TaskUpdated(st.task, ts)
			}
			clk.Set(t0.Add(30 * time.Second))
			switch {
			case c.healthy == nil && len(results) != 0:
				t.Fatalf("decided %+v, want no decision yet", results)
			case c.healthy == nil:
			case len(results) != 1:
				t.Fatalf("results %+v, want one", results)
			case results[0].Healthy != *c.healthy || !results[0].Timestamp.Equal(t0.Add(c.at)):
				t.Fatalf("result %+v, want healthy=%v at +%v", results[0], *c.healthy, c.at)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestGroupTasks(t *testing.T) {
	lc := func(name, hook string, sidecar bool) *structs.Task {
		return &structs.Task{Name: name, Lifecycle: &structs.TaskLifecycle{Hook: hook, Sidecar: sidecar}}
	}
	tg := &structs.TaskGroup{Tasks: []*structs.Task{
		{Name: "web"},
		lc("init", structs.TaskLifecycleHookPrestart, false),
		lc("proxy", structs.TaskLifecycleHookPrestart, true),
		lc("announce", structs.TaskLifecycleHookPoststart, false),
		lc("shipper", structs.TaskLifecycleHookPoststart, true),
		lc("cleanup", structs.TaskLifecycleHookPoststop, false),
		lc("flush", structs.TaskLifecycleHookPoststop, true), // sidecar means nothing for poststop
	}}
	tasks, eph := GroupTasks(tg)
	if fmt.Sprint(tasks) != "[web proxy shipper]" || fmt.Sprint(eph) != "[init announce]" {
		t.Fatalf("tasks %v, ephemeral %v", tasks, eph)
	}
}
