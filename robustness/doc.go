// Package robustness runs three drover servers and a client as real
// processes, injects faults (partitions, lossy links, pauses, crashes,
// full disks) while rollouts and a register workload run, and checks the
// recorded history: every acknowledged write survives, the history of the
// register is linearizable, the rollout's invariants hold at every sample,
// the servers converge after every heal, and the rollouts complete once
// the faults heal. It also soaks a dev agent and a cluster with hundreds
// of rollouts and checks that their state stays bounded. See
// website/reliability.md.
package robustness
