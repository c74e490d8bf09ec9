package sim

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Scenario names.
const (
	ScenarioPlace    = "place"
	ScenarioRollout  = "rollout"
	ScenarioChurn    = "churn"
	ScenarioFailover = "failover"
	ScenarioZones    = "zones"
	ScenarioGroups   = "groups"
	ScenarioJobs     = "jobs"
)

// Scenarios lists the scenario names.
var Scenarios = []string{ScenarioPlace, ScenarioRollout, ScenarioChurn, ScenarioFailover, ScenarioZones, ScenarioGroups, ScenarioJobs}

// BenchConfig is one scenario run. Zero sizes take the scenario's full
// size (see Sizes).
type BenchConfig struct {
	Scenario string
	// Build is the running binary's version, recorded with the result.
	Build string
	// Servers, when set, are existing servers' HTTP addresses; otherwise
	// the bench starts its own (Mode, Binary).
	Servers []string
	Mode    string // ModeDev, ModeCluster3 or ModeInProcess
	Binary  string
	// Dir holds the started servers' data and logs (temporary if empty).
	Dir    string
	NoSync bool
	// Nice, when above 0, is the nice value this process (the fleet) takes
	// once the servers are up, unless they run in-process: clients run on
	// machines of their own in production, so on a shared machine the
	// servers get the CPU first.
	Nice int

	Nodes          int
	Count          int           // allocs per job
	MaxParallel    int           // rollout, failover
	MaxSurge       int           // rollout, zones: max_surge (0: none)
	StickyDisk     bool          // rollout, zones, groups: ephemeral_disk sticky
	MinHealthyTime time.Duration // rollout, failover
	Jobs           int           // churn
	Zones          int           // zones: how many zones the nodes are in (default 20)
	Groups         int           // groups: how many groups the job rolls one at a time (default 10)
	CPUMHz         int64
	MemoryMB       int64

	// Timeout bounds the scenario after the fleet is up (default 15m).
	Timeout time.Duration
	// Progress receives the progress line (nil: none).
	Progress io.Writer
	// Logger receives the simulated clients' logs (nil: discarded).
	Logger hclog.Logger
	// OnResult, when set, receives the result (complete, or partial with
	// the error) before the fleet and the servers are stopped, which
	// takes a while with many allocations.
	OnResult func(*Result, error)
}

// Sizes returns the full-size defaults of a scenario: nodes, allocs per
// job, max_parallel, jobs.
func Sizes(scenario string) (nodes, count, maxParallel, jobs int) {
	switch scenario {
	case ScenarioPlace:
		return 5000, 100000, 0, 1
	case ScenarioChurn:
		return 1000, 100, 0, 100
	case ScenarioZones:
		return 5000, 10000, 500, 1
	case ScenarioJobs:
		return 5000, 1000, 100, 100
	default: // rollout, failover
		return 1000, 10000, 500, 1
	}
}

func (c BenchConfig) withDefaults() (BenchConfig, error) {
	known := false
	for _, s := range Scenarios {
		known = known || s == c.Scenario
	}
	if !known {
		return c, fmt.Errorf("%w: unknown scenario %q (want one of %v)", ErrInvalidConfig, c.Scenario, Scenarios)
	}
	nodes, count, mp, jobs := Sizes(c.Scenario)
	if c.Nodes <= 0 {
		c.Nodes = nodes
	}
	if c.Count <= 0 {
		c.Count = count
	}
	if c.MaxParallel <= 0 {
		c.MaxParallel = mp
	}
	if c.Jobs <= 0 {
		c.Jobs = jobs
	}
	if c.MinHealthyTime <= 0 {
		c.MinHealthyTime = time.Second
	}
	if c.Scenario == ScenarioZones && c.Zones <= 0 {
		c.Zones = 20
	}
	if c.Scenario == ScenarioGroups && c.Groups <= 1 {
		c.Groups = 10
	}
	if c.Timeout <= 0 {
		c.Timeout = 15 * time.Minute
	}
	if len(c.Servers) == 0 {
		if c.Mode == "" {
			c.Mode = ModeDev
			if c.Scenario == ScenarioFailover {
				c.Mode = ModeCluster3
			}
		}
		if c.Scenario == ScenarioFailover && c.Mode != ModeCluster3 {
			return c, fmt.Errorf("%w: failover needs three servers (-cluster3)", ErrInvalidConfig)
		}
	} else if c.Scenario == ScenarioFailover {
		return c, fmt.Errorf("%w: failover kills a server, so it starts its own (-cluster3)", ErrInvalidConfig)
	}
	return c, nil
}

