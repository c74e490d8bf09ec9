package client

import (
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// A job restart's request is acted on once per deployment: a new request
// (or one for another restart) asks, the same one again does not.
func TestRestartAskedOncePerRestart(t *testing.T) {
	req := func(id string) *structs.Allocation {
		a := &structs.Allocation{ID: "a"}
		if id != "" {
			a.DesiredRestart = &structs.DesiredRestart{DeploymentID: id}
		}
		return a
	}
	for _, c := range []struct {
		prev, next string
		want       bool
	}{
		{"", "", false},
		{"", "r1", true},
		{"r1", "r1", false},
		{"r1", "r2", true},
		{"r1", "", false},
	} {
		if got := restartAsked(req(c.prev), req(c.next)); got != c.want {
			t.Errorf("prev %q next %q: %t, want %t", c.prev, c.next, got, c.want)
		}
	}
}

// The health of a restart counts a task's new run only: a state of the
// run from before the restart is not fed to its tracker.
func TestOldRunIsNotCounted(t *testing.T) {
	since := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	run := func(state string, at time.Duration) *structs.TaskState {
		return &structs.TaskState{State: state, StartedAt: since.Add(at)}
	}
	for _, c := range []struct {
		st    *structs.TaskState
		since time.Time
		want  bool
	}{
		{run(structs.TaskStateRunning, -time.Second), since, true},
		{run(structs.TaskStateRunning, time.Second), since, false},
		{run(structs.TaskStatePending, -time.Second), since, false},
		{run(structs.TaskStateRunning, -time.Second), time.Time{}, false},
		{nil, since, false},
	} {
		if got := oldRun(c.st, c.since); got != c.want {
			t.Errorf("%+v since %v: %t, want %t", c.st, c.since, got, c.want)
		}
	}
}
