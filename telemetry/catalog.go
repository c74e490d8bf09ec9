package telemetry

import (
	"strings"

	metrics "github.com/hashicorp/go-metrics/compat"
	prometheussink "github.com/hashicorp/go-metrics/compat/prometheus"
)

// Kind is a metric's kind.
type Kind string

// Kinds, as go-metrics': a timer is a sample in milliseconds.
const (
	Counter Kind = "counter"
	Gauge   Kind = "gauge"
	Timer   Kind = "timer"
	Sample  Kind = "sample"
)

// Metric describes one figure the agent publishes.
type Metric struct {
	// Name is the dotted name (the JSON's); Prometheus' is the same with
	// underscores.
	Name   string
	Kind   Kind
	Labels []string
	// Where says which agents publish it.
	Where string
	Help  string
}

// Where values.
const (
	OnLeader  = "leader"
	OnServers = "every server"
	OnClients = "clients"
	OnAgents  = "every agent"
)

// Catalog lists the figures an operator alerts on, drover's and those of
// the libraries it gets from Nomad's stack (Raft). website/api/metrics.md
// documents each (a test checks), and the Prometheus sink declares the
// unlabelled ones at start, with their help, so that they exist (at 0)
// before their first measurement.
var Catalog = []Metric{
	// Raft, measured by hashicorp/raft.
	{"nomad.raft.apply", Counter, nil, OnLeader, "entries the leader was asked to append to the log"},
	{"nomad.raft.commitTime", Timer, nil, OnLeader, "time from the leader appending an entry to its commit by a quorum"},
	{"nomad.raft.fsm.apply", Timer, nil, OnServers, "time to apply one committed entry to the server's state"},
	{"nomad.raft.leader.lastContact", Sample, nil, OnLeader, "time since the leader last heard from a quorum of followers"},
	{"nomad.raft.state.leader", Counter, nil, OnServers, "times this server became the leader: summed over the servers, the leader changes"},
	{"nomad.raft.state.candidate", Counter, nil, OnServers, "elections this server started"},
	{"nomad.raft.state.follower", Counter, nil, OnServers, "times this server became a follower"},
	{"nomad.nomad.leader.barrier", Timer, nil, OnLeader, "time a new leader waited for every earlier entry to be applied before starting its services"},
	{"nomad.drover.raft.is_leader", Gauge, nil, OnServers, "1 on the server whose leader services run, else 0"},

	// The eval broker and the workers.
	{"nomad.nomad.broker.total_ready", Gauge, nil, OnLeader, "evaluations ready for a worker"},
	{"nomad.nomad.broker.total_unacked", Gauge, nil, OnLeader, "evaluations out with a worker"},
	{"nomad.nomad.broker.total_pending", Gauge, nil, OnLeader, "evaluations waiting for another evaluation of their job to finish"},
	{"nomad.nomad.broker.total_waiting", Gauge, nil, OnLeader, "evaluations waiting for their wait time or a nack's delay"},
	{"nomad.nomad.broker.service_ready", Gauge, nil, OnLeader, "ready evaluations of service jobs"},
	{"nomad.nomad.broker.batch_ready", Gauge, nil, OnLeader, "ready evaluations of batch jobs"},
	{"nomad.nomad.broker.system_ready", Gauge, nil, OnLeader, "ready evaluations of system jobs"},
	{"nomad.nomad.broker.sysbatch_ready", Gauge, nil, OnLeader, "ready evaluations of sysbatch jobs"},
	{"nomad.nomad.blocked_evals.total_blocked", Gauge, nil, OnLeader, "blocked evaluations: placements that found no node, waiting for capacity"},
	{"nomad.nomad.broker.wait_time", Timer, []string{"eval_type", "triggered_by"}, OnLeader, "time an evaluation was ready before a worker took it"},
	{"nomad.nomad.worker.invoke_scheduler.service", Timer, nil, OnLeader, "time to reconcile and place one evaluation of a service job (from a snapshot, before the plan is submitted)"},
	{"nomad.nomad.worker.invoke_scheduler.batch", Timer, nil, OnLeader, "the same for batch jobs"},
	{"nomad.nomad.worker.invoke_scheduler.system", Timer, nil, OnLeader, "the same for system jobs"},
	{"nomad.nomad.worker.invoke_scheduler.sysbatch", Timer, nil, OnLeader, "the same for sysbatch jobs"},
	{"nomad.nomad.plan.submit", Timer, nil, OnLeader, "time from a worker submitting a plan to the applier's answer"},
	{"nomad.nomad.plan.evaluate", Timer, nil, OnLeader, "time the plan applier took to check a plan against the latest state"},
	{"nomad.nomad.plan.apply", Timer, nil, OnLeader, "time to commit a checked plan's entries to the log"},
	{"nomad.drover.plan.placements_accepted", Counter, nil, OnLeader, "placements the plan applier committed"},
	{"nomad.drover.plan.placements_rejected", Counter, nil, OnLeader, "placements the plan applier refused (their node no longer fit); the worker plans them again"},
	{"nomad.drover.reaper.allocs", Counter, nil, OnLeader, "allocations the reaper deleted (server.eval_gc_threshold)"},
	{"nomad.drover.reaper.evals", Counter, nil, OnLeader, "evaluations the reaper deleted (server.eval_gc_threshold)"},
	{"nomad.drover.reaper.deployments", Counter, nil, OnLeader, "deployments the reaper deleted (server.deployment_gc_threshold)"},
	{"nomad.drover.reaper.jobs", Counter, nil, OnLeader, "stopped or finished jobs the reaper purged (server.job_gc_threshold)"},
	{"nomad.drover.reaper.nodes", Counter, nil, OnLeader, "down nodes the reaper deregistered (server.node_gc_threshold)"},

	// The replicated state, on every server.
	{"nomad.drover.deployments", Gauge, []string{"status"}, OnServers, "deployments by status (running, paused, successful, failed, cancelled, and a multi-region job's pending and blocked)"},
	{"nomad.drover.allocations", Gauge, []string{"client_status"}, OnServers, "allocations by client status (pending, running, complete, failed, lost, unknown)"},
	{"nomad.nomad.job_status.pending", Gauge, nil, OnServers, "jobs pending"},
	{"nomad.nomad.job_status.running", Gauge, nil, OnServers, "jobs running"},
	{"nomad.nomad.job_status.dead", Gauge, nil, OnServers, "jobs dead"},
	{"nomad.drover.rollout.desired", Gauge, nil, OnServers, "allocations the running and paused deployments want (their groups' DesiredTotal)"},
	{"nomad.drover.rollout.placed", Gauge, nil, OnServers, "allocations the running and paused deployments have placed"},
	{"nomad.drover.rollout.healthy", Gauge, nil, OnServers, "allocations of the running and paused deployments healthy now (live figures): healthy / desired is the rollouts' progress"},
	{"nomad.drover.rollout.unhealthy", Gauge, nil, OnServers, "allocations of the running and paused deployments found unhealthy"},

	// Rollout batches, on the leader.
	{"nomad.drover.rollout.batch_duration", Timer, nil, OnLeader, "a rollout batch's time from its placement (the plan that placed it) to its last allocation healthy"},
	{"nomad.drover.rollout.alloc_healthy_time", Timer, nil, OnLeader, "an allocation's time from its placement to its health verdict healthy, in a deployment"},
	{"nomad.drover.rollout.batches_healthy", Counter, nil, OnLeader, "rollout batches whose every allocation turned healthy"},
	{"nomad.drover.rollout.batches_failed", Counter, nil, OnLeader, "rollout batches with an allocation that turned unhealthy or stopped before healthy"},
	{"nomad.drover.rollout.stage_start_time", Timer, nil, OnLeader, "a rollout's change of stage: from the health report that completed a zone or an ordered group (or the end of a pause) to the plan that placed the next allocations"},
	{"nomad.drover.rollout.batch_start_time", Timer, nil, OnLeader, "a rollout's change of batch within a stage: from the first health report after a plan of the deployment to its next plan"},
	{"nomad.drover.multiregion.steps", Counter, []string{"step"}, OnLeader, "the cross-region steps of multi-region rollouts this region's leader wrote ([regions](../multiregion.md#rollout-region-by-region)): `start` (a pending deployment's turn came), `succeed` (every region done), `fail` (failed by a peer region), `wait` (a wait's description changed), `unblock` (`deployment unblock`)"},
	{"nomad.drover.multiregion.read_errors", Counter, []string{"region"}, OnLeader, "reads of another region's deployments that failed (the region unreachable, or refusing the token)"},
	{"nomad.drover.analysis.measurements", Counter, []string{"outcome"}, OnLeader, "analysis measurements the leader took, by outcome (success, failure, inconclusive, error)"},
	{"nomad.drover.analysis.measure_time", Timer, nil, OnLeader, "time the leader took for one analysis measurement (the provider's query and the conditions)"},

	// The HTTP API and the event stream.
	{"nomad.drover.http.request", Timer, []string{"method", "route", "code"}, OnServers, "HTTP API requests by method, route pattern (/v1/job/{id}, never the path) and status code: the summary's count is the request count"},
	{"nomad.drover.event_stream.subscribers", Gauge, nil, OnServers, "open event stream subscriptions"},
	{"nomad.drover.event_stream.events", Counter, nil, OnServers, "events published into the server's event buffer"},
	{"nomad.drover.event_stream.dropped", Counter, nil, OnServers, "event stream subscribers dropped for falling behind"},

	// Clients.
	{"nomad.client.allocations.pending", Gauge, nil, OnClients, "the client's allocations pending (setting up, starting)"},
	{"nomad.client.allocations.running", Gauge, nil, OnClients, "the client's allocations running"},
	{"nomad.client.allocations.terminal", Gauge, nil, OnClients, "the client's allocations finished (complete, failed, lost) and still known"},

	// The Go runtime, measured by go-metrics every collection interval.
	{"nomad.runtime.num_goroutines", Gauge, nil, OnAgents, "goroutines"},
	{"nomad.runtime.alloc_bytes", Gauge, nil, OnAgents, "bytes of heap allocated and in use"},
	{"nomad.runtime.gc_pause_ns", Sample, nil, OnAgents, "garbage collector pauses (nanoseconds)"},
}

func key(name string) []string { return strings.Split(name, ".") }

func gaugeDefinitions() []prometheussink.GaugeDefinition {
	var out []prometheussink.GaugeDefinition
	for _, m := range Catalog {
		if m.Kind == Gauge && len(m.Labels) == 0 && m.Where != OnAgents && m.Where != OnClients {
			out = append(out, prometheussink.GaugeDefinition{Name: key(m.Name), Help: m.Help})
		}
	}
	return out
}

func counterDefinitions() []prometheussink.CounterDefinition {
	var out []prometheussink.CounterDefinition
	for _, m := range Catalog {
		if m.Kind == Counter && len(m.Labels) == 0 {
			out = append(out, prometheussink.CounterDefinition{Name: key(m.Name), Help: m.Help})
		}
	}
	return out
}

func summaryDefinitions() []prometheussink.SummaryDefinition {
	var out []prometheussink.SummaryDefinition
	for _, m := range Catalog {
		if (m.Kind == Timer || m.Kind == Sample) && len(m.Labels) == 0 && m.Where != OnAgents {
			out = append(out, prometheussink.SummaryDefinition{Name: key(m.Name), Help: m.Help})
		}
	}
	return out
}

// Label is a metric's label (go-metrics').
type Label = metrics.Label
