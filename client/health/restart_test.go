package health

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/structs"
)

// TestRestartWatchObserve is the check_restart rule, step by step: each
// step is a check result at a time (seconds after t0), with the start of
// the task's current run (-1: not running); "R" marks a step that must
// ask for a restart.
func TestRestartWatchObserve(t *testing.T) {
	const (
		P = structs.CheckPassing
		W = structs.CheckWarning
		C = structs.CheckCritical
	)
	type step struct {
		at, started int
		status      string
		restart     bool
	}
	cases := []struct {
		name  string
		cfg   structs.CheckRestart
		steps []step
	}{
		{"limit failures in a row restart", structs.CheckRestart{Limit: 3, Grace: 5 * time.Second}, []step{
			{10, 0, C, false}, {20, 0, C, false}, {30, 0, C, true},
		}},
		{"limit 1 restarts at the first failure", structs.CheckRestart{Limit: 1}, []step{
			{1, 0, P, false}, {2, 0, C, true},
		}},
		{"a pass starts the count again", structs.CheckRestart{Limit: 2}, []step{
			{1, 0, C, false}, {2, 0, P, false}, {3, 0, C, false}, {4, 0, C, true},
		}},
		{"failures within grace do not count", structs.CheckRestart{Limit: 2, Grace: 10 * time.Second}, []step{
			{1, 0, C, false}, {5, 0, C, false}, {9, 0, C, false}, {10, 0, C, false}, {11, 0, C, true},
		}},
		{"a warning fails", structs.CheckRestart{Limit: 2}, []step{
			{1, 0, W, false}, {2, 0, W, true},
		}},
		{"ignore_warnings: a warning passes", structs.CheckRestart{Limit: 2, IgnoreWarnings: true}, []step{
			{1, 0, C, false}, {2, 0, W, false}, {3, 0, C, false}, {4, 0, W, false}, {5, 0, C, false}, {6, 0, C, true},
		}},
		{"nothing more until the task runs again", structs.CheckRestart{Limit: 1}, []step{
			{1, 0, C, true}, {2, 0, C, false}, {3, -1, C, false}, {4, 4, C, true},
		}},
		{"a new run starts a new grace and count", structs.CheckRestart{Limit: 2, Grace: 3 * time.Second}, []step{
			{3, 0, C, false}, {5, 5, C, false}, {7, 5, C, false}, {8, 5, C, false}, {9, 5, C, true},
		}},
		{"not running: the count starts again", structs.CheckRestart{Limit: 2}, []step{
			{1, 0, C, false}, {2, -1, C, false}, {3, 0, C, false}, {4, 0, C, true},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := restartWatch{cfg: c.cfg}
			for i, s := range c.steps {
				var started time.Time
				if s.started >= 0 {
					started = t0.Add(time.Duration(s.started) * time.Second)
				}
				if got := w.observe(s.status, started, t0.Add(time.Duration(s.at)*time.Second)); got != s.restart {
					t.Fatalf("step %d (%+v): restart %v, want %v", i, s, got, s.restart)
				}
			}
		})
	}
}

// TestRestartWatcher: the shell on a fake clock restarts the task of a
// task's service and every task for a group service, once grace has
// passed since they all run.
func TestRestartWatcher(t *testing.T) {
	c := clock.NewFake(t0)
	var got []string
	checks := []Check{
		{Name: "web/alive", CheckName: "alive", Restart: &structs.CheckRestart{Limit: 2, Grace: 10 * time.Second}, RestartTasks: []string{"web"}},
		{Name: "grp/ready", CheckName: "ready", Restart: &structs.CheckRestart{Limit: 1}, RestartTasks: []string{"web", "side"}},
		{Name: "web/plain"},
	}
	w := NewRestartWatcher(c, checks, func(task, reason string) { got = append(got, task+": "+reason) })
	if w == nil {
		t.Fatal("no watcher for checks with check_restart")
	}
	if NewRestartWatcher(c, checks[2:], nil) != nil {
		t.Fatal("a watcher for checks without check_restart")
	}
	run := func(task string) {
		w.TaskUpdated(task, &structs.TaskState{State: structs.TaskStateRunning, StartedAt: c.Now()})
	}
	crit := func(name string) { w.CheckResult(CheckResult{Name: name, Status: structs.CheckCritical}) }

	run("web")
	crit("grp/ready") // side is not running: nothing
	crit("web/alive") // within grace
	c.Advance(10 * time.Second)
	crit("web/alive")
	crit("web/plain") // no check_restart
	if len(got) != 0 {
		t.Fatalf("premature restarts %v", got)
	}
	crit("web/alive")
	run("side")
	crit("grp/ready")
	want := []string{
		`web: healthcheck: check "alive" unhealthy`,
		`web: healthcheck: check "ready" unhealthy`,
		`side: healthcheck: check "ready" unhealthy`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("restarts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Both asked already: nothing more until the tasks run again.
	crit("web/alive")
	crit("web/alive")
	crit("grp/ready")
	if len(got) != 3 {
		t.Fatalf("restarts after firing: %v", got)
	}
	w.TaskUpdated("web", &structs.TaskState{State: structs.TaskStatePending})
	c.Advance(time.Second)
	run("web")
	crit("grp/ready")
	if len(got) != 5 {
		t.Fatalf("after web ran again: %v", got)
	}
}
