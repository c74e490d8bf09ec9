package server

import "sync/atomic"

// Stats counts the leader's work since New, across terms.
type Stats struct {
	// EvalsProcessed counts evaluations a worker finished (acked).
	EvalsProcessed uint64
	// PlansApplied counts plans the applier committed.
	PlansApplied uint64
	// PlacementsAccepted and PlacementsRejected count the applier's
	// verdicts on placements.
	PlacementsAccepted uint64
	PlacementsRejected uint64
}

type counters struct {
	evals, plans, accepted, rejected atomic.Uint64
}

// Stats returns the leader's counters.
func (l *Leader) Stats() Stats {
	return Stats{
		EvalsProcessed:     l.stats.evals.Load(),
		PlansApplied:       l.stats.plans.Load(),
		PlacementsAccepted: l.stats.accepted.Load(),
		PlacementsRejected: l.stats.rejected.Load(),
	}
}
