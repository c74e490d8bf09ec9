package structs

import "fmt"

// SchedulerConfiguration is the cluster's scheduler configuration, in
// Nomad's shape (api.SchedulerConfiguration), replicated through Raft
// (SchedulerSetConfigRequest) so that every leader schedules with it.
// What drover does with each field:
//
//   - SchedulerAlgorithm: "binpack" ranks the nodes that fit by how full
//     they would be, "spread" by how empty; "" is binpack.
//   - MemoryOversubscriptionEnabled: a task's memory_max is honoured only
//     when true; otherwise it is ignored (the task gets memory) and job
//     registration warns, as Nomad. Drover's default is true (Nomad's is
//     false): drover honoured memory_max before the setting existed.
//   - RejectJobRegistration: job registration, dispatch and scaling are
//     refused, except with a management token; with ACLs off every caller
//     is management, so nothing is refused (as Nomad).
//   - PauseEvalBroker: the leader's scheduler workers take no evaluation
//     until it is false again; evaluations wait in the broker.
//   - PreemptionConfig: stored and shown; drover does not preempt
//     allocations, whatever it says.
//   - NodeLimitForFeasibilityChecks: stored and shown; drover's scheduler
//     considers every feasible node.
type SchedulerConfiguration struct {
	SchedulerAlgorithm            string
	PreemptionConfig              PreemptionConfig
	MemoryOversubscriptionEnabled bool
	RejectJobRegistration         bool
	PauseEvalBroker               bool
	NodeLimitForFeasibilityChecks uint
	CreateIndex                   uint64
	ModifyIndex                   uint64
}

// PreemptionConfig is Nomad's per-scheduler preemption switches (stored,
// not honoured: drover does not preempt).
type PreemptionConfig struct {
	SystemSchedulerEnabled   bool
	SysBatchSchedulerEnabled bool
	BatchSchedulerEnabled    bool
	ServiceSchedulerEnabled  bool
}

// DefaultSchedulerConfiguration is the configuration of a cluster where
// none was ever written: binpack, memory oversubscription on (drover's
// default, see SchedulerConfiguration), no preemption.
func DefaultSchedulerConfiguration() SchedulerConfiguration {
	return SchedulerConfiguration{SchedulerAlgorithm: "binpack", MemoryOversubscriptionEnabled: true}
}

// Spread reports whether the scheduler ranks nodes by spread.
func (c *SchedulerConfiguration) Spread() bool {
	return c != nil && c.SchedulerAlgorithm == "spread"
}

// Validate checks the configuration as Nomad's servers do (their text).
func (c *SchedulerConfiguration) Validate() error {
	switch c.SchedulerAlgorithm {
	case "", "binpack", "spread":
		return nil
	}
	return fmt.Errorf("invalid scheduler algorithm: %v", c.SchedulerAlgorithm)
}

// SchedulerSetConfigRequest replaces the scheduler configuration; with
// CAS, only if the stored one's ModifyIndex is still Config.ModifyIndex
// (0: none stored yet).
type SchedulerSetConfigRequest struct {
	Config SchedulerConfiguration
	CAS    bool
}

// ErrJobRegistrationDisabled is Nomad's text for a registration, dispatch
// or scaling refused by RejectJobRegistration.
const ErrJobRegistrationDisabled = "Job registration, dispatch, and scale are disabled by the scheduler configuration"
