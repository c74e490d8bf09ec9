package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/droverhq/drover/autopilot"
	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/internal/joinauth"
	"github.com/droverhq/drover/structs"
)

// The autopilot shell: a leader service that, on every pass, reads the
// Raft configuration and the replicated autopilot configuration, asks each
// server for its log's statistics (GET /v1/agent/self), hands all of it
// to autopilot.Decide, and carries out the promotions and removals the
// decision lists. Every decision is the pure function's; this file only
// gathers and acts.

// autopilotState is the leader's latest view, for the health endpoint.
type autopilotState struct {
	mu     sync.Mutex
	health *structs.OperatorHealthReply
}

// autopilotInterval is the time between passes: a quarter of the
// stabilization time, between 100ms and 1s, so that a server is promoted
// soon after it has been stable for long enough.
func autopilotInterval(cfg structs.AutopilotConfig) time.Duration {
	return min(max(cfg.ServerStabilizationTime/4, 100*time.Millisecond), time.Second)
}

// probeTimeout bounds one server's answer to a pass's probe: a server that
// does not answer within it counts as not answering (a paused or dead
// process accepts the connection, then says nothing).
const probeTimeout = 500 * time.Millisecond

// runAutopilot is the leader service. It writes the seed configuration to
// the replicated state when there is none, then runs passes until the
// term ends.
func (a *Agent) runAutopilot(ctx context.Context) {
	a.seedAutopilotConfig(ctx)
	var mem map[string]autopilot.Memory
	client := &http.Client{Timeout: probeTimeout, Transport: a.agentHTTP.Transport}
	for {
		cfg := a.autopilotConfig()
		dec, servers, err := a.autopilotPass(ctx, client, cfg, mem, time.Now())
		if err != nil {
			a.logger.Debug("autopilot pass skipped", "error", err)
		} else {
			mem = dec.Memory
			a.autopilot.mu.Lock()
			a.autopilot.health = &dec.Health
			a.autopilot.mu.Unlock()
			a.carryOut(dec, servers)
		}
		select {
		case <-ctx.Done():
			a.autopilot.mu.Lock()
			a.autopilot.health = nil
			a.autopilot.mu.Unlock()
			return
		case <-time.After(autopilotInterval(cfg)):
		}
	}
}

// seedAutopilotConfig writes the agent's autopilot configuration when the
// replicated state holds none (a new cluster's first leader).
func (a *Agent) seedAutopilotConfig(ctx context.Context) {
	if c, err := a.fsm.State().Snapshot().AutopilotConfig(); err != nil || c != nil {
		return
	}
	seed := structs.DefaultAutopilotConfig()
	if a.cfg.Autopilot != nil {
		seed = *a.cfg.Autopilot
	}
	// A check-and-set against "none": a configuration written meanwhile wins.
	req := &structs.AutopilotSetConfigRequest{Config: seed, CAS: true}
	req.Config.ModifyIndex = 0
	if _, _, err := a.raft.Apply(ctx, fsm.AutopilotSetConfigRequestType, req); err != nil {
		a.logger.Warn("writing the initial autopilot configuration failed", "error", err)
	}
}

// autopilotConfig is the replicated configuration, or the seed while none
// is stored.
func (a *Agent) autopilotConfig() structs.AutopilotConfig {
	if c, err := a.fsm.State().Snapshot().AutopilotConfig(); err == nil && c != nil {
		return *c
	}
	if a.cfg.Autopilot != nil {
		return *a.cfg.Autopilot
	}
	return structs.DefaultAutopilotConfig()
}

// autopilotPass gathers the observations and decides. It also returns the
// servers observed, for their addresses.
func (a *Agent) autopilotPass(ctx context.Context, client *http.Client, cfg structs.AutopilotConfig,
	mem map[string]autopilot.Memory, now time.Time) (autopilot.Decision, []autopilot.Server, error) {
	peers, _, err := a.raft.Configuration()
	if err != nil {
		return autopilot.Decision{}, nil, err
	}
	_, leaderID := a.raft.Leader()
	if leaderID != a.raft.ID() {
		return autopilot.Decision{}, nil, cluster.ErrNotLeader
	}
	servers := make([]autopilot.Server, len(peers))
	var wg sync.WaitGroup
	for i, p := range peers {
		s := autopilot.Server{ID: p.ID, Address: p.Address, Voter: p.Voter, Leader: p.ID == leaderID, Name: p.ID}
		m, known := a.members.get(p.ID)
		if known {
			s.Name, s.Version = m.Name, m.Version
		}
		servers[i] = s
		if p.ID == a.raft.ID() {
			servers[i].Stats = raftStats(a.raft.Stats())
			continue
		}
		if !known || m.HTTPAddr == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			servers[i].Stats = probeStats(ctx, client, a.tls.Scheme()+"://"+m.HTTPAddr, p.ID, a.cfg.JoinToken)
		}()
	}
	wg.Wait()
	dec := autopilot.Decide(autopilot.Input{Config: cfg, Servers: servers, Memory: mem, Now: now})
	return dec, servers, nil
}

