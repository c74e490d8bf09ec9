// Package deployment watches rolling deployments on the leader.
//
// The package has a pure core and a thin shell. Decide takes an Observation
// (the deployment, its job versions, its allocations or the live figures the
// store keeps of them in the deployment, and the time) and returns
// a Decision: a new status and description, a promotion, a revert target,
// allocations to replace, whether the scheduler must run again, and WakeAt,
// the next deadline worth re-checking. Decide reads no clock and performs no
// I/O, so every rule of the rollout semantics is testable on explicit times.
//
// The operator verbs (Promote, Pause, Fail, SetAllocHealth) are pure as well:
// they validate a request against the deployment and produce the change.
//
// Watcher is the shell: it runs on the leader only, re-reads replicated state
// on every pass (the allocations only while one is unhealthy; see
// NeedsAllocs), wakes on state changes and on the earliest WakeAt through an
// injectable Clock, and writes each decision through a narrow Writer. Since
// every deadline lives in replicated state, a new leader resumes from state
// alone; a deadline that passed during the election fails at once.
package deployment
