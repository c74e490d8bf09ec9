package agent

import "github.com/droverhq/drover/config"

// ServerGCPercent returns the GOGC an agent with cfg sets for its process
// (server.gc_percent, config.DefaultServerGCPercent when 0), or 0 when it
// leaves Go's as it is: an agent that runs no server, or a process whose
// environment sets GOGC (getenv reads it), which wins.
func ServerGCPercent(cfg Config, getenv func(string) string) int {
	if !cfg.Server && !cfg.Dev || getenv("GOGC") != "" {
		return 0
	}
	if cfg.GCPercent > 0 {
		return cfg.GCPercent
	}
	return config.DefaultServerGCPercent
}
