package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/droverhq/drover/agent"
)

func init() { registerCommand("agent", newAgentCommand) }

func newAgentCommand() *cobra.Command {
	var (
		cfg      agent.Config
		logLevel string
		logJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run a drover server agent",
		Long: `Run a drover agent. With -dev, a single server that bootstraps itself and keeps
its state in a temporary directory removed on exit. With -server, a server of a
cluster: -bootstrap-expect N servers form a new cluster once they have found
each other through -retry-join (HTTP addresses of other servers).

  drover agent -dev
  drover agent -server -bootstrap-expect 3 -data-dir /var/lib/drover \
      -retry-join 10.0.0.2:4646 -retry-join 10.0.0.3:4646`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			level := hclog.LevelFromString(logLevel)
			if level == hclog.NoLevel {
				return fmt.Errorf("invalid -log-level %q", logLevel)
			}
			cfg.Logger = hclog.New(&hclog.LoggerOptions{
				Name: "drover", Level: level, JSONFormat: logJSON, Output: cmd.ErrOrStderr(),
			})
			cfg.Version = Version
			return runAgent(cmd, cfg)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&cfg.Dev, "dev", false, "run a single self-bootstrapping server; its state lives in a temporary directory removed on exit")
	f.BoolVar(&cfg.Server, "server", false, "run as a server")
	f.IntVar(&cfg.BootstrapExpect, "bootstrap-expect", 0, "number of servers that form a new cluster")
	f.StringArrayVar(&cfg.RetryJoin, "retry-join", nil, "HTTP address (host:port) of another server to join (repeatable)")
	f.StringVar(&cfg.DataDir, "data-dir", "", "directory for the server's state")
	f.StringVar(&cfg.HTTPAddr, "http-addr", "127.0.0.1:4646", "address of the HTTP API")
	f.StringVar(&cfg.RaftAddr, "raft-addr", "127.0.0.1:4647", "address of the Raft transport, reachable by the other servers")
	f.StringVar(&cfg.NodeName, "node", "", "name of this agent (default: the host name)")
	f.StringVar(&cfg.Region, "region", "global", "region")
	f.StringVar(&cfg.Datacenter, "dc", "dc1", "datacenter")
	f.BoolVar(&cfg.NoSync, "raft-no-sync", false, "do not fsync the Raft log: faster serial writes, safe if the process dies but not if the machine does")
	f.StringVar(&logLevel, "log-level", "info", "log level: trace, debug, info, warn, error")
	f.BoolVar(&logJSON, "log-json", false, "write logs as JSON")
	return cmd
}

// runAgent runs the agent until SIGINT or SIGTERM, then shuts it down.
func runAgent(cmd *cobra.Command, cfg agent.Config) error {
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	a.Start()
	fmt.Fprintf(cmd.OutOrStdout(), "==> drover agent started: HTTP %s, Raft %s\n", a.HTTPAddr(), a.Cluster().Addr())
	select {
	case s := <-sigs:
		fmt.Fprintf(cmd.OutOrStdout(), "==> caught %s, shutting down\n", s)
	case <-cmd.Context().Done():
	}
	return a.Shutdown()
}
