package agent

import (
	"net/http"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/server"
)

// AgentTarget resolves the ?node_id= and ?server_id= of the agent
// endpoints (profiles, monitor; httpapi/agent_target.go): "" when this
// agent is the target, else the HTTP address of the agent to forward to.
// A server is named by its member name ("node-1.global"), its node name,
// its Raft ID, or "leader"; an unknown one is a 500 "unknown Nomad server
// NAME", as Nomad answers it. A node is a registered node's ID (404 when
// there is none).
func (a *Agent) AgentTarget(nodeID, serverID string) (string, error) {
	switch {
	case nodeID != "":
		if a.client != nil && a.client.NodeID() == nodeID {
			return "", nil
		}
		if a.fsm == nil {
			return "", httpapi.Errorf(http.StatusBadRequest, "this agent runs no server: it cannot find node %s", nodeID)
		}
		n, err := a.fsm.State().Snapshot().NodeByID(nodeID)
		if err != nil {
			return "", err
		}
		if n == nil {
			return "", httpapi.Errorf(http.StatusNotFound, "Unknown node %q", nodeID)
		}
		if n.HTTPAddr == "" {
			return "", httpapi.Errorf(http.StatusBadGateway, "node %s has no HTTP address", nodeID)
		}
		return n.HTTPAddr, nil
	case serverID != "":
		if a.raft == nil {
			return "", httpapi.Errorf(http.StatusBadRequest, "this agent runs no server: it cannot find server %s", serverID)
		}
		id := serverID
		if serverID == "leader" {
			_, id = a.raft.Leader()
			if id == "" {
				return "", httpapi.Errorf(http.StatusInternalServerError, "no leader to forward to")
			}
		}
		for _, m := range a.members.list() {
			if m.ID != id && m.Name != id && m.Name+"."+m.Region != id {
				continue
			}
			if m.ID == a.raft.ID() {
				return "", nil
			}
			return strings.TrimPrefix(strings.TrimPrefix(m.HTTPAddr, "http://"), "https://"), nil
		}
		// As Nomad (a 500; its API tests check the code).
		return "", httpapi.Errorf(http.StatusInternalServerError, "unknown Nomad server %s", serverID)
	}
	return "", nil
}

// DebugEnabled reports enable_debug (dev mode turns it on): without ACLs,
// the agent serves its profiles only then.
func (a *Agent) DebugEnabled() bool { return a.cfg.Dev || a.cfg.EnableDebug }

// RegisterLogSink follows the agent's log (GET /v1/agent/monitor): every
// line any part of the agent logs goes to sink, at the sink's own level,
// until the returned function is called. An agent whose logger cannot be
// followed (tests) sends nothing.
func (a *Agent) RegisterLogSink(sink hclog.SinkAdapter) func() {
	il, ok := a.cfg.Logger.(hclog.InterceptLogger)
	if !ok {
		return func() {}
	}
	il.RegisterSink(sink)
	return func() { il.DeregisterSink(sink) }
}

// SchedulerWorkerConfig is this server's worker pool setting
// (httpapi.SchedulerWorkersBackend).
func (a *Agent) SchedulerWorkerConfig() server.WorkerPoolConfig {
	return a.leader.SchedulerWorkerConfig()
}

// SetSchedulerWorkerConfig resizes this server's worker pool.
func (a *Agent) SetSchedulerWorkerConfig(c server.WorkerPoolConfig) (server.WorkerPoolConfig, error) {
	return a.leader.SetSchedulerWorkerConfig(c)
}

// SchedulerWorkersInfo lists this server's workers.
func (a *Agent) SchedulerWorkersInfo() []server.WorkerInfo { return a.leader.SchedulerWorkersInfo() }

// ServerName is this server's member name, as Nomad's ("node-1.global").
func (a *Agent) ServerName() string { return a.cfg.NodeName + "." + a.cfg.Region }

// The agent serves the agent endpoints' interfaces (interfaces_test.go
// lists them).
var (
	_ httpapi.AgentTargetBackend      = (*Agent)(nil)
	_ httpapi.LogSinkBackend          = (*Agent)(nil)
	_ httpapi.SchedulerWorkersBackend = (*Agent)(nil)
)

var _ httpapi.ForceLeaveBackend = (*Agent)(nil)

var _ httpapi.LocalAgentBackend = (*Agent)(nil)
