package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The Agent is the HTTP API's backend (httpapi.Backend).

// State returns the local replicated state.
func (a *Agent) State() *state.Store { return a.fsm.State() }

// Apply writes through Raft.
func (a *Agent) Apply(ctx context.Context, t fsm.MessageType, req any) (any, uint64, error) {
	return a.raft.Apply(ctx, t, req)
}

// IsLeader reports whether this server leads and serves: its state holds
// every entry committed before its term (the post-election barrier has
// completed, its leader services run). A server just elected may still be
// applying the log it had: a read it served then could be older than a
// write another leader acknowledged (a restarted server, elected at once,
// answered a read with its snapshot's value, 2,300 writes old). Until it
// serves, requests are held as while no leader is known.
func (a *Agent) IsLeader() bool { return a.raft.IsLeader() && a.raft.LeaderReady() }

// Leader returns the leader's Raft address and ID.
func (a *Agent) Leader() (string, string) { return a.raft.Leader() }

// LastContact is the time since the leader was last heard from.
func (a *Agent) LastContact() time.Duration { return a.raft.LastContact() }

// LeaderHTTPAddr looks the leader's Raft ID up among the known members.
func (a *Agent) LeaderHTTPAddr() (string, error) {
	_, id := a.raft.Leader()
	if id == "" {
		return "", cluster.ErrNoLeader
	}
	if id == a.raft.ID() && !a.raft.LeaderReady() {
		return "", fmt.Errorf("%w: this server was elected and is applying the log before it serves", cluster.ErrNoLeader)
	}
	m, ok := a.members.get(id)
	if !ok || m.HTTPAddr == "" {
		return "", fmt.Errorf("%w: the HTTP address of leader %s is not known yet", cluster.ErrNoLeader, id)
	}
	return m.HTTPAddr, nil
}

// LeaderBuild is the leader's structs.ServerBuild as it announced it, 0
// when the leader or its build is not known (httpapi.LeaderBuilder: a
// follower signs what it forwards in the layout the leader accepts).
func (a *Agent) LeaderBuild() int {
	_, id := a.raft.Leader()
	if id == "" {
		return 0
	}
	m, ok := a.members.get(id)
	if !ok {
		return 0
	}
	return m.Build
}

// MinServerBuild is the lowest structs.ServerBuild among the servers of
// the Raft configuration (1 while one of them is not known, or when the
// configuration cannot be read): a new message type or field is written
// only once it is at least the build that introduced it.
func (a *Agent) MinServerBuild() int {
	peers, _, err := a.raft.Configuration()
	if err != nil {
		return 1
	}
	ids := make([]string, len(peers))
	for i, p := range peers {
		ids[i] = p.ID
	}
	return a.members.minBuild(ids)
}

// RaftConfiguration returns the Raft configuration with node names.
func (a *Agent) RaftConfiguration() (*structs.RaftConfiguration, error) {
	peers, index, err := a.raft.Configuration()
	if err != nil {
		return nil, err
	}
	_, leaderID := a.raft.Leader()
	out := &structs.RaftConfiguration{Servers: []*structs.RaftServer{}, Index: index}
	for _, p := range peers {
		name := p.ID
		if m, ok := a.members.get(p.ID); ok && m.Name != "" {
			name = m.Name
		}
		out.Servers = append(out.Servers, &structs.RaftServer{
			ID: p.ID, Node: name, Address: p.Address, Leader: p.ID == leaderID, Voter: p.Voter, RaftProtocol: "3",
		})
	}
	return out, nil
}

// Self describes this agent.
func (a *Agent) Self() *structs.AgentSelf {
	stats := map[string]map[string]string{"raft": a.raft.Stats()}
	if a.client != nil {
		// Nomad's: the CLI's node status -self reads the node's ID here.
		stats["client"] = map[string]string{"node_id": a.client.NodeID()}
	}
	return &structs.AgentSelf{
		Config: structs.AgentConfig{
			Region: a.cfg.Region, Datacenter: a.cfg.Datacenter, NodeName: a.cfg.NodeName, Version: a.cfg.Version,
			DataDir: a.cfg.DataDir,
			Server: structs.AgentServerConfig{
				Enabled: true, BootstrapExpect: a.cfg.BootstrapExpect, ServerID: a.raft.ID(), RetryJoin: a.cfg.RetryJoin,
			},
			Addresses: structs.AgentAddresses{HTTP: a.HTTPAddr(), Raft: a.raft.Addr()},
		},
		Member: a.members.self,
		Stats:  stats,
	}
}

// Join records another server's announcement, which the HTTP layer has
// authenticated (see httpapi's access.go); the leader adds the server as a
// non-voter if it is not in the Raft configuration yet.
func (a *Agent) Join(_ context.Context, req *structs.ServerJoinRequest) (*structs.ServerJoinResponse, error) {
	if err := a.checkForceLeft(req.Self); err != nil {
		return nil, err
	}
	if a.fed.Foreign(req.Self) {
		// A server of another region federates; it never joins this
		// region's Raft (federation.go).
		return a.joinForeign(req), nil
	}
	a.fed.Learn(req.Federation, time.Now())
	a.members.learnDirect(req.Self)
	a.members.learnIndirect(req.Known)
	has, err := a.raft.HasState()
	if err != nil {
		return nil, err
	}
	if has {
		a.ensureServer(req.Self)
	}
	_, leaderID := a.raft.Leader()
	return &structs.ServerJoinResponse{
		Self: a.members.self, Known: a.members.list(), Bootstrapped: has,
		BootstrapExpect: a.cfg.BootstrapExpect, LeaderID: leaderID, Federation: a.federationList(),
	}, nil
}

// ensureServer adds m as a non-voter when this server leads and m is not
// in the Raft configuration at its address yet. A non-voter receives the
// log but does not count towards the quorum: autopilot promotes it once it
// has caught up and stayed healthy, so a server that never does (a wrong
// address, a slow machine) cannot cost the cluster its leader.
func (a *Agent) ensureServer(m structs.ServerMember) {
	if !a.raft.IsLeader() || m.ID == "" || m.RaftAddr == "" {
		return
	}
	peers, _, err := a.raft.Configuration()
	if err != nil {
		return
	}
	for _, p := range peers {
		if p.ID == m.ID && p.Address == m.RaftAddr {
			return
		}
	}
	a.logger.Info("adding server as a non-voter", "id", m.ID, "name", m.Name, "raft", m.RaftAddr)
	if err := a.raft.AddNonvoter(m.ID, m.RaftAddr); err != nil {
		a.logger.Warn("adding server failed", "id", m.ID, "error", err)
	}
}
