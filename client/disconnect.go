package client

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/structs"
)

// A client that cannot heartbeat stops, on its own, the allocations of
// groups with stop_on_client_after (or stop_after_client_disconnect) once
// that long has passed since its last heartbeat got through, as Nomad's:
// the servers have marked them lost by then and replace them only after
// the same time, so the two never run at once.

// disconnectable is an allocation whose group stops it when its client is
// cut off: its ID and its stop_on_client_after.
type disconnectable struct {
	id    string
	after time.Duration
}

// disconnectStops is the rule: of allocs, those whose stop_on_client_after
// has passed at now since the last heartbeat that got through (lastOK),
// in ID order, and the earliest time another one's will (zero: none).
func disconnectStops(allocs []disconnectable, lastOK, now time.Time) (stop []string, wake time.Time) {
	for _, a := range allocs {
		due := lastOK.Add(a.after)
		if !now.Before(due) {
			stop = append(stop, a.id)
			continue
		}
		if wake.IsZero() || due.Before(wake) {
			wake = due
		}
	}
	sort.Strings(stop)
	return stop, wake
}

// stopsOnDisconnect reports whether alloc's group has a
// stop_on_client_after.
func stopsOnDisconnect(alloc *structs.Allocation) bool {
	_, ok := alloc.Job.LookupTaskGroup(alloc.TaskGroup).StopOnClientAfterOf()
	return ok
}

// countDisconnects adds delta (1: alloc joins a.allocs or takes its job;
// -1: it leaves, or leaves the job) to the count of the agent's allocs
// whose group has a stop_on_client_after, when alloc's has. Called with
// a.mu held, where those changes are made.
func (a *Agent) countDisconnects(alloc *structs.Allocation, delta int) {
	if stopsOnDisconnect(alloc) {
		a.disconnecting += delta
	}
}

// stopDisconnected applies disconnectStops to the allocations the agent
// runs and returns when to look again (zero: no need).
func (a *Agent) stopDisconnected(lastOK time.Time) time.Time {
	a.mu.Lock()
	if a.disconnecting == 0 {
		// None of the allocs has a stop_on_client_after (the common
		// case): nothing to look through each time allocs are added.
		a.mu.Unlock()
		return time.Time{}
	}
	var cands []disconnectable
	var byID map[string]*allocEntry
	for id, e := range a.allocs {
		e.mu.Lock()
		// A killed or finished alloc (most of a busy node's) is not
		// looked up in its job.
		live := e.runner != nil && !e.killed
		var d time.Duration
		var ok bool
		if live {
			d, ok = e.alloc.Job.LookupTaskGroup(e.alloc.TaskGroup).StopOnClientAfterOf()
		}
		e.mu.Unlock()
		if ok && live {
			cands = append(cands, disconnectable{id: id, after: d})
			if byID == nil {
				byID = map[string]*allocEntry{}
			}
			byID[id] = e
		}
	}
	a.mu.Unlock()
	stop, wake := disconnectStops(cands, lastOK, a.clock.Now())
	for _, id := range stop {
		e := byID[id]
		e.mu.Lock()
		if e.killed {
			e.mu.Unlock()
			continue
		}
		e.killed = true
		d, _ := e.alloc.Job.LookupTaskGroup(e.alloc.TaskGroup).StopOnClientAfterOf()
		e.mu.Unlock()
		a.logger.Warn("stopping alloc: no heartbeat got through for its stop_on_client_after", "alloc_id", id, "stop_on_client_after", d)
		e.stopTracker()
		e.runner.KillFor(structs.TaskKilling, fmt.Sprintf("client disconnected for longer than stop_on_client_after (%s)", d))
	}
	return wake
}

// heartbeatOK records that a heartbeat or registration got through at t.
func (a *Agent) heartbeatOK(t time.Time) {
	a.mu.Lock()
	a.lastOK = t
	a.mu.Unlock()
}

// disconnectLoop stops the allocations whose stop_on_client_after has
// passed since the last heartbeat that got through: it sleeps until the
// earliest such time (or until allocations are added) and decides again
// with the latest heartbeat, so a heartbeat that got through meanwhile
// only puts the time off.
func (a *Agent) disconnectLoop(ctx context.Context) {
	for {
		a.mu.Lock()
		lastOK := a.lastOK
		a.mu.Unlock()
		wake := a.stopDisconnected(lastOK)
		var timer clock.Timer
		var fired <-chan time.Time
		if !wake.IsZero() {
			timer = a.clock.NewTimer(wake.Sub(a.clock.Now()))
			fired = timer.C()
		}
		select {
		case <-ctx.Done():
		case <-a.allocsAdded:
		case <-fired:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// reportAll queues every allocation's state again: a node that registers
// again may have been disconnected, its allocations marked unknown, and
// the servers learn from these reports that they run (or not).
func (a *Agent) reportAll() {
	a.reporter.forget("") // every report in full
	a.mu.Lock()
	entries := make([]*allocEntry, 0, len(a.allocs))
	for _, e := range a.allocs {
		entries = append(entries, e)
	}
	a.mu.Unlock()
	for _, e := range entries {
		if !e.isCollecting() {
			e.report()
		}
	}
}
