package client

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/structs"
)

func TestDisconnectStops(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	allocs := []disconnectable{{"b", time.Minute}, {"a", time.Minute}, {"c", 5 * time.Minute}, {"d", 2 * time.Minute}}
	for _, c := range []struct {
		now  time.Duration
		stop string
		wake time.Duration // 0: none
	}{
		{0, "", time.Minute},
		{time.Minute - 1, "", time.Minute},
		{time.Minute, "a,b", 2 * time.Minute},
		{3 * time.Minute, "a,b,d", 5 * time.Minute},
		{time.Hour, "a,b,c,d", 0},
	} {
		stop, wake := disconnectStops(allocs, t0, t0.Add(c.now))
		wantWake := time.Time{}
		if c.wake > 0 {
			wantWake = t0.Add(c.wake)
		}
		if strings.Join(stop, ",") != c.stop || !wake.Equal(wantWake) {
			t.Errorf("at +%v: stop %v wake %v, want %s %v", c.now, stop, wake, c.stop, wantWake)
		}
	}
	if stop, wake := disconnectStops(nil, t0, t0); stop != nil || !wake.IsZero() {
		t.Errorf("no allocs: %v %v", stop, wake)
	}
}

// entryState returns the task state the agent holds for an alloc.
func entryState(a *Agent, id, task string) *structs.TaskState {
	a.mu.Lock()
	e := a.allocs[id]
	a.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last.TaskStates[task]
}

// TestStopOnClientAfter: a client whose heartbeats stop getting through
// stops, stop_on_client_after after the last one that did, the allocs
// whose group asks for it (a Killing event saying why), and leaves the
// others running; the servers learn of it once they are back.
func TestStopOnClientAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		a, stop := startAgent(t, srv, t.TempDir())
		defer stop()
		synctest.Wait()
		d := time.Minute
		stops := serviceAlloc("a1", a.NodeID(), "", 0)
		stops.Job.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{StopOnClientAfter: &d}
		stays := serviceAlloc("a2", a.NodeID(), "", 1) // another job version: the agent shares equal ones
		srv.put(stops)
		srv.put(stays)
		time.Sleep(time.Second)
		synctest.Wait()
		srv.setDown(true)
		// The last heartbeat got through at most half a TTL ago.
		time.Sleep(d - srv.ttl/2 - time.Second)
		synctest.Wait()
		if s := entryState(a, "a1", "srv"); s.State != structs.TaskStateRunning {
			t.Fatalf("stopped before stop_on_client_after: %+v", s)
		}
		time.Sleep(srv.ttl)
		synctest.Wait()
		s := entryState(a, "a1", "srv")
		if s.State != structs.TaskStateDead {
			t.Fatalf("not stopped after stop_on_client_after: %+v", s)
		}
		var reason string
		for _, e := range s.Events {
			if e.Type == structs.TaskKilling {
				reason = e.KillReason
			}
		}
		if !strings.Contains(reason, "stop_on_client_after") {
			t.Fatalf("kill reason %q", reason)
		}
		if s := entryState(a, "a2", "srv"); s.State != structs.TaskStateRunning {
			t.Fatalf("an alloc without stop_on_client_after stopped: %+v", s)
		}
		srv.setDown(false)
		time.Sleep(MaxRetryInterval)
		synctest.Wait()
		if st := srv.alloc("a1").ClientStatus; st != structs.AllocClientStatusComplete {
			t.Fatalf("servers see %s", st)
		}
	})
}

// TestRegisterAgainReportsAllocs: a node the servers stopped hearing
// from (and marked its allocs unknown) registers again and reports every
// alloc at once, so that the servers see them run.
func TestRegisterAgainReportsAllocs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		a, stop := startAgent(t, srv, t.TempDir())
		defer stop()
		synctest.Wait()
		srv.put(serviceAlloc("a1", a.NodeID(), "", 0))
		time.Sleep(time.Second)
		synctest.Wait()
		// The servers mark it unknown without telling the client (the
		// alloc's index does not move), and forget the node's heartbeat.
		srv.mu.Lock()
		srv.allocs["a1"].ClientStatus = structs.AllocClientStatusUnknown
		srv.mu.Unlock()
		srv.forget(a.NodeID())
		time.Sleep(srv.ttl)
		synctest.Wait()
		if r, _ := srv.counts(); r != 2 {
			t.Fatalf("registers %d", r)
		}
		if st := srv.alloc("a1").ClientStatus; st != structs.AllocClientStatusRunning {
			t.Fatalf("servers see %s after the registration", st)
		}
	})
}
