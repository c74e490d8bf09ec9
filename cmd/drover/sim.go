package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/droverhq/drover/sim"
)

func init() { registerCommand("sim", newSimCommand) }

func newSimCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Simulate a fleet of client nodes and measure drover at scale",
		Long: `Simulate client nodes in one process: each registers as its own node, heartbeats,
watches its allocations and reports status and deployment health with the real
client code, running tasks with the mock driver.

  drover sim run -servers 127.0.0.1:4646 -nodes 1000
  drover sim bench -scenario place -cluster3`,
	}
	cmd.AddCommand(newSimRunCommand(), newSimBenchCommand(), newSimProbeReadsCommand())
	return cmd
}

// splitAddrs splits comma-separated addresses, dropping empty ones.
func splitAddrs(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// simLogger writes the simulated clients' logs to path at level, or
// discards them when path is empty.
func simLogger(path, level string) (hclog.Logger, func(), error) {
	if path == "" {
		return hclog.NewNullLogger(), func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	l := hclog.New(&hclog.LoggerOptions{Name: "sim", Level: hclog.LevelFromString(level), Output: f})
	return l, func() { f.Close() }, nil
}

// interruptible returns a context cancelled on SIGINT or SIGTERM.
func interruptible(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, syscall.SIGINT, syscall.SIGTERM)
}

func newSimRunCommand() *cobra.Command {
	var (
		servers, logFile, logLevel string
		cfg                        sim.FleetConfig
		zones                      string
		duration                   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run simulated client nodes against servers until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Servers = splitAddrs(servers)
			if len(cfg.Servers) == 0 {
				return errors.New("-servers is required (comma-separated HTTP addresses)")
			}
			cfg.Zones = splitAddrs(zones)
			logger, closeLog, err := simLogger(logFile, logLevel)
			if err != nil {
				return err
			}
			defer closeLog()
			cfg.Logger = logger
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			if duration > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, duration)
				defer cancel()
			}
			return simRun(ctx, cmd, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&servers, "servers", "", "servers' HTTP addresses, comma-separated")
	f.IntVar(&cfg.Nodes, "nodes", sim.DefaultNodes, "number of simulated nodes")
	f.Int64Var(&cfg.CPUMHz, "cpu", sim.DefaultCPUMHz, "CPU of each node (MHz)")
	f.Int64Var(&cfg.MemoryMB, "memory", sim.DefaultMemoryMB, "memory of each node (MB)")
	f.StringVar(&zones, "zones", strings.Join(sim.DefaultZones, ","), "values of meta.zone, given out round robin")
	f.StringVar(&cfg.NodePool, "node-pool", "default", "node pool of the simulated nodes")
	f.StringVar(&cfg.DataDir, "data-dir", "", "directory for the nodes' state (default: a temporary one, removed on exit)")
	f.IntVar(&cfg.StartRate, "start-rate", 2000, "nodes started per second")
	f.DurationVar(&duration, "duration", 0, "stop after this long (default: until interrupted)")
	f.StringVar(&logFile, "log-file", "", "write the simulated clients' logs to this file")
	f.StringVar(&logLevel, "log-level", "warn", "level of the simulated clients' logs")
	return cmd
}

// simRun starts the fleet, shows its registration, then its memory, and
// runs until ctx ends.
func simRun(ctx context.Context, cmd *cobra.Command, cfg sim.FleetConfig) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	base, _ := sim.RSS(0)
	fleet, err := sim.NewFleet(cfg)
	if err != nil {
		return err
	}
	defer fleet.Stop()
	p := sim.NewProgress(errOut)
	n := fleet.Nodes()
	if err := fleet.Start(ctx, func(i int) {
		if i%100 == 0 || i == n {
			p.Draw("start nodes", i, n)
		}
	}); err != nil {
		p.Done()
		return ignoreCancel(err)
	}
	if err := fleet.WaitRegistered(ctx, func(i int) { p.Draw("register", i, n) }); err != nil {
		p.Done()
		return ignoreCancel(err)
	}
	p.Done()
	rss, _ := sim.RSS(0)
	fmt.Fprintf(out, "==> %d nodes registered; simulator RSS %d MiB (%.1f KiB per node)\n",
		n, rss>>20, float64(rss-base)/1024/float64(max(n, 1)))
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			p.Done()
			fmt.Fprintln(out, "==> stopping the simulated nodes")
			return nil
		case <-tick.C:
			p.Draw("registered", fleet.Registered(), n)
		}
	}
}

