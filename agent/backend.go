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

// IsLeader reports whether this server leads.
func (a *Agent) IsLeader() bool { return a.raft.IsLeader() }

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
	m, ok := a.members.get(id)
	if !ok || m.HTTPAddr == "" {
		return "", fmt.Errorf("%w: the HTTP address of leader %s is not known yet", cluster.ErrNoLeader, id)
	}
	return m.HTTPAddr, nil
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
		Stats:  map[string]map[string]string{"raft": a.raft.Stats()},
	}
}

// Join records another server's announcement; the leader adds it as a
// voter if it is not one yet.
func (a *Agent) Join(_ context.Context, req *structs.ServerJoinRequest) (*structs.ServerJoinResponse, error) {
	a.members.learnDirect(req.Self)
	a.members.learnIndirect(req.Known)
	has, err := a.raft.HasState()
	if err != nil {
		return nil, err
	}
	if has {
		a.ensureVoter(req.Self)
	}
	_, leaderID := a.raft.Leader()
	return &structs.ServerJoinResponse{
		Self: a.members.self, Known: a.members.list(), Bootstrapped: has,
		BootstrapExpect: a.cfg.BootstrapExpect, LeaderID: leaderID,
	}, nil
}

// ensureVoter makes m a voter when this server leads and m is not one yet
// at its address.
func (a *Agent) ensureVoter(m structs.ServerMember) {
	if !a.raft.IsLeader() || m.ID == "" || m.RaftAddr == "" {
		return
	}
	peers, _, err := a.raft.Configuration()
	if err != nil {
		return
	}
	for _, p := range peers {
		if p.ID == m.ID && p.Address == m.RaftAddr && p.Voter {
			return
		}
	}
	a.logger.Info("adding server as a voter", "id", m.ID, "name", m.Name, "raft", m.RaftAddr)
	if err := a.raft.AddVoter(m.ID, m.RaftAddr); err != nil {
		a.logger.Warn("adding server failed", "id", m.ID, "error", err)
	}
}
