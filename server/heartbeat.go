package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// NodeHeartbeatMissed is the status description of a node marked down (or
// disconnected) by its heartbeat timer.
const NodeHeartbeatMissed = "node heartbeat missed"

// NodeDisconnectOver is the status description of a disconnected node
// marked down once its allocations' lost_after has passed.
const NodeDisconnectOver = "node disconnected longer than its allocations' lost_after"

// heartbeats keeps one timer per node on the leader's clock. A timer that
// fires marks its node down.
type heartbeats struct {
	l      *Leader
	mu     sync.Mutex
	t      *term
	timers map[string]*beat
}

// beat is one armed timer; its identity tells a stale firing apart.
type beat struct{ timer Timer }

func newHeartbeats(l *Leader) *heartbeats {
	return &heartbeats{l: l, timers: map[string]*beat{}}
}

// start arms TTL + grace for every node that is not down: no node is
// marked down because the leader changed. A disconnected node's timer
// runs to the end of its allocations' lost_after, counted from the time
// the old leader recorded in state (plus grace): a new leader goes on
// with it.
func (h *heartbeats) start(t *term) error {
	h.mu.Lock()
	h.t = t
	h.mu.Unlock()
	nodes, err := h.l.store().Snapshot().Nodes()
	if err != nil {
		return err
	}
	live := 0
	for _, n := range nodes {
		if n.Status != structs.NodeStatusDown {
			live++
		}
	}
	ttl := h.l.cfg.scaledTTL(live) + h.l.cfg.HeartbeatGrace
	snap := h.l.store().Snapshot()
	now := h.l.clock.Now()
	for _, n := range nodes {
		switch n.Status {
		case structs.NodeStatusDown:
		case structs.NodeStatusDisconnected:
			end, err := disconnectEnd(snap, n)
			if err != nil {
				return err
			}
			h.reset(n.ID, max(end.Sub(now), 0)+h.l.cfg.HeartbeatGrace)
		default:
			h.reset(n.ID, ttl)
		}
	}
	return nil
}

// maxLostAfter is the longest lost_after of the live allocations on the
// node (0: none tolerates a disconnection).
func maxLostAfter(snap *state.Snapshot, nodeID string) (time.Duration, error) {
	allocs, err := snap.AllocsByNode(nodeID)
	if err != nil {
		return 0, err
	}
	var longest time.Duration
	for _, a := range allocs {
		if a.TerminalStatus() {
			continue
		}
		longest = max(longest, a.Job.LookupTaskGroup(a.TaskGroup).LostAfterOf())
	}
	return longest, nil
}

// disconnectEnd is when a disconnected node's allocations are all past
// their lost_after: the node is marked down then.
func disconnectEnd(snap *state.Snapshot, n *structs.Node) (time.Time, error) {
	d, err := maxLostAfter(snap, n.ID)
	return time.Unix(0, n.StatusUpdatedAt).Add(d), err
}

// scaledTTL is the TTL given to a node when n nodes heartbeat: the
// configured minimum, or as long as n heartbeats take at
// MaxHeartbeatsPerSecond, whichever is longer.
func (c *Config) scaledTTL(n int) time.Duration {
	ttl := time.Duration(float64(n) / c.MaxHeartbeatsPerSecond * float64(time.Second))
	return max(ttl, c.HeartbeatTTL)
}

// ttl is the TTL to give a node now: scaled by the nodes with a timer,
// counting this one.
func (h *heartbeats) ttl(nodeID string) time.Duration {
	h.mu.Lock()
	n := len(h.timers)
	if _, ok := h.timers[nodeID]; !ok {
		n++
	}
	h.mu.Unlock()
	return h.l.cfg.scaledTTL(n)
}

// reset (re)arms a node's timer.
func (h *heartbeats) reset(nodeID string, ttl time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.t == nil {
		return
	}
	if old := h.timers[nodeID]; old != nil {
		old.timer.Stop()
	}
	b := &beat{}
	b.timer = h.l.clock.AfterFunc(ttl, func() { h.expired(nodeID, b) })
	h.timers[nodeID] = b
}

// arm (re)arms a node's timer after it was given ttl: the node is marked
// down only when silent for ttl plus HeartbeatGrace, as Nomad's
// heartbeat_grace, for network and processing delays (a leader busy with
// a burst of placements, a client slow to get a core) and elections.
func (h *heartbeats) arm(nodeID string, ttl time.Duration) {
	h.reset(nodeID, ttl+h.l.cfg.HeartbeatGrace)
}

// ensure arms a node's timer unless it has one.
func (h *heartbeats) ensure(nodeID string) {
	h.mu.Lock()
	_, ok := h.timers[nodeID]
	h.mu.Unlock()
	if !ok {
		h.arm(nodeID, h.ttl(nodeID))
	}
}

// clear stops a node's timer.
func (h *heartbeats) clear(nodeID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if old := h.timers[nodeID]; old != nil {
		old.timer.Stop()
		delete(h.timers, nodeID)
	}
}

// stopAll stops every timer; the term is ending.
func (h *heartbeats) stopAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, b := range h.timers {
		b.timer.Stop()
		delete(h.timers, id)
	}
	h.t = nil
}

// armed reports how many nodes have a timer.
func (h *heartbeats) armed() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.timers)
}

func (h *heartbeats) expired(nodeID string, b *beat) {
	h.mu.Lock()
	t := h.t
	// A timer replaced after it started firing is stale.
	current := h.timers[nodeID] == b
	if current {
		delete(h.timers, nodeID)
	}
	h.mu.Unlock()
	if t == nil || !current {
		return
	}
	t.spawn(func() {
		if err := h.l.markNodeDown(t.ctx, nodeID); err != nil && t.ctx.Err() == nil {
			h.l.logger.Error("marking node down", "node_id", nodeID, "error", err)
		}
	})
}

// NodeHeartbeat records that a node is alive and returns the TTL within
// which it must call again. Leader only (ErrNotLeader otherwise); a node
// unknown to state gets ErrNodeNotFound, and so does a node marked down or
// disconnected: it must register again (which makes it ready and has its
// client report its allocations again).
func (l *Leader) NodeHeartbeat(_ context.Context, nodeID string) (time.Duration, error) {
	t, err := l.term()
	if err != nil {
		return 0, err
	}
	n, err := l.store().Snapshot().NodeByID(nodeID)
	if err != nil {
		return 0, err
	}
	if n == nil {
		return 0, fmt.Errorf("%w: %s", ErrNodeNotFound, nodeID)
	}
	if n.Status == structs.NodeStatusDown || n.Status == structs.NodeStatusDisconnected {
		return 0, fmt.Errorf("%w: %s is %s and must register again", ErrNodeNotFound, nodeID, n.Status)
	}
	ttl := t.beats.ttl(nodeID)
	t.beats.arm(nodeID, ttl)
	return ttl, nil
}

// markNodeDown writes the node down, with one node-update evaluation per
// job that has live allocs on it and one per system job; the state
// machine marks its allocs lost. A node with live allocs whose group
// tolerates a disconnection (disconnect.lost_after) is written
// disconnected instead, its timer armed to the end of the longest
// lost_after; the state machine marks those allocs unknown and the others
// lost. When that timer fires the node goes down.
func (l *Leader) markNodeDown(ctx context.Context, nodeID string) error {
	snap := l.store().Snapshot()
	n, err := snap.NodeByID(nodeID)
	if err != nil || n == nil || n.Status == structs.NodeStatusDown {
		return err
	}
	now := l.clock.Now()
	status, desc := structs.NodeStatusDown, NodeHeartbeatMissed
	var wait time.Duration
	if n.Status == structs.NodeStatusDisconnected {
		end, err := disconnectEnd(snap, n)
		if err != nil {
			return err
		}
		if now.Before(end) {
			// Fired early (a leader's grace): wait for the rest.
			if t, err := l.term(); err == nil {
				t.beats.reset(nodeID, end.Sub(now))
			}
			return nil
		}
		desc = NodeDisconnectOver
	} else {
		longest, err := maxLostAfter(snap, nodeID)
		if err != nil {
			return err
		}
		if longest > 0 {
			status, wait = structs.NodeStatusDisconnected, longest
		}
	}
	c := n.Copy()
	c.Status = status
	evals, err := l.nodeEvals(snap, c, true)
	if err != nil {
		return err
	}
	req := &structs.NodeUpdateStatusRequest{
		NodeID: nodeID, Status: status, StatusDescription: desc,
		UpdatedAt: now.UnixNano(), Evals: evals,
	}
	if _, _, err = l.apply(ctx, fsm.NodeUpdateStatusRequestType, req); err != nil {
		return err
	}
	if status == structs.NodeStatusDisconnected {
		if t, err := l.term(); err == nil {
			t.beats.reset(nodeID, wait)
		}
	}
	return nil
}
