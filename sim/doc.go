// Package sim simulates a fleet of client nodes in one process and
// measures drover at scale.
//
// A Fleet runs N client agents (package client, the same code as a real
// client) that each register through the servers' HTTP API as their own
// node, heartbeat, watch their allocations and report status and
// deployment health. They run tasks with the mock driver only (no
// processes) and share one HTTP connection pool and one mock driver, so
// that a node costs little memory.
//
// Servers starts the servers a scenario runs against: one `drover agent
// -dev` process, or three `drover agent -server` processes on loopback.
// The scenarios (Place, Rollout, Churn, Failover) submit jobs through the
// HTTP API, measure, and return a Result that is written as JSON and
// printed as a table.
//
// Simulated nodes carry meta.sim = "true" and the scenarios' jobs are
// constrained to it, so that a dev agent's own client gets none of their
// allocations.
package sim