// RunBench starts the servers (unless given), the fleet, runs the
// scenario and returns its result. The servers and the fleet are stopped
// before it returns.
func RunBench(ctx context.Context, cfg BenchConfig) (*Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	res := &Result{
		Scenario: cfg.Scenario, Servers: "external", Started: time.Now().UTC(), Machine: ReadMachine(),
		Params: map[string]any{"nodes": cfg.Nodes, "count": cfg.Count},
	}
	res.Machine.Build = cfg.Build
	res.Machine.CalibrationMS = Calibrate()
	switch cfg.Scenario {
	case ScenarioRollout, ScenarioFailover, ScenarioZones, ScenarioGroups:
		res.Params["max_parallel"] = cfg.MaxParallel
		res.Params["min_healthy_time"] = cfg.MinHealthyTime.String()
		if cfg.Scenario == ScenarioZones {
			res.Params["zones"] = cfg.Zones
		}
		if cfg.Scenario == ScenarioGroups {
			res.Params["groups"] = cfg.Groups
		}
		if cfg.MaxSurge > 0 {
			res.Params["max_surge"] = cfg.MaxSurge
		}
		if cfg.StickyDisk {
			res.Params["sticky_disk"] = true
		}
	case ScenarioChurn:
		res.Params["jobs"] = cfg.Jobs
	case ScenarioJobs:
		res.Params["jobs"] = cfg.Jobs
		res.Params["max_parallel"] = cfg.MaxParallel
		res.Params["min_healthy_time"] = cfg.MinHealthyTime.String()
	}
	e := &env{res: res, progress: NewProgress(cfg.Progress), cfg: cfg}
	err = runBench(ctx, e)
	e.progress.Done()
	if cfg.OnResult != nil {
		cfg.OnResult(res, err)
	}
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
	return res, err
}

