package agent

import (
	"context"
	"net/http"
	"time"

	metrics "github.com/hashicorp/go-metrics/compat"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
	"github.com/droverhq/drover/telemetry"
)

// The agent's own figures (website/api/metrics.md), sampled every
// telemetry.collection_interval: on a server, what its copy of the
// replicated state holds (deployments and allocations by status, jobs by
// status, the running rollouts' progress), its event stream and whether
// it leads; on a client, its allocations. The state's figures are the
// same on every server (aggregate them with max, not sum): they are read
// from each server's copy, so that they neither vanish nor go stale when
// the leader changes.

// openTelemetry sets the process's metrics up (the first agent of a
// process does; see telemetry.Setup).
func (a *Agent) openTelemetry() error {
	t, err := telemetry.Setup(telemetry.Config{PrometheusMetrics: a.cfg.PrometheusMetrics, CollectionInterval: a.cfg.CollectionInterval})
	if err != nil {
		return err
	}
	a.telemetry = t
	return nil
}

// metricsHandler serves /v1/metrics on an agent without a server (a
// server's API serves it as one of its routes).
func (a *Agent) metricsHandler() http.Handler { return a.telemetry.Handler() }

// stateFigures counts what a snapshot holds.
type stateFigures struct {
	deployments map[string]int
	allocs      map[string]int
	jobs        map[string]int
	// the running and paused deployments' groups, summed
	desired, placed, healthy, unhealthy int
}

var (
	deploymentStatuses = []string{structs.DeploymentStatusRunning, structs.DeploymentStatusPaused, structs.DeploymentStatusSuccessful,
		structs.DeploymentStatusFailed, structs.DeploymentStatusCancelled,
		structs.DeploymentStatusPending, structs.DeploymentStatusBlocked}
	allocStatuses = []string{structs.AllocClientStatusPending, structs.AllocClientStatusRunning, structs.AllocClientStatusComplete,
		structs.AllocClientStatusFailed, structs.AllocClientStatusLost, structs.AllocClientStatusUnknown}
	jobStatuses = []string{structs.JobStatusPending, structs.JobStatusRunning, structs.JobStatusDead}
)

func countState(snap *state.Snapshot) (stateFigures, error) {
	f := stateFigures{deployments: map[string]int{}, allocs: map[string]int{}, jobs: map[string]int{}}
	deps, err := snap.Deployments()
	if err != nil {
		return f, err
	}
	for _, d := range deps {
		f.deployments[d.Status]++
		if !d.Active() {
			continue
		}
		for _, g := range d.TaskGroups {
			if g == nil {
				continue
			}
			f.desired += g.DesiredTotal
			f.placed += g.PlacedAllocs
			f.healthy += g.LiveHealthyAllocs
			f.unhealthy += g.UnhealthyAllocs
		}
	}
	allocs, err := snap.Allocs()
	if err != nil {
		return f, err
	}
	for _, al := range allocs {
		f.allocs[al.ClientStatus]++
	}
	jobs, err := snap.Jobs()
	if err != nil {
		return f, err
	}
	for _, j := range jobs {
		f.jobs[j.Status]++
	}
	return f, nil
}

func emitStateFigures(f stateFigures) {
	for _, s := range deploymentStatuses {
		metrics.SetGaugeWithLabels([]string{"drover", "deployments"}, float32(f.deployments[s]), []metrics.Label{{Name: "status", Value: s}})
	}
	for _, s := range allocStatuses {
		metrics.SetGaugeWithLabels([]string{"drover", "allocations"}, float32(f.allocs[s]), []metrics.Label{{Name: "client_status", Value: s}})
	}
	for _, s := range jobStatuses {
		metrics.SetGauge([]string{"nomad", "job_status", s}, float32(f.jobs[s]))
	}
	metrics.SetGauge([]string{"drover", "rollout", "desired"}, float32(f.desired))
	metrics.SetGauge([]string{"drover", "rollout", "placed"}, float32(f.placed))
	metrics.SetGauge([]string{"drover", "rollout", "healthy"}, float32(f.healthy))
	metrics.SetGauge([]string{"drover", "rollout", "unhealthy"}, float32(f.unhealthy))
}

// countCostRatio bounds the state's counting (countState) to one part in
// that many of one core's time.
const countCostRatio = 50

// runMetrics samples the agent's gauges until ctx ends. The state is
// counted again only when one of the tables counted changed, and no more
// often than countCostRatio allows.
func (a *Agent) runMetrics(ctx context.Context) {
	tick := time.NewTicker(a.telemetry.Interval())
	defer tick.Stop()
	var lastIndex uint64
	var last *stateFigures
	var nextCount time.Time
	var lastEvents stream.Stats
	for {
		if a.fsm != nil {
			snap := a.fsm.State().Snapshot()
			idx := tablesIndex(snap)
			if last == nil || idx != lastIndex && !time.Now().Before(nextCount) {
				start := time.Now()
				if f, err := countState(snap); err == nil {
					lastIndex, last = idx, &f
				}
				// Counting reads every allocation: with 100,000 of them it
				// took a tenth of a busy server's CPU at one count a
				// second. The next count waits countCostRatio times as long
				// as this one took, so that counting never takes more than
				// about 2% of one core.
				nextCount = start.Add(countCostRatio * time.Since(start))
			}
			// Emitted every interval, counted or not: the JSON summary
			// shows the last finished in-memory interval, which must hold
			// the gauges even when the state did not change during it.
			if last != nil {
				emitStateFigures(*last)
			}
			leader := float32(0)
			if a.raft.LeaderReady() {
				leader = 1
			}
			metrics.SetGauge([]string{"drover", "raft", "is_leader"}, leader)
			if b := a.fsm.Events(); b != nil {
				st := b.Stats()
				metrics.SetGauge([]string{"drover", "event_stream", "subscribers"}, float32(st.Subscribers))
				if d := st.Published - lastEvents.Published; d > 0 {
					metrics.IncrCounter([]string{"drover", "event_stream", "events"}, float32(d))
				}
				if d := st.Dropped - lastEvents.Dropped; d > 0 {
					metrics.IncrCounter([]string{"drover", "event_stream", "dropped"}, float32(d))
				}
				lastEvents = st
			}
		}
		if a.client != nil {
			c := a.client.AllocCounts()
			metrics.SetGauge([]string{"client", "allocations", "pending"}, float32(c.Pending))
			metrics.SetGauge([]string{"client", "allocations", "running"}, float32(c.Running))
			metrics.SetGauge([]string{"client", "allocations", "terminal"}, float32(c.Terminal))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// tablesIndex sums the indexes of the tables countState reads: it changes
// whenever one of them does.
func tablesIndex(snap *state.Snapshot) uint64 {
	var sum uint64
	for _, t := range []string{state.TableDeployments, state.TableAllocs, state.TableJobs} {
		i, _ := snap.Index(t)
		sum += i
	}
	return sum
}