// carryOut promotes and removes what the decision lists.
func (a *Agent) carryOut(dec autopilot.Decision, servers []autopilot.Server) {
	addr := map[string]string{}
	for _, s := range servers {
		addr[s.ID] = s.Address
	}
	for _, id := range dec.Promote {
		a.logger.Info("autopilot: promoting server to voter", "id", id, "raft", addr[id])
		if err := a.raft.AddVoter(id, addr[id]); err != nil {
			a.logger.Warn("autopilot: promotion failed", "id", id, "error", err)
		}
	}
	for _, id := range dec.Remove {
		a.logger.Info("autopilot: removing dead server", "id", id, "raft", addr[id])
		if err := a.raft.RemoveServer(id); err != nil {
			a.logger.Warn("autopilot: removal failed", "id", id, "error", err)
		}
	}
}

// probeStats asks the server at baseURL (scheme://host:port) for its Raft
// statistics; nil when it does not answer in time, or answers as another
// server. With a join token the probe is signed with it, which lets it in
// where ACLs are on (/v1/agent/self needs agent:read otherwise).
func probeStats(ctx context.Context, client *http.Client, baseURL, id, joinToken string) *autopilot.Stats {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/v1/agent/self", nil)
	if err != nil {
		return nil
	}
	if joinToken != "" {
		req.Header.Set(joinauth.ForwardHeader, joinauth.SignForward(joinToken, time.Now().Unix(), http.MethodGet, req.URL.RequestURI()))
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var self structs.AgentSelf
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&self) != nil || self.Member.ID != id {
		return nil
	}
	return raftStats(self.Stats["raft"])
}

// raftStats reads hashicorp/raft's statistics; nil when they are missing.
func raftStats(m map[string]string) *autopilot.Stats {
	idx, err1 := strconv.ParseUint(m["last_log_index"], 10, 64)
	term, err2 := strconv.ParseUint(m["last_log_term"], 10, 64)
	if err1 != nil || err2 != nil {
		return nil
	}
	s := &autopilot.Stats{LastIndex: idx, LastTerm: term}
	switch lc := m["last_contact"]; lc {
	case "0":
	case "never", "":
		s.LastContact = -1
	default:
		d, err := time.ParseDuration(lc)
		if err != nil {
			s.LastContact = -1
		} else {
			s.LastContact = d
		}
	}
	return s
}

// The autopilot endpoints (httpapi.AutopilotBackend).

// AutopilotConfiguration returns the replicated autopilot configuration
// (the seed while none is stored).
func (a *Agent) AutopilotConfiguration() (*structs.AutopilotConfig, error) {
	c := a.autopilotConfig()
	return &c, nil
}

// SetAutopilotConfiguration writes the autopilot configuration through
// Raft and reports whether it was written (false: a check-and-set lost).
func (a *Agent) SetAutopilotConfiguration(ctx context.Context, req *structs.AutopilotSetConfigRequest) (bool, error) {
	resp, _, err := a.raft.Apply(ctx, fsm.AutopilotSetConfigRequestType, req)
	if err != nil {
		return false, err
	}
	ok, _ := resp.(bool)
	return ok, nil
}

// ErrNoAutopilotHealth: this server leads but autopilot has not finished
// its first pass.
var ErrNoAutopilotHealth = errors.New("autopilot has not checked the servers yet")

// AutopilotHealth returns the health autopilot's last pass found. Leader
// only: the route is a read, so followers forward it.
func (a *Agent) AutopilotHealth() (*structs.OperatorHealthReply, error) {
	a.autopilot.mu.Lock()
	defer a.autopilot.mu.Unlock()
	if a.autopilot.health == nil {
		if !a.raft.IsLeader() {
			return nil, fmt.Errorf("%w: autopilot runs on the leader", cluster.ErrNotLeader)
		}
		return nil, ErrNoAutopilotHealth
	}
	h := *a.autopilot.health
	return &h, nil
}

var _ httpapi.AutopilotBackend = (*Agent)(nil)
