package client

import (
	"context"
	"time"
)

// networkReconcileTimeout bounds the removal of the namespaces no
// allocation owns at start.
const networkReconcileTimeout = 2 * time.Minute

// reconcileNetworks runs after restore, before any new allocation
// starts, as Nomad's client: the bridge namespaces (with their addresses
// and iptables rules) of allocations the client no longer runs — those
// that ended or were collected while it was down — are removed; those of
// the allocations it re-attached to are kept.
func (a *Agent) reconcileNetworks() {
	if a.networks == nil {
		return
	}
	live := func(allocID string) bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		e, ok := a.allocs[allocID]
		return ok && e.runner != nil
	}
	ctx, cancel := context.WithTimeout(a.ctx, networkReconcileTimeout)
	defer cancel()
	removed, err := a.networks.Reconcile(ctx, live)
	if len(removed) > 0 {
		a.logger.Info("removed the networks of allocations no longer running", "allocs", removed)
	}
	if err != nil {
		a.logger.Warn("removing the networks of allocations no longer running", "error", err)
	}
}