// ignoreCancel turns an interruption into a clean exit.
func ignoreCancel(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func newSimBenchCommand() *cobra.Command {
	var (
		cfg                        sim.BenchConfig
		servers, outDir            string
		dev, cluster3, inProcess   bool
		logFile, logLevel, binPath string
		cpuProfile, memProfile     string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run a scale scenario (place, rollout, churn, failover, zones, groups, jobs) and record its figures",
		Long: `Run a scale scenario against existing servers (-servers) or servers it starts
itself: one dev agent (-dev, the default) or three servers (-cluster3), all on
127.0.0.1. The result is printed as a table and written as JSON under -out.

  place     one job of -count allocs (100,000) over -nodes (5,000)
  rollout   a -count (10,000) alloc job rolled out at -max-parallel (500)
  churn     -jobs (100) jobs of -count (100) allocs submitted at once
  failover  the rollout with the leader SIGKILLed halfway (needs -cluster3)
  zones     the rollout zone by zone over -zones (20) zones of the nodes
  groups    the rollout of a job of -groups (10) groups, one group at a time
  jobs      -jobs (100) jobs of -count (1,000) allocs placed, then one rolled
            out at -max-parallel (100); GET /v1/jobs is probed throughout`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Servers = splitAddrs(servers)
			cfg.Build = Version
			switch {
			case btoi(dev)+btoi(cluster3)+btoi(inProcess) > 1:
				return errors.New("-dev, -cluster3 and -inprocess exclude each other")
			case (dev || cluster3 || inProcess) && len(cfg.Servers) > 0:
				return errors.New("-servers excludes -dev, -cluster3 and -inprocess")
			case inProcess:
				cfg.Mode = sim.ModeInProcess
			case dev:
				cfg.Mode = sim.ModeDev
			case cluster3:
				cfg.Mode = sim.ModeCluster3
			}
			if len(cfg.Servers) == 0 && !inProcess {
				cfg.Binary = binPath
				if cfg.Binary == "" {
					exe, err := os.Executable()
					if err != nil {
						return fmt.Errorf("finding the drover binary: %w", err)
					}
					cfg.Binary = exe
				}
			}
			logger, closeLog, err := simLogger(logFile, logLevel)
			if err != nil {
				return err
			}
			defer closeLog()
			cfg.Logger = logger
			cfg.Progress = cmd.ErrOrStderr()
			stopProfiles, err := startCPUProfile(cpuProfile)
			if err != nil {
				return err
			}
			defer stopProfiles()
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			var writeErr error
			cfg.OnResult = func(res *sim.Result, err error) {
				writeHeapProfile(memProfile) // the fleet and servers still up
				if err != nil {
					res.Note("incomplete: %v", err)
				}
				if writeErr = res.WriteTable(cmd.OutOrStdout()); writeErr != nil {
					return
				}
				path, werr := res.WriteJSON(outDir)
				if werr != nil {
					writeErr = fmt.Errorf("writing the result: %w", werr)
					return
				}
				fmt.Fprintf(cmd.OutOrStdout(), "==> result written to %s; stopping the nodes and servers\n", path)
			}
			if _, err := sim.RunBench(ctx, cfg); err != nil {
				return err
			}
			return writeErr
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Scenario, "scenario", sim.ScenarioPlace, "place, rollout, churn, failover, zones, groups or jobs")
	f.StringVar(&servers, "servers", "", "existing servers' HTTP addresses, comma-separated")
	f.BoolVar(&dev, "dev", false, "start one dev agent (drover agent -dev) to run against")
	f.BoolVar(&cluster3, "cluster3", false, "start three servers (bootstrap_expect 3) to run against")
	f.BoolVar(&inProcess, "inprocess", false, "run one server inside this process (for profiling server and clients together)")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of this process to this file")
	f.StringVar(&memProfile, "memprofile", "", "write a heap profile of this process to this file once the scenario ends")
	f.BoolVar(&cfg.NoSync, "raft-no-sync", false, "start the cluster's servers with -raft-no-sync")
	f.IntVar(&cfg.Nice, "nice", 10, "nice value the simulator (the fleet) takes once the servers are up, so that servers on the same machine get the CPU first; 0 keeps its priority")
	f.StringVar(&binPath, "binary", "", "drover binary the servers run (default: this one)")
	f.StringVar(&cfg.Dir, "dir", "", "directory for the started servers' data and logs (default: temporary)")
	f.IntVar(&cfg.Nodes, "nodes", 0, "simulated nodes (default: the scenario's full size)")
	f.IntVar(&cfg.Count, "count", 0, "allocs per job (default: the scenario's full size)")
	f.IntVar(&cfg.MaxParallel, "max-parallel", 0, "rollout max_parallel (default 500)")
	f.DurationVar(&cfg.MinHealthyTime, "min-healthy-time", time.Second, "rollout min_healthy_time")
	f.IntVar(&cfg.Jobs, "jobs", 0, "churn, jobs: number of jobs (default 100)")
	f.IntVar(&cfg.Zones, "zones", 0, "zones: how many zones the nodes are in (default 20)")
	f.IntVar(&cfg.MaxSurge, "max-surge", 0, "rollout, zones: max_surge (default none)")
	f.BoolVar(&cfg.StickyDisk, "sticky-disk", false, "rollout, zones, groups: the job's ephemeral_disk is sticky (replacements go back to their node)")
	f.IntVar(&cfg.Groups, "groups", 0, "groups: how many groups the job rolls one at a time, by group_order (default 10)")
	f.Int64Var(&cfg.CPUMHz, "cpu", sim.DefaultCPUMHz, "CPU of each node (MHz)")
	f.Int64Var(&cfg.MemoryMB, "memory", sim.DefaultMemoryMB, "memory of each node (MB)")
	f.DurationVar(&cfg.Timeout, "timeout", 15*time.Minute, "bound on the scenario once the nodes are up")
	f.StringVar(&outDir, "out", "bench/results", "directory for the JSON result")
	f.StringVar(&logFile, "log-file", "", "write the simulated clients' logs to this file")
	f.StringVar(&logLevel, "log-level", "warn", "level of the simulated clients' logs")
	return cmd
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// startCPUProfile starts a CPU profile into path (none when empty); the
// returned function stops it.
func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// writeHeapProfile writes a heap profile into path (nothing when empty).
func writeHeapProfile(path string) {
	if path == "" {
		return
	}
	if f, err := os.Create(path); err == nil {
		_ = pprof.WriteHeapProfile(f)
		f.Close()
	}
}

// newSimProbeReadsCommand is the read probe sim bench starts in a process
// of its own (see sim.ProbeReads); hidden, as it is a part of sim bench.
func newSimProbeReadsCommand() *cobra.Command {
	var servers, job string
	var interval time.Duration
	cmd := &cobra.Command{
		Use:    "probe-reads",
		Short:  "Time the leader and job reads of each server until interrupted (used by sim bench)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			return sim.ProbeReads(ctx, splitAddrs(servers), job, interval, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&servers, "servers", "", "servers' HTTP addresses, comma-separated")
	cmd.Flags().StringVar(&job, "job", "", "the job to read")
	cmd.Flags().DurationVar(&interval, "interval", sim.ReadProbeInterval, "time between two rounds of reads of a server")
	return cmd
}
