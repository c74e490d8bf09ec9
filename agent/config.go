package agent

import (
	"github.com/hashicorp/go-hclog"
)

// Config is the agent's configuration, as the CLI flags give it.
type Config struct {
	// Dev runs a single server that bootstraps itself, keeping its state in
	// a temporary directory that is removed on shutdown.
	Dev bool
	// Server enables the server (Raft, state, HTTP API). The only mode for now.
	Server bool
	// BootstrapExpect is how many servers form a new cluster; they
	// bootstrap once that many have found each other.
	BootstrapExpect int
	// RetryJoin lists HTTP addresses (host:port) of other servers.
	RetryJoin []string
	// DataDir holds the server's state. Required unless Dev.
	DataDir string
	// HTTPAddr and RaftAddr are host:port to listen on.
	HTTPAddr string
	RaftAddr string
	// NodeName names this agent; the host name when empty.
	NodeName   string
	Region     string
	Datacenter string
	Version    string
	// NoSync skips fsync of the Raft log (see cluster.Config.NoSync):
	// about 4,700 instead of 400 serial writes per second, safe against the
	// process being killed but not against power loss. Dev mode sets it.
	NoSync bool
	Logger hclog.Logger
}
