// Package analysis measures a rollout's analyses (ROLLOUT.md part E): one
// instant query against the provider, its runtime references substituted,
// and the outcome of the block's success and failure expressions over the
// result. The deployment watcher decides what runs gate; the leader calls
// Measure and writes the measurement through Raft.
package analysis

import (
	"context"
	"time"

	"github.com/droverhq/drover/structs"
)

// Refs are the runtime references a query may name.
type Refs struct {
	JobName       string // ${job.name}
	JobVersion    uint64 // ${job.version}: the version being rolled out
	StableVersion uint64 // ${stable.version}: the version it replaces
	Group         string // ${group.name}
	DeploymentID  string // ${deployment.id}
	Zone          string // ${zone}: the current zone of a zone rollout, else ""
}

// Measure takes one measurement of a at now (the leader's stamp).
// defaultAddress is the servers' analysis { prometheus_address }, used
// when a names none. It never fails: an unreachable provider, an HTTP or
// PromQL error, a timeout, an empty result, NaN, or an expression that
// does not give a bool is a measurement with Outcome "error" and its
// message.
func Measure(ctx context.Context, a *structs.Analysis, defaultAddress string, refs Refs, now time.Time) *structs.AnalysisMeasurement {
	return &structs.AnalysisMeasurement{At: now, Outcome: structs.AnalysisOutcomeError, Error: "analysis: not built yet"}
}
