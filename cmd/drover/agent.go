package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/droverhq/drover/agent"
	"github.com/droverhq/drover/config"
)

func init() { registerCommand("agent", newAgentCommand) }

// agentFlags are the flags of `drover agent` that are not configuration
// fields (config.FromFlags reads those).
type agentFlags struct {
	configs []string
	noSync  bool
}

func newAgentCommand() *cobra.Command {
	var af agentFlags
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run a drover agent: a server, a client, or both",
		Long: `Run a drover agent.

With -dev, a single server that bootstraps itself and a client that runs
allocations on this machine (raw_exec and mock drivers), their state in a
temporary directory removed on exit; HTTP on 127.0.0.1:4646.

With -server, a server of a cluster: -bootstrap-expect N servers form a new
cluster once they have found each other through -retry-join (HTTP addresses of
other servers). With -client, a client that runs allocations, talking to the
servers listed by -servers (it fails over between them).

Settings come from the defaults, then each -config file in order, then the
flags; later ones win field by field. Invalid settings are all reported, each
with its file and line, before anything starts.

  drover agent -dev
  drover agent -config server.hcl
  drover agent -server -bootstrap-expect 3 -data-dir /var/lib/drover \
      -retry-join 10.0.0.2:4646 -retry-join 10.0.0.3:4646
  drover agent -client -data-dir /var/lib/drover -servers 10.0.0.1:4646,10.0.0.2:4646`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := agentConfig(cmd.Flags(), af, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runAgent(cmd, cfg)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&af.configs, "config", nil, "agent configuration file, HCL or JSON (repeatable; later files and flags win)")
	f.Bool("dev", false, "run a self-bootstrapping server and a client in one process; state in a temporary directory removed on exit")
	f.Bool("server", false, "run a server")
	f.Bool("client", false, "run a client")
	f.Int("bootstrap-expect", 0, "number of servers that form a new cluster")
	f.StringArray("retry-join", nil, "HTTP address (host:port) of another server to join (repeatable)")
	f.StringSlice("servers", nil, "HTTP addresses (host:port, comma-separated) of the servers a client talks to")
	f.String("data-dir", "", "directory for the agent's state")
	f.String("http-addr", "127.0.0.1:4646", "address of the HTTP API")
	f.String("raft-addr", "127.0.0.1:4647", "address of the Raft transport, reachable by the other servers")
	f.String("bind", "127.0.0.1", "IP address every service listens on unless -http-addr or -raft-addr says otherwise")
	f.String("node", "", "name of this agent (default: the host name)")
	f.String("region", "global", "region")
	f.String("dc", "dc1", "datacenter (also -datacenter)")
	f.String("node-class", "", "class of the client's node")
	f.String("node-pool", "default", "node pool of the client's node")
	f.String("client-intro-token", "", "client introduction token the node presents when it first registers (default $NOMAD_CLIENT_INTRO_TOKEN, which wins)")
	f.StringArray("meta", nil, "metadata key=value of the client's node (repeatable)")
	f.String("network-interface", "", "network interface the client fingerprints")
	f.BoolVar(&af.noSync, "raft-no-sync", false, "do not fsync the Raft log: faster serial writes, safe if the process dies but not if the machine does (-dev sets it)")
	f.String("log-level", "info", "log level: trace, debug, info, warn, error")
	f.Bool("log-json", false, "write logs as JSON")
	f.Bool("enable-debug", false, "serve Go's runtime profiles under /debug/pprof/ (-dev sets it)")
	f.Bool("acl-enabled", false, "enforce ACL tokens on the HTTP API (acl { enabled = true })")
	f.String("acl-replication-token", "", "management token of the authoritative region, to replicate ACL policies and global tokens with (acl { replication_token })")
	f.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "datacenter" {
			name = "dc"
		}
		return pflag.NormalizedName(name)
	})
	return cmd
}

// agentConfig layers the configuration: defaults (or the dev defaults),
// the -config files, the flags given. Warnings are logged (as JSON with
// log_json) once the configuration is valid, and printed to stderr with
// the errors otherwise; every error comes back at once.
func agentConfig(fs *pflag.FlagSet, af agentFlags, stderr io.Writer) (agent.Config, error) {
	base := config.Default()
	if dev, _ := fs.GetBool("dev"); dev {
		base = config.DevConfig()
	}
	flags, flagErr := config.FromFlags(fs)
	merged, warnings, err := config.Load(base, af.configs...)
	printWarnings := func() {
		for _, w := range warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
	}
	if err = errors.Join(err, flagErr); err != nil {
		printWarnings()
		return agent.Config{}, fmt.Errorf("invalid agent configuration:\n%w", err)
	}
	merged = merged.Merge(flags)
	// As Nomad's, $NOMAD_CLIENT_INTRO_TOKEN wins over -client-intro-token.
	if tok, ok := os.LookupEnv("NOMAD_CLIENT_INTRO_TOKEN"); ok {
		merged.Client.IntroToken = tok
	}
	checked, err := merged.Check()
	warnings = append(warnings, checked...)
	if err != nil {
		printWarnings()
		return agent.Config{}, fmt.Errorf("invalid agent configuration:\n%w", err)
	}
	level := hclog.LevelFromString(merged.LogLevel)
	cfg := agent.FromConfig(merged)
	cfg.NoSync = af.noSync
	cfg.Version = Version
	// An intercept logger: GET /v1/agent/monitor follows it at any
	// level, whatever level the agent writes at.
	cfg.Logger = hclog.NewInterceptLogger(&hclog.LoggerOptions{
		Name: "drover", Level: level, JSONFormat: merged.LogJSON, Output: stderr,
	})
	// The checks' warnings go through the logger, so that with log_json
	// every line the agent writes to stderr is JSON.
	for _, w := range warnings {
		cfg.Logger.Warn(w.String())
	}
	return cfg, nil
}

// runAgent runs the agent until SIGINT or SIGTERM (or the command's
// context ends), then shuts it down.
func runAgent(cmd *cobra.Command, cfg agent.Config) error {
	// The template engine logs through the standard logger, its lines
	// prefixed with their levels: they go through the agent's logger and
	// its level.
	log.SetFlags(0)
	log.SetOutput(cfg.Logger.Named("template").StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}))
	if p := agent.ServerGCPercent(cfg, os.Getenv); p > 0 {
		// server.gc_percent: a server trades heap for the collector's CPU.
		debug.SetGCPercent(p)
		cfg.Logger.Debug("collector set for a server", "gc_percent", p)
	}
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	a.Start()
	mode := "server"
	switch {
	case cfg.Dev:
		mode = "dev (server and client)"
	case cfg.Server && cfg.Client:
		mode = "server and client"
	case cfg.Client:
		mode = "client"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "==> drover agent started (%s): HTTP %s", mode, a.HTTPAddr())
	if c := a.Cluster(); c != nil {
		fmt.Fprintf(cmd.OutOrStdout(), ", Raft %s", c.Addr())
	}
	fmt.Fprintln(cmd.OutOrStdout())
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	select {
	case s := <-sigs:
		fmt.Fprintf(cmd.OutOrStdout(), "==> caught %s, shutting down\n", s)
	case <-ctx.Done():
	}
	// The shutdown is bounded (shutdown_timeout); a second signal ends the
	// wait at once.
	done := make(chan error, 1)
	go func() { done <- a.Shutdown() }()
	select {
	case err := <-done:
		return err
	case s := <-sigs:
		fmt.Fprintf(cmd.OutOrStdout(), "==> caught %s again, exiting without waiting for the shutdown\n", s)
		return fmt.Errorf("shutdown interrupted by a second %s", s)
	}
}
