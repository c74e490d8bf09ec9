package structs

import "time"

// Migrate defaults, as Nomad's.
const (
	DefaultMigrateMaxParallel     = 1
	DefaultMigrateHealthCheck     = UpdateHealthCheckChecks
	DefaultMigrateMinHealthyTime  = 10 * time.Second
	DefaultMigrateHealthyDeadline = 5 * time.Minute
)

// MigrateStrategy is a group's merged, defaulted migrate block: how its
// allocations move off a draining node (website/jobspec/migrate.md).
// MaxParallel allocations of the group move at once, across every
// draining node; each replacement is placed first and the old allocation
// stops once the replacement is healthy by HealthCheck ("checks" or
// "task_states") for MinHealthyTime, within HealthyDeadline. Service jobs
// only; nil for other job types.
type MigrateStrategy struct {
	MaxParallel     int
	HealthCheck     string
	MinHealthyTime  time.Duration
	HealthyDeadline time.Duration
}

// DefaultMigrateStrategy returns the defaults every service group gets
// when nothing is written.
func DefaultMigrateStrategy() *MigrateStrategy {
	return &MigrateStrategy{
		MaxParallel:     DefaultMigrateMaxParallel,
		HealthCheck:     DefaultMigrateHealthCheck,
		MinHealthyTime:  DefaultMigrateMinHealthyTime,
		HealthyDeadline: DefaultMigrateHealthyDeadline,
	}
}

// Copy returns a copy.
func (m *MigrateStrategy) Copy() *MigrateStrategy {
	if m == nil {
		return nil
	}
	c := *m
	return &c
}

// Parallel returns how many of the group's allocations may move at once:
// MaxParallel, or the default when m is nil. 0, as in Nomad, moves nothing
// before the drain's deadline.
func (m *MigrateStrategy) Parallel() int {
	if m == nil {
		return DefaultMigrateMaxParallel
	}
	return max(0, m.MaxParallel)
}

// HealthStrategy returns the strategy a client's health tracker judges a
// migrated allocation by (one that belongs to no deployment): the migrate
// block's health_check, min_healthy_time and healthy_deadline.
func (m *MigrateStrategy) HealthStrategy() *UpdateStrategy {
	if m == nil {
		m = DefaultMigrateStrategy()
	}
	return &UpdateStrategy{
		MaxParallel: m.Parallel(), HealthCheck: m.HealthCheck,
		MinHealthyTime: m.MinHealthyTime, HealthyDeadline: m.HealthyDeadline,
	}
}
