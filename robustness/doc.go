// Package robustness runs three drover servers and a client as real
// processes, injects faults (partitions, pauses, crashes) while a rollout
// and a register workload run, and checks the recorded history: every
// acknowledged write survives, the history of the register is
// linearizable, and the rollout completes once the faults heal. See
// website/robustness.md.
package robustness
