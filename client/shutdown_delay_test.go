package client

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/structs"
)

// delayedAlloc is serviceAlloc with the group's and the task's
// shutdown_delay.
func delayedAlloc(id, node string, group, task time.Duration) *structs.Allocation {
	a := serviceAlloc(id, node, "", 0)
	a.Job.TaskGroups[0].ShutdownDelay = &group
	a.Job.TaskGroups[0].Tasks[0].ShutdownDelay = task
	return a
}

func eventAt(st *structs.TaskState, typ string) (time.Time, bool) {
	for _, e := range st.Events {
		if e.Type == typ {
			return time.Unix(0, e.Time), true
		}
	}
	return time.Time{}, false
}

// A stopped allocation waits its group's shutdown_delay, then each task
// its own, before the kill, as Nomad's (the servers dropped its services
// in the entry that stopped it); no_shutdown_delay skips both, even once
// the wait has begun.
func TestShutdownDelayWaitsBeforeTheKill(t *testing.T) {
	cases := []struct {
		name string
		// skipAt: when the stop is marked no_shutdown_delay (-1: never;
		// 0: with the stop itself).
		skipAt     time.Duration
		wantKilled time.Duration // after the stop
		wantEvent  string
	}{
		{"waits both delays", -1, 7 * time.Second, structs.TaskWaitingShuttingDownDelay},
		{"no_shutdown_delay", 0, 0, structs.TaskSkippingShutdownDelay},
		{"no_shutdown_delay during the group's delay", 3 * time.Second, 3 * time.Second, structs.TaskSkippingShutdownDelay},
		{"no_shutdown_delay during the task's delay", 6 * time.Second, 6 * time.Second, structs.TaskWaitingShuttingDownDelay},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newFakeServer()
				a, stop := startAgent(t, srv, t.TempDir())
				defer stop()
				synctest.Wait()
				srv.put(delayedAlloc("a1", a.NodeID(), 5*time.Second, 2*time.Second))
				time.Sleep(minHealthy)
				synctest.Wait()
				stoppedAt := time.Now()
				yes := true
				srv.change("a1", func(al *structs.Allocation) {
					al.DesiredStatus, al.DesiredDescription = structs.AllocDesiredStatusStop, structs.AllocNotNeeded
					if c.skipAt == 0 {
						al.DesiredTransition.NoShutdownDelay = &yes
					}
				})
				if c.skipAt > 0 {
					time.Sleep(c.skipAt)
					srv.change("a1", func(al *structs.Allocation) { al.DesiredTransition.NoShutdownDelay = &yes })
				}
				time.Sleep(10 * time.Second)
				synctest.Wait()
				got := srv.alloc("a1")
				st := got.TaskStates["srv"]
				if got.ClientStatus != structs.AllocClientStatusComplete || st == nil {
					t.Fatalf("alloc %s, task %+v", got.ClientStatus, st)
				}
				killing, ok := eventAt(st, structs.TaskKilling)
				if !ok || killing.Sub(stoppedAt) != c.wantKilled {
					t.Fatalf("killed %v after the stop, want %v (events %+v)", killing.Sub(stoppedAt), c.wantKilled, st.Events)
				}
				if _, ok := eventAt(st, c.wantEvent); !ok {
					t.Fatalf("no %q event: %+v", c.wantEvent, st.Events)
				}
			})
		})
	}
}

// A client that stops its tasks (it shuts down) does not wait the delays.
func TestShutdownDelayNotOnTheClientsStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		a, stop := startAgent(t, srv, t.TempDir())
		synctest.Wait()
		srv.put(delayedAlloc("a1", a.NodeID(), time.Minute, time.Minute))
		time.Sleep(minHealthy)
		synctest.Wait()
		start := time.Now()
		stop()
		if d := time.Since(start); d >= time.Minute {
			t.Fatalf("the client's stop took %v: it waited a shutdown delay", d)
		}
	})
}

// A task that exits during its shutdown delay is not signalled: its end
// is recorded, and it is dead, killed, without a "Killing" event.
func TestShutdownDelayTaskExitsMeanwhile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		a, stop := startAgent(t, srv, t.TempDir())
		defer stop()
		synctest.Wait()
		al := delayedAlloc("a1", a.NodeID(), 0, time.Minute)
		al.Job.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "10s"}
		srv.put(al)
		time.Sleep(minHealthy)
		synctest.Wait()
		srv.change("a1", func(al *structs.Allocation) {
			al.DesiredStatus, al.DesiredDescription = structs.AllocDesiredStatusStop, structs.AllocNotNeeded
		})
		time.Sleep(20 * time.Second)
		synctest.Wait()
		got := srv.alloc("a1")
		st := got.TaskStates["srv"]
		if got.ClientStatus != structs.AllocClientStatusComplete || st == nil || st.State != structs.TaskStateDead || st.Failed {
			t.Fatalf("alloc %s, task %+v", got.ClientStatus, st)
		}
		if _, ok := eventAt(st, structs.TaskKilling); ok {
			t.Fatalf("a task that exited during its delay was signalled: %+v", st.Events)
		}
		for _, typ := range []string{structs.TaskWaitingShuttingDownDelay, structs.TaskTerminated, structs.TaskKilled} {
			if _, ok := eventAt(st, typ); !ok {
				t.Fatalf("no %q event: %+v", typ, st.Events)
			}
		}
	})
}
