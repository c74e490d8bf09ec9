package server

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/analysis"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
)

// Defaults of Config.
const (
	// DefaultHeartbeatTTL is how long a node may stay silent before it is
	// marked down.
	DefaultHeartbeatTTL = 10 * time.Second
	// DefaultMaxHeartbeatsPerSecond is the heartbeat rate the leader aims
	// not to exceed: past DefaultHeartbeatTTL × 50 nodes (500), the TTL
	// grows with the number of nodes, as Nomad's.
	DefaultMaxHeartbeatsPerSecond = 50
	// DefaultMaxPlanAttempts bounds how often a worker re-plans an
	// evaluation whose placements the plan applier rejected.
	DefaultMaxPlanAttempts = 5
	// FailedFollowupDelay is how long after an evaluation failed its
	// delivery limit a follow-up evaluation runs, as Nomad's baseline.
	FailedFollowupDelay = time.Minute
	// MaxPlansFollowupDelay is how long after a worker gave up re-planning
	// its follow-up evaluation runs.
	MaxPlansFollowupDelay = time.Second
	// DefaultPlanEntryAllocs bounds one plan log entry to about half a
	// megabyte, so that placing 100,000 allocations is a stream of entries
	// that replicate while the next ones are written, rather than one entry
	// of a hundred megabytes that stalls heartbeats on every server.
	DefaultPlanEntryAllocs = 500
	// planEntriesInFlight is how many entries of one plan the applier
	// hands to Raft before waiting for the oldest.
	planEntriesInFlight = 4
)

// Sentinel errors.
var (
	// ErrNotLeader is returned by the methods that need the leader's
	// services (heartbeats) while Run is not running.
	ErrNotLeader = errors.New("server: not the leader")
	// ErrInvalidConfig is returned by New for an unusable Config.
	ErrInvalidConfig = errors.New("server: invalid config")
	// ErrNodeNotFound is returned for a node unknown to state; it wraps
	// state.ErrNotFound.
	ErrNodeNotFound = fmt.Errorf("server: node: %w", state.ErrNotFound)
	// ErrInvalidRequest is returned for a request missing what it needs.
	ErrInvalidRequest = errors.New("server: invalid request")
	// ErrPlanFenced is the answer to a plan submitted or applied after
	// leadership was lost.
	ErrPlanFenced = errors.New("server: plan rejected: leadership lost")
	// ErrUnexpectedResponse is returned when the state machine answers a
	// write with a response of the wrong type.
	ErrUnexpectedResponse = errors.New("server: unexpected state machine response")
)

// Raft is the replicated log as the leader's services see it: Apply
// encodes req as an entry of type t, waits until the local state machine
// has applied it, and returns the state machine's response and the
// entry's index. A request the state machine rejected comes back as the
// error. cluster.Server satisfies it.
type Raft interface {
	Apply(ctx context.Context, t fsm.MessageType, req any) (any, uint64, error)
}

// Enqueuer is a Raft that can also hand an entry over without waiting
// for it: the returned function waits as Apply does. Entries enqueued by
// one goroutine are appended in call order. cluster.Server satisfies it;
// the plan applier uses it to keep the entries of a large plan in flight
// together.
type Enqueuer interface {
	Enqueue(ctx context.Context, t fsm.MessageType, req any) func() (any, uint64, error)
}