// runBench starts the servers and the fleet (registering their teardown
// in e.cleanups) and runs the scenario.
func runBench(ctx context.Context, e *env) error {
	cfg, res := e.cfg, e.res
	if len(cfg.Servers) > 0 {
		addrs := cfg.Servers
		e.addrs = func() []string { return addrs }
	} else if cfg.Mode == ModeInProcess {
		res.Servers = cfg.Mode
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		p, err := startInProcess(cfg.Dir, nil)
		if err != nil {
			return err
		}
		e.cleanups = append(e.cleanups, p.stop)
		if err := p.waitLeader(sctx); err != nil {
			return err
		}
		addr := p.addr()
		e.addrs = func() []string { return []string{addr} }
	} else {
		res.Servers = cfg.Mode
		res.Params["raft_no_sync"] = cfg.NoSync || cfg.Mode == ModeDev
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		srv, err := StartServers(sctx, ServersConfig{Mode: cfg.Mode, Binary: cfg.Binary, Dir: cfg.Dir, NoSync: cfg.NoSync})
		cancel()
		if err != nil {
			return err
		}
		e.cleanups = append(e.cleanups, srv.Stop)
		e.servers, e.addrs = srv, srv.HTTPAddrs
	}

	if cfg.Mode != ModeInProcess {
		// Before the priority drops: the probe keeps this process's.
		probe, err := startReadProbe(cfg.Binary, e.addrs(), scenarioJobID(cfg.Scenario, res))
		if err != nil {
			return err
		}
		e.reads = probe
		e.cleanups = append(e.cleanups, probe.stop)
	}
	if cfg.Nice > 0 && cfg.Mode != ModeInProcess {
		if err := lowerPriority(cfg.Nice); err != nil {
			return err
		}
		res.Params["fleet_nice"] = cfg.Nice
	}
	base := liveRSS()
	fleet, err := NewFleet(FleetConfig{
		Servers: e.addrs(), Nodes: cfg.Nodes, CPUMHz: cfg.CPUMHz, MemoryMB: cfg.MemoryMB, Logger: cfg.Logger,
		Zones: zoneNames(cfg.Zones),
	})
	if err != nil {
		return err
	}
	e.fleet = fleet
	e.cleanups = append(e.cleanups, fleet.Stop)
	startAt := time.Now()
	fctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if err := fleet.Start(fctx, func(n int) {
		if n%100 == 0 || n == cfg.Nodes {
			e.progress.Draw("start nodes", n, cfg.Nodes)
		}
	}); err != nil {
		return err
	}
	if err := fleet.WaitRegistered(fctx, func(n int) { e.progress.Draw("register", n, cfg.Nodes) }); err != nil {
		return err
	}
	e.progress.Done()
	res.Add("nodes_registered_s", round(time.Since(startAt).Seconds()), "s", "")
	idle := liveRSS()
	res.Add("sim_rss_per_idle_node_kb", round(float64(idle-base)/1024/float64(cfg.Nodes)), "KiB", "")

	sctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	switch cfg.Scenario {
	case ScenarioPlace:
		err = runPlace(sctx, e)
	case ScenarioRollout:
		_, err = runRollout(sctx, e, "rollout", false)
	case ScenarioChurn:
		err = runChurn(sctx, e)
	case ScenarioFailover:
		err = runFailover(sctx, e)
	case ScenarioZones:
		_, err = runRollout(sctx, e, "zones", false)
	case ScenarioGroups:
		_, err = runRollout(sctx, e, "groups", false)
	case ScenarioJobs:
		err = runJobs(sctx, e)
	}
	e.progress.Done()
	if err != nil {
		e.serverRSS("")
		return err
	}
	busy := liveRSS()
	res.Add("sim_rss_per_node_kb", round(float64(busy-base)/1024/float64(cfg.Nodes)), "KiB", "")
	res.Add("sim_rss_mb", round(float64(busy)/(1<<20)), "MiB", "")
	e.serverRSS("")
	return nil
}

// serverRSS records the servers' resident memory under the given
// figure prefix: the leader's when it answers, and the largest of all.
func (e *env) serverRSS(prefix string) {
	if e.servers == nil {
		return
	}
	var largest int64
	for _, p := range e.servers.Procs() {
		if p.Exited() {
			continue
		}
		if rss, err := RSS(p.PID()); err == nil {
			largest = max(largest, rss)
		}
	}
	if largest > 0 {
		e.res.Add(prefix+"max_server_rss_mb", round(float64(largest)/(1<<20)), "MiB", "")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := e.servers.Leader(ctx)
	if err != nil {
		// Right after a big placement the servers can be too busy to
		// say who leads within the bound; no failover happens then, so
		// the leader last seen is taken, and the note says so.
		if l = e.servers.LastLeader(); l == nil {
			e.res.Note("%sleader RSS not read: %v", prefix, err)
			return
		}
		e.res.Note("%sleader RSS read from %s, the leader last seen: %v", prefix, l.Name, err)
	}
	rss, err := RSS(l.PID())
	if err != nil {
		e.res.Note("%sleader RSS not read: %v", prefix, err)
		return
	}
	e.res.Add(prefix+"leader_rss_mb", round(float64(rss)/(1<<20)), "MiB", "<= 2048 at 100,000 allocs")
}

// liveRSS returns this process's RSS after a collection that returns
// freed memory, so that it reflects what is live.
func liveRSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	rss, err := RSS(0)
	if err != nil {
		return 0
	}
	return rss
}

// round keeps three decimals.
func round(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }
