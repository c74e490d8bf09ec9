package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// NodeHeartbeatMissed is the status description of a node marked down by
// its heartbeat timer.
const NodeHeartbeatMissed = "node heartbeat missed"

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
// marked down because the leader changed.
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
	for _, n := range nodes {
		if n.Status != structs.NodeStatusDown {
			h.reset(n.ID, ttl)
		}
	}
	return nil
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

// ensure arms a node's timer unless it has one.
func (h *heartbeats) ensure(nodeID string) {
	h.mu.Lock()
	_, ok := h.timers[nodeID]
	h.mu.Unlock()
	if !ok {
		h.reset(nodeID, h.ttl(nodeID))
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
// unknown to state gets ErrNodeNotFound.
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
	ttl := t.beats.ttl(nodeID)
	t.beats.reset(nodeID, ttl)
	return ttl, nil
}

// markNodeDown writes the node down, with one node-update evaluation per
// job that has live allocs on it and one per system job; the state
// machine marks its allocs lost.
func (l *Leader) markNodeDown(ctx context.Context, nodeID string) error {
	snap := l.store().Snapshot()
	n, err := snap.NodeByID(nodeID)
	if err != nil || n == nil || n.Status == structs.NodeStatusDown {
		return err
	}
	evals, err := l.nodeEvals(snap, n, true)
	if err != nil {
		return err
	}
	req := &structs.NodeUpdateStatusRequest{
		NodeID: nodeID, Status: structs.NodeStatusDown, StatusDescription: NodeHeartbeatMissed,
		UpdatedAt: l.clock.Now().UnixNano(), Evals: evals,
	}
	_, _, err = l.apply(ctx, fsm.NodeUpdateStatusRequestType, req)
	return err
}
