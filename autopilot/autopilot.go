// Package autopilot decides, from what the leader observes of the servers,
// which new servers to promote to voters and which dead servers to remove
// from the Raft configuration. It is a pure function (Decide): the
// observations, the configuration and the time go in; the servers' health
// and the actions come out. The leader's loop (package agent) gathers the
// observations, carries Memory from one pass to the next, and carries out
// the actions through Raft.
//
// The rules are Nomad's and Consul's autopilot:
//
//   - A server is healthy when it answered the leader's last probe, has
//     heard from the leader within LastContactThreshold, its last log entry
//     is of the leader's term, and it is at most MaxTrailingLogs entries
//     behind the leader's log. The leader is healthy.
//   - A non-voter is promoted to voter once it has been healthy for
//     ServerStabilizationTime. A server that never catches up, or stops
//     answering, stays a non-voter: it cannot cost the cluster its quorum.
//   - A server is dead when it has not answered the leader's probes for
//     ServerStabilizationTime. With CleanupDeadServers, a dead non-voter is
//     removed at once; a dead voter once a replacement has joined, that is
//     once at least as many servers are healthy as there are voters, and
//     never below MinQuorum voters. The leader is never removed.
package autopilot

import (
	"slices"
	"time"

	"github.com/droverhq/drover/structs"
)

// Server is one server of the Raft configuration as the leader sees it.
type Server struct {
	ID      string
	Name    string
	Address string // Raft address
	Version string
	Voter   bool
	Leader  bool
	// Stats is what the server reported of its log; nil when it did not
	// answer the leader's probe.
	Stats *Stats
}

// Stats is a server's own report of its Raft log.
type Stats struct {
	// LastContact is the time since the server last heard from the
	// leader; negative when it never has.
	LastContact time.Duration
	LastTerm    uint64
	LastIndex   uint64
}

// Memory is what a pass remembers of one server for the next pass.
type Memory struct {
	Healthy     bool
	StableSince time.Time // when Healthy last changed
	// UnreachableSince is when the server stopped answering; zero while it
	// answers.
	UnreachableSince time.Time
}

// Input is everything one decision needs.
type Input struct {
	Config  structs.AutopilotConfig
	Servers []Server
	// Memory is the previous pass's Decision.Memory; nil on the first pass
	// of a leadership term.
	Memory map[string]Memory
	Now    time.Time
}

// Decision is the outcome of one pass.
type Decision struct {
	Health structs.OperatorHealthReply
	// Promote lists non-voters to make voters; Remove, servers to drop
	// from the Raft configuration. Both sorted by ID.
	Promote []string
	Remove  []string
	// Memory is to be passed to the next pass.
	Memory map[string]Memory
}

// Serf statuses, as Nomad names them.
const (
	StatusAlive  = "alive"
	StatusFailed = "failed"
)

// Decide applies the package's rules to one set of observations.
func Decide(in Input) Decision {
	servers := slices.Clone(in.Servers)
	slices.SortFunc(servers, func(a, b Server) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	var leader *Server
	for i := range servers {
		if servers[i].Leader {
			leader = &servers[i]
		}
	}
	d := Decision{Memory: map[string]Memory{}, Health: structs.OperatorHealthReply{
		Healthy: true, Servers: []structs.ServerHealth{}, Voters: []string{},
	}}
	cfg := in.Config
	stable := cfg.ServerStabilizationTime

	var voters, healthyVoters, healthyServers int
	var promote, deadVoters, deadNonVoters []string
	for _, s := range servers {
		healthy := isHealthy(cfg, s, leader)
		mem, seen := in.Memory[s.ID]
		if !seen || mem.Healthy != healthy {
			mem.Healthy, mem.StableSince = healthy, in.Now
		}
		switch {
		case s.Stats != nil:
			mem.UnreachableSince = time.Time{}
		case mem.UnreachableSince.IsZero():
			mem.UnreachableSince = in.Now
		}
		d.Memory[s.ID] = mem

		h := structs.ServerHealth{
			ID: s.ID, Name: s.Name, Address: s.Address, Version: s.Version, Leader: s.Leader,
			Voter: s.Voter, Healthy: healthy, StableSince: mem.StableSince, SerfStatus: StatusFailed,
		}
		if s.Stats != nil {
			h.SerfStatus = StatusAlive
			h.LastContact, h.LastTerm, h.LastIndex = s.Stats.LastContact, s.Stats.LastTerm, s.Stats.LastIndex
		}
		d.Health.Servers = append(d.Health.Servers, h)
		if s.Leader {
			d.Health.Leader = s.ID
		}
		if !healthy {
			d.Health.Healthy = false
		}
		if s.Voter {
			voters++
			d.Health.Voters = append(d.Health.Voters, s.ID)
			if healthy {
				healthyVoters++
			}
		}
		if healthy {
			healthyServers++
		}

		dead := s.Stats == nil && !mem.UnreachableSince.IsZero() && in.Now.Sub(mem.UnreachableSince) >= stable
		switch {
		case !s.Voter && healthy && in.Now.Sub(mem.StableSince) >= stable:
			promote = append(promote, s.ID)
		case s.Leader || !dead || !cfg.CleanupDeadServers:
		case s.Voter:
			deadVoters = append(deadVoters, s.ID)
		default:
			deadNonVoters = append(deadNonVoters, s.ID)
		}
	}
	if t := healthyVoters - (voters/2 + 1); t > 0 {
		d.Health.FailureTolerance = t
	}

	d.Remove = deadNonVoters
	for _, id := range deadVoters {
		// A replacement has joined when as many servers are healthy as
		// there are voters; removing a dead voter never lowers the healthy
		// count, so each removal is checked against the voters left.
		if healthyServers < voters || uint(voters-1) < cfg.MinQuorum {
			break
		}
		d.Remove = append(d.Remove, id)
		voters--
	}
	d.Promote = promote
	return d
}

// isHealthy applies the health rule to s.
func isHealthy(cfg structs.AutopilotConfig, s Server, leader *Server) bool {
	switch {
	case s.Leader:
		return true
	case s.Stats == nil || leader == nil || leader.Stats == nil:
		return false
	case s.Stats.LastContact < 0 || s.Stats.LastContact > cfg.LastContactThreshold:
		return false
	case s.Stats.LastTerm != leader.Stats.LastTerm:
		return false
	case leader.Stats.LastIndex > s.Stats.LastIndex && leader.Stats.LastIndex-s.Stats.LastIndex > cfg.MaxTrailingLogs:
		return false
	}
	return true
}
