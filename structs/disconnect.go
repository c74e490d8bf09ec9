package structs

import "time"

// Reconcile options of the disconnect block: which of an allocation that
// reconnects and its replacement keeps running, as Nomad's.
const (
	ReconcileBestScore       = "best_score"
	ReconcileKeepOriginal    = "keep_original"
	ReconcileKeepReplacement = "keep_replacement"
	ReconcileLongestRunning  = "longest_running"
)

// DisconnectStrategy is a group's disconnect block (Nomad 1.8+), or its
// older max_client_disconnect and stop_after_client_disconnect.
type DisconnectStrategy struct {
	// LostAfter is how long the servers keep the allocations of a node
	// that misses its heartbeats "unknown" (the node "disconnected")
	// before they are lost; 0: lost at once.
	LostAfter time.Duration
	// StopOnClientAfter, when set, is how long a client that cannot
	// heartbeat keeps the group's allocations running before it stops
	// them itself; the servers replace them only once that has passed.
	StopOnClientAfter *time.Duration `json:",omitempty"`
	// Replace places a replacement while an allocation is unknown. When
	// false the allocation is never replaced for its node's absence: it
	// stays unknown (even once lost_after has passed or the node is down)
	// until the node comes back or it is stopped.
	Replace bool
	// Reconcile picks which of a reconnected allocation and its
	// replacement keeps running (a Reconcile* option).
	Reconcile string
}

// Copy returns a deep copy.
func (d *DisconnectStrategy) Copy() *DisconnectStrategy {
	if d == nil {
		return nil
	}
	c := *d
	if d.StopOnClientAfter != nil {
		v := *d.StopOnClientAfter
		c.StopOnClientAfter = &v
	}
	return &c
}

// LostAfterOf returns how long an allocation of the group stays unknown
// when its node disconnects (0: lost at once).
func (tg *TaskGroup) LostAfterOf() time.Duration {
	if tg == nil || tg.Disconnect == nil || tg.Disconnect.LostAfter < 0 {
		return 0
	}
	return tg.Disconnect.LostAfter
}

// StaysUnknown reports whether an allocation of the group is never
// replaced when its node disconnects or goes down (disconnect.replace =
// false): it stays "unknown" until the node comes back or it is stopped.
func (tg *TaskGroup) StaysUnknown() bool {
	return tg != nil && tg.Disconnect != nil && !tg.Disconnect.Replace
}

// StopOnClientAfterOf returns the group's stop_on_client_after and
// whether it has one.
func (tg *TaskGroup) StopOnClientAfterOf() (time.Duration, bool) {
	if tg == nil || tg.Disconnect == nil || tg.Disconnect.StopOnClientAfter == nil {
		return 0, false
	}
	return max(*tg.Disconnect.StopOnClientAfter, 0), true
}

// AllocState is one change of an allocation's field the servers record
// with its time (Nomad's AllocState): the client status turning
// "unknown" when its node disconnects, and back when it reconnects.
type AllocState struct {
	Field string
	Value string
	Time  time.Time
}

// AllocStateFieldClientStatus names the client status in AllocStates.
const AllocStateFieldClientStatus = "ClientStatus"

// AppendClientStatus records that the allocation's client status became
// status at t.
func (a *Allocation) AppendClientStatus(status string, t time.Time) {
	a.AllocStates = append(a.AllocStates[:len(a.AllocStates):len(a.AllocStates)],
		&AllocState{Field: AllocStateFieldClientStatus, Value: status, Time: t})
}

// UnknownIntervals returns the times the allocation's client status was
// "unknown", as [start, end) pairs; the end of an interval still open is
// the zero time.
func (a *Allocation) UnknownIntervals() [][2]time.Time {
	var out [][2]time.Time
	open := false
	for _, s := range a.AllocStates {
		if s == nil || s.Field != AllocStateFieldClientStatus {
			continue
		}
		switch {
		case s.Value == AllocClientStatusUnknown && !open:
			out = append(out, [2]time.Time{s.Time})
			open = true
		case s.Value != AllocClientStatusUnknown && open:
			out[len(out)-1][1] = s.Time
			open = false
		}
	}
	return out
}

// LastClientStatusAt returns when the allocation's client status last
// became status, as AllocStates record it.
func (a *Allocation) LastClientStatusAt(status string) (time.Time, bool) {
	for i := len(a.AllocStates) - 1; i >= 0; i-- {
		if s := a.AllocStates[i]; s != nil && s.Field == AllocStateFieldClientStatus && s.Value == status {
			return s.Time, true
		}
	}
	return time.Time{}, false
}
