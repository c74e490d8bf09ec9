// Package scheduler decides what should run where.
//
// It has two pure halves and no I/O:
//
//   - Reconcile compares a job with its allocations, its latest deployment
//     and the nodes, and returns a Plan: allocations to place (by name and
//     index, not yet on a node), to stop, and to update in place; the
//     deployment to create or update; follow-up evaluations for delayed
//     reschedules; and per-group counts for `job plan`. Time and IDs are
//     inputs, so the same Input always yields the same Plan.
//   - Placer finds nodes for a Plan's placements: feasibility (readiness,
//     datacenter, node pool, constraints, drivers), then scoring (bin
//     packing, spread, anti-affinity, node affinity) among a bounded number
//     of candidates (every fitting one when the group has affinities),
//     with per-node usage kept as placements are made. Failures are
//     explained per group as Nomad's AllocationMetric. NewPlacerLazy needs
//     only the job's allocations and a function that returns one node's,
//     called the first time a placement needs that node's usage.
//
// The eval broker, workers and plan applier wrap these functions; nothing
// here reads state, Raft or HTTP.
package scheduler
