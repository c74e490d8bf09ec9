package allocrunner

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

func maxRunAlloc(d time.Duration, tasks ...*structs.Task) *structs.Allocation {
	a := testAlloc(structs.JobTypeBatch, tasks...)
	a.Job.TaskGroups[0].MaxRunDuration = &d
	return a
}

// TestMaxRunDurationStopsAlloc: at the group's max_run_duration every
// task is killed, each with a "Killing" event giving Nomad's reason, and
// the allocation completes (not failed: it is not rescheduled) with
// Nomad's description.
func TestMaxRunDurationStopsAlloc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		rec := &recorder{}
		alloc := maxRunAlloc(time.Minute, mockTask("work", nil), mockTask("side", nil))
		ar := newRunner(t, t.TempDir(), c, mock.New(mock.Options{Clock: c}), alloc, rec)
		ar.Run()
		synctest.Wait()
		c.Advance(time.Minute - time.Nanosecond)
		synctest.Wait()
		if u := rec.last(); u.ClientStatus != structs.AllocClientStatusRunning || u.ClientDescription != "" {
			t.Fatalf("before max_run_duration: %s %q", u.ClientStatus, u.ClientDescription)
		}
		c.Advance(time.Nanosecond)
		<-ar.Done()
		u := rec.last()
		if u.ClientStatus != structs.AllocClientStatusComplete || u.ClientDescription != structs.AllocMaxRunDurationExceeded {
			t.Fatalf("after: %s %q", u.ClientStatus, u.ClientDescription)
		}
		for name, s := range u.TaskStates {
			var killing *structs.TaskEvent
			for _, e := range s.Events {
				if e.Type == structs.TaskKilling {
					killing = e
				}
			}
			if s.Failed || killing == nil || killing.KillReason != structs.AllocMaxRunDurationExceeded ||
				killing.DisplayMessage != structs.AllocMaxRunDurationExceeded || s.Events[len(s.Events)-1].Type != structs.TaskKilled {
				t.Fatalf("task %s: failed=%v events %+v", name, s.Failed, s.Events)
			}
		}
	})
}

// TestMaxRunDurationCountsAcrossClientRestart: a client that restarts
// goes on counting from when the allocation first ran.
func TestMaxRunDurationCountsAcrossClientRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		data := t.TempDir()
		alloc := maxRunAlloc(time.Minute, mockTask("work", nil))
		ar := newRunner(t, data, c, mock.New(mock.Options{Clock: c}), alloc, &recorder{})
		ar.Run()
		synctest.Wait()
		c.Advance(40 * time.Second)
		synctest.Wait()
		ar.Detach()
		<-ar.Done()
		c.Advance(10 * time.Second)
		rec := &recorder{}
		ar2 := newRunner(t, data, c, mock.New(mock.Options{Clock: c}), alloc, rec)
		ar2.Run()
		synctest.Wait()
		c.Advance(10*time.Second - time.Nanosecond)
		synctest.Wait()
		if u := rec.last(); u.ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("stopped early: %s", u.ClientStatus)
		}
		c.Advance(time.Nanosecond)
		<-ar2.Done()
		if u := rec.last(); u.ClientDescription != structs.AllocMaxRunDurationExceeded {
			t.Fatalf("not stopped at 60s of run: %+v", u)
		}
	})
}

// TestMaxRunDurationNotReached: an allocation whose tasks finish first
// completes as usual.
func TestMaxRunDurationNotReached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(epoch)
		rec := &recorder{}
		alloc := maxRunAlloc(time.Minute, mockTask("work", map[string]any{"run_for": "10s"}))
		ar := newRunner(t, t.TempDir(), c, mock.New(mock.Options{Clock: c}), alloc, rec)
		ar.Run()
		synctest.Wait()
		c.Advance(10 * time.Second)
		<-ar.Done()
		synctest.Wait()
		if u := rec.last(); u.ClientStatus != structs.AllocClientStatusComplete || u.ClientDescription != "" {
			t.Fatalf("%s %q", u.ClientStatus, u.ClientDescription)
		}
		if c.Pending() != 0 {
			t.Fatalf("%d timers left armed", c.Pending())
		}
	})
}
