// Package deployment watches rolling deployments on the leader.
//
// The package has a pure core and a thin shell. Decide takes an Observation
// (the deployment, its job versions, its allocations or the live figures the
// store keeps of them in the deployment, and the time) and returns
// a Decision: a new status and description, a promotion, a revert target,
// allocations to replace, whether the scheduler must run again, the rollout
// bookkeeping a pause records in the deployment (checkpoints reached,
// failures at the pause, when a checkpoint delay ends), and WakeAt, the next
// deadline worth re-checking. Decide reads no clock and performs no
// I/O, so every rule of the rollout semantics is testable on explicit times.
//
// The operator verbs (Promote, Pause, Fail, SetAllocHealth) are pure as well:
// they validate a request against the deployment and produce the change.
//
// Watcher is the shell: it runs on the leader only, re-reads replicated state
// on every pass (the allocations only while one is unhealthy, see
// NeedsAllocs; the job's allocations of every version only when a group sets
// max_unhealthy), wakes on state changes and on the earliest WakeAt through
// an injectable Clock, and writes each decision through a narrow Writer.
// Since every deadline lives in replicated state, a new leader resumes from
// state alone; a deadline that passed during the election fails at once, and
// a checkpoint delay that ended meanwhile resumes at once.
package deployment