// Config assembles a Leader.
type Config struct {
	// Raft writes entries; required.
	Raft Raft
	// State returns the current local store (the FSM's, which a snapshot
	// restore replaces); required.
	State func() *state.Store
	// Logger defaults to a null logger.
	Logger hclog.Logger
	// Clock is shared by the broker, heartbeats and the deployment
	// watcher; defaults to SystemClock.
	Clock Clock
	// NumWorkers defaults to runtime.NumCPU().
	NumWorkers int
	// HeartbeatTTL is the least TTL a node is given (Nomad's
	// min_heartbeat_ttl); defaults to DefaultHeartbeatTTL.
	HeartbeatTTL time.Duration
	// MaxHeartbeatsPerSecond scales the TTL with the number of nodes: a
	// node is given max(HeartbeatTTL, nodes / MaxHeartbeatsPerSecond).
	// Defaults to DefaultMaxHeartbeatsPerSecond.
	MaxHeartbeatsPerSecond float64
	// HeartbeatGrace is added to the TTL given to every node, as Nomad's
	// heartbeat_grace (network and processing delays), and when leadership
	// is gained, so that no node is marked down because the leader moved.
	// Defaults to 10s + HeartbeatTTL.
	HeartbeatGrace time.Duration
	// MaxPlanAttempts defaults to DefaultMaxPlanAttempts.
	MaxPlanAttempts int
	// PlanEntryAllocs bounds the allocations (placed, updated or stopped)
	// of one plan log entry; a larger plan is committed as several entries.
	// Defaults to DefaultPlanEntryAllocs.
	PlanEntryAllocs int
	// NewID mints IDs; defaults to structs.GenerateUUID.
	NewID func() string
	// SchedulerTypes are the evaluation types workers serve; defaults to
	// service, batch, system and sysbatch.
	SchedulerTypes []string
	// MetricsInterval is how often the leader samples its gauges (the
	// broker's queues); defaults to DefaultMetricsInterval.
	MetricsInterval time.Duration
	// Events, when set, is the server's event buffer: the leader measures
	// rollout batches from it (metrics.go).
	Events *stream.Buffer
	// PrometheusAddress is the servers' analysis { prometheus_address }:
	// the provider of analyses that name no address; "" for none.
	PrometheusAddress string
	// AnalysisMeasure takes one analysis measurement for the deployment
	// watcher (website/rollouts.md, analysis runs); defaults to analysis.Measure. Tests
	// inject recorded values.
	AnalysisMeasure AnalysisMeasureFunc
}

// AnalysisMeasureFunc is analysis.Measure's signature.
type AnalysisMeasureFunc func(ctx context.Context, a *structs.Analysis, defaultAddress string, refs analysis.Refs, now time.Time) *structs.AnalysisMeasurement

func (c *Config) validate() error {
	if c.Raft == nil {
		return fmt.Errorf("%w: no Raft", ErrInvalidConfig)
	}
	if c.State == nil {
		return fmt.Errorf("%w: no State", ErrInvalidConfig)
	}
	if c.NumWorkers < 0 || c.HeartbeatTTL < 0 || c.HeartbeatGrace < 0 || c.MaxPlanAttempts < 0 || c.PlanEntryAllocs < 0 ||
		c.MaxHeartbeatsPerSecond < 0 {
		return fmt.Errorf("%w: negative setting", ErrInvalidConfig)
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.Clock == nil {
		c.Clock = SystemClock{}
	}
	if c.NumWorkers == 0 {
		c.NumWorkers = runtime.NumCPU()
	}
	if c.HeartbeatTTL == 0 {
		c.HeartbeatTTL = DefaultHeartbeatTTL
	}
	if c.MaxHeartbeatsPerSecond == 0 {
		c.MaxHeartbeatsPerSecond = DefaultMaxHeartbeatsPerSecond
	}
	if c.HeartbeatGrace == 0 {
		c.HeartbeatGrace = 10*time.Second + c.HeartbeatTTL
	}
	if c.MaxPlanAttempts == 0 {
		c.MaxPlanAttempts = DefaultMaxPlanAttempts
	}
	if c.PlanEntryAllocs == 0 {
		c.PlanEntryAllocs = DefaultPlanEntryAllocs
	}
	if c.NewID == nil {
		c.NewID = structs.GenerateUUID
	}
	if c.MetricsInterval <= 0 {
		c.MetricsInterval = DefaultMetricsInterval
	}
	if c.AnalysisMeasure == nil {
		c.AnalysisMeasure = analysis.Measure
	}
	if len(c.SchedulerTypes) == 0 {
		c.SchedulerTypes = []string{structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem, structs.JobTypeSysBatch}
	}
	return nil
}
