package taskrunner

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

// blockedHook is a template hook whose first render never comes (a
// variable the task may not read): its Prestart waits for its context, as
// client/template.Manager's does.
type blockedHook struct {
	entered chan struct{}
	stopped bool
}

func (b *blockedHook) Prestart(ctx context.Context) (map[string]string, error) {
	close(b.entered)
	<-ctx.Done()
	return nil, ctx.Err()
}
func (b *blockedHook) Stop() { b.stopped = true }

// TestDetachDuringTemplatePrestart: a client that shuts down detaches its
// runners; one waiting for its templates' first render stops at once
// (before, it waited out the render timeout and held the agent's shutdown
// up), the task neither started nor marked dead or failed: the next
// client starts it.
func TestDetachDuringTemplatePrestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		d := &envDriver{Driver: mock.New(mock.Options{Clock: c})}
		hook := &blockedHook{entered: make(chan struct{})}
		tr, _ := templateRunner(t, c, d, nil)
		tr.cfg.Templates = func(*TaskRunner) (TemplateHook, error) { return hook, nil }
		tr.Run()
		<-hook.entered
		tr.Detach()
		<-tr.Done()
		st := tr.State()
		if st.State != structs.TaskStatePending || st.Failed || len(d.envs) != 0 {
			t.Fatalf("after the detach: %s failed=%v starts=%d (%s)", st.State, st.Failed, len(d.envs), types(st))
		}
		for _, e := range st.Events {
			if e.Type == structs.TemplateEventType || e.Type == structs.TaskDriverFailure {
				t.Fatalf("the detach was recorded as a failure: %s %q", e.Type, e.DisplayMessage)
			}
		}
		if !hook.stopped {
			t.Error("the hook was not stopped")
		}
	})
}

// TestKillDuringTemplatePrestart: a kill while the templates wait for
// their first render ends the wait; the task is dead, killed before it
// started.
func TestKillDuringTemplatePrestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		d := &envDriver{Driver: mock.New(mock.Options{Clock: c})}
		hook := &blockedHook{entered: make(chan struct{})}
		tr, _ := templateRunner(t, c, d, nil)
		tr.cfg.Templates = func(*TaskRunner) (TemplateHook, error) { return hook, nil }
		tr.Run()
		<-hook.entered
		tr.Kill()
		<-tr.Done()
		st := tr.State()
		last := st.Events[len(st.Events)-1]
		if st.State != structs.TaskStateDead || len(d.envs) != 0 || last.Type != structs.TaskKilled {
			t.Fatalf("after the kill: %s starts=%d (%s)", st.State, len(d.envs), types(st))
		}
	})
}
