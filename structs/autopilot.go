package structs

import (
	"encoding/json"
	"time"
)

// AutopilotConfig is the replicated autopilot configuration, in Nomad's
// shape (api.AutopilotConfiguration): durations travel as strings such as
// "10s". The leader's autopilot reads it on every pass.
type AutopilotConfig struct {
	// CleanupDeadServers removes dead servers from the Raft configuration
	// (a dead voter only once a replacement has joined; see package
	// autopilot).
	CleanupDeadServers bool
	// LastContactThreshold: a server that has not heard from the leader
	// for longer is unhealthy.
	LastContactThreshold time.Duration
	// MaxTrailingLogs: a server further behind the leader's log is
	// unhealthy (it has not caught up).
	MaxTrailingLogs uint64
	// MinQuorum: autopilot never removes a voter when fewer voters would
	// remain.
	MinQuorum uint
	// ServerStabilizationTime: how long a new server must stay healthy
	// before it is promoted to voter.
	ServerStabilizationTime time.Duration

	// Enterprise-only in Nomad; accepted and kept, without effect.
	EnableRedundancyZones   bool
	DisableUpgradeMigration bool
	EnableCustomUpgrades    bool

	CreateIndex uint64
	ModifyIndex uint64
}

// Nomad's autopilot defaults.
const (
	DefaultLastContactThreshold    = 200 * time.Millisecond
	DefaultMaxTrailingLogs         = 250
	DefaultServerStabilizationTime = 10 * time.Second
)

// DefaultAutopilotConfig is the configuration of a cluster whose servers
// were given none: Nomad's defaults.
func DefaultAutopilotConfig() AutopilotConfig {
	return AutopilotConfig{
		CleanupDeadServers:      true,
		LastContactThreshold:    DefaultLastContactThreshold,
		MaxTrailingLogs:         DefaultMaxTrailingLogs,
		ServerStabilizationTime: DefaultServerStabilizationTime,
	}
}

type autopilotConfigAlias AutopilotConfig

// MarshalJSON writes the durations as strings, as Nomad.
func (c AutopilotConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(&struct {
		LastContactThreshold    string
		ServerStabilizationTime string
		*autopilotConfigAlias
	}{c.LastContactThreshold.String(), c.ServerStabilizationTime.String(), (*autopilotConfigAlias)(&c)})
}

// UnmarshalJSON reads the durations as strings; an absent one is left as
// it was.
func (c *AutopilotConfig) UnmarshalJSON(b []byte) error {
	aux := &struct {
		LastContactThreshold    string
		ServerStabilizationTime string
		*autopilotConfigAlias
	}{autopilotConfigAlias: (*autopilotConfigAlias)(c)}
	if err := json.Unmarshal(b, aux); err != nil {
		return err
	}
	var err error
	if aux.LastContactThreshold != "" {
		if c.LastContactThreshold, err = time.ParseDuration(aux.LastContactThreshold); err != nil {
			return err
		}
	}
	if aux.ServerStabilizationTime != "" {
		if c.ServerStabilizationTime, err = time.ParseDuration(aux.ServerStabilizationTime); err != nil {
			return err
		}
	}
	return nil
}

// AutopilotSetConfigRequest replaces the autopilot configuration; with
// CAS, only if the stored one's ModifyIndex is still Config.ModifyIndex.
type AutopilotSetConfigRequest struct {
	Config AutopilotConfig
	CAS    bool
}

// ServerHealth is one server as the leader's autopilot sees it, in Nomad's
// shape (api.ServerHealth).
type ServerHealth struct {
	ID      string
	Name    string
	Address string
	// SerfStatus is "alive" when the server answered the leader's last
	// probe, "failed" otherwise (drover has no gossip; the name is Nomad's).
	SerfStatus  string
	Version     string
	Leader      bool
	LastContact time.Duration
	LastTerm    uint64
	LastIndex   uint64
	Healthy     bool
	Voter       bool
	// StableSince is when Healthy last changed.
	StableSince time.Time
}

type serverHealthAlias ServerHealth

// MarshalJSON writes LastContact as a string, as Nomad.
func (h ServerHealth) MarshalJSON() ([]byte, error) {
	return json.Marshal(&struct {
		LastContact string
		*serverHealthAlias
	}{h.LastContact.String(), (*serverHealthAlias)(&h)})
}

// UnmarshalJSON reads LastContact as a string.
func (h *ServerHealth) UnmarshalJSON(b []byte) error {
	aux := &struct {
		LastContact string
		*serverHealthAlias
	}{serverHealthAlias: (*serverHealthAlias)(h)}
	if err := json.Unmarshal(b, aux); err != nil {
		return err
	}
	if aux.LastContact != "" {
		d, err := time.ParseDuration(aux.LastContact)
		if err != nil {
			return err
		}
		h.LastContact = d
	}
	return nil
}

// OperatorHealthReply is the answer of GET /v1/operator/autopilot/health,
// in Nomad's shape (api.OperatorHealthReply).
type OperatorHealthReply struct {
	// Healthy: every server is healthy.
	Healthy bool
	// FailureTolerance: how many voters may fail without losing quorum.
	FailureTolerance int
	Servers          []ServerHealth
	Leader           string
	Voters           []string
}
