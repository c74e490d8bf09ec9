package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/client"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
)

// Sentinel errors.
var (
	// ErrInvalidConfig: the fleet or scenario configuration is unusable.
	ErrInvalidConfig = errors.New("invalid simulation config")
	// ErrTimeout: a scenario did not reach its goal in time.
	ErrTimeout = errors.New("simulation timed out")
)

// Defaults of a FleetConfig.
const (
	DefaultNodes    = 1000
	DefaultCPUMHz   = 4000
	DefaultMemoryMB = 8192
	// MetaSim is the node meta key set to "true" on every simulated node;
	// the scenarios' jobs are constrained to it.
	MetaSim = "sim"
)

// DefaultZones are the values of meta.zone, given out in turn.
var DefaultZones = []string{"zone-a", "zone-b", "zone-c"}

// FleetConfig describes the simulated nodes.
type FleetConfig struct {
	// Servers are the servers' HTTP addresses; required.
	Servers []string
	// Nodes is how many nodes to run (DefaultNodes).
	Nodes int
	// DataDir holds one directory per node; when empty, a temporary
	// directory under /dev/shm (if writable) removed by Stop.
	DataDir string
	// CPUMHz and MemoryMB are each node's resources.
	CPUMHz   int64
	MemoryMB int64
	// Zones are the values of meta.zone, given out round robin.
	Zones []string
	// NodePool is the nodes' pool ("default").
	NodePool string
	// StartRate bounds how many nodes start per second (0: 2,000), so
	// that registrations do not arrive all at once.
	StartRate int
	// Logger receives the agents' logs (warnings and above are useful);
	// discarded when nil.
	Logger hclog.Logger
}

func (c FleetConfig) withDefaults() (FleetConfig, error) {
	if len(c.Servers) == 0 {
		return c, fmt.Errorf("%w: at least one server address required", ErrInvalidConfig)
	}
	if c.Nodes == 0 {
		c.Nodes = DefaultNodes
	}
	if c.Nodes < 0 {
		return c, fmt.Errorf("%w: %d nodes", ErrInvalidConfig, c.Nodes)
	}
	if c.CPUMHz <= 0 {
		c.CPUMHz = DefaultCPUMHz
	}
	if c.MemoryMB <= 0 {
		c.MemoryMB = DefaultMemoryMB
	}
	if len(c.Zones) == 0 {
		c.Zones = DefaultZones
	}
	if c.StartRate <= 0 {
		c.StartRate = 2000
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c, nil
}

// tempRoot is where a fleet's temporary data dir goes: /dev/shm when it
// is a writable directory (memory-backed: the alloc runners' directories
// and state files of thousands of simulated allocations then cost no disk
// I/O), else the system's temporary directory.
func tempRoot() string {
	const shm = "/dev/shm"
	if fi, err := os.Stat(shm); err == nil && fi.IsDir() {
		if f, err := os.CreateTemp(shm, ".drover-sim-probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return shm
		}
	}
	return os.TempDir()
}

// NodeName is the name of the i-th simulated node.
func NodeName(i int) string { return fmt.Sprintf("sim-%d", i) }

// Zone is the zone of the i-th node.
func Zone(zones []string, i int) string { return zones[i%len(zones)] }

// Fleet is a running set of simulated nodes. Create it with NewFleet.
type Fleet struct {
	cfg     FleetConfig
	tempDir string
	http    *http.Client
	// servers is the node client every node forks its own from: one
	// connection pool, and a server each node picks at random and
	// rebalances over, as a real client does.
	servers *apiclient.NodeClient
	driver  drivers.Driver
	// jobs is shared by all nodes: one decoded copy of each job version
	// for the whole fleet.
	jobs *client.JobCache

	mu     sync.Mutex
	agents []*client.Agent
	wg     sync.WaitGroup
	cancel context.CancelFunc
}

// NewFleet checks cfg and prepares the shared connection pool; Start runs
// the nodes.
func NewFleet(cfg FleetConfig) (*Fleet, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	f := &Fleet{cfg: cfg, driver: mock.New(mock.Options{}), jobs: client.NewJobCache()}
	if f.cfg.DataDir == "" {
		if f.tempDir, err = os.MkdirTemp(tempRoot(), "drover-sim-"); err != nil {
			return nil, err
		}
		f.cfg.DataDir = f.tempDir
	}
	// Every node keeps a long poll open: the pool must hold one idle
	// connection per node and server, or each wave of answers would close
	// and reopen thousands of connections.
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: cfg.Nodes + 64,
		IdleConnTimeout:     15 * time.Minute,
		WriteBufferSize:     4 << 10,
		ReadBufferSize:      4 << 10,
	}
	f.http = &http.Client{Transport: tr}
	if f.servers, err = apiclient.NewNodeClientWithHTTPClient(cfg.Servers, f.http); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return f, nil
}

// Start creates and runs the nodes, at most StartRate per second, and
// returns once all are started (not necessarily registered) or ctx ends.
// progress, when not nil, is called after each node starts.
func (f *Fleet) Start(ctx context.Context, progress func(started int)) error {
	runCtx, cancel := context.WithCancel(context.Background())
	f.mu.Lock()
	f.cancel = cancel
	f.mu.Unlock()
	interval := time.Second / time.Duration(f.cfg.StartRate)
	next := time.Now()
	for i := 0; i < f.cfg.Nodes; i++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		a, err := client.New(f.agentConfig(i))
		if err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		f.mu.Lock()
		f.agents = append(f.agents, a)
		f.mu.Unlock()
		f.wg.Add(1)
		go func() { defer f.wg.Done(); a.Run(runCtx) }()
		if progress != nil {
			progress(i + 1)
		}
		next = next.Add(interval)
		if d := time.Until(next); d > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
			}
		}
	}
	return nil
}

// agentConfig is the i-th node's client configuration.
func (f *Fleet) agentConfig(i int) client.Config {
	return client.Config{
		DataDir:       filepath.Join(f.cfg.DataDir, NodeName(i)),
		NodeName:      NodeName(i),
		Datacenter:    client.DefaultDatacenter,
		NodePool:      f.cfg.NodePool,
		Meta:          map[string]string{"zone": Zone(f.cfg.Zones, i), MetaSim: "true"},
		ServerAPI:     client.NewHTTPServersOver(f.servers.Fork()),
		Drivers:       []drivers.Driver{f.driver},
		Logger:        f.cfg.Logger.With("node", NodeName(i)),
		CPUTotalMHz:   f.cfg.CPUMHz,
		MemoryTotalMB: f.cfg.MemoryMB,
		HostEnv:       map[string]string{},
		Jobs:          f.jobs,
	}
}

// Started returns how many nodes have been started.
func (f *Fleet) Started() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.agents)
}

// Registered returns how many nodes the servers have accepted.
func (f *Fleet) Registered() int {
	f.mu.Lock()
	agents := f.agents
	f.mu.Unlock()
	n := 0
	for _, a := range agents {
		if a.Registered() {
			n++
		}
	}
	return n
}

// WaitRegistered waits until every node is registered, calling progress
// (when not nil) every poll.
func (f *Fleet) WaitRegistered(ctx context.Context, progress func(registered int)) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		n := f.Registered()
		if progress != nil {
			progress(n)
		}
		if n == f.cfg.Nodes {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %d of %d nodes registered: %w", ErrTimeout, n, f.cfg.Nodes, ctx.Err())
		case <-tick.C:
		}
	}
}

// Nodes returns the configured node count.
func (f *Fleet) Nodes() int { return f.cfg.Nodes }

// Stop stops every node, killing its tasks without telling the servers
// (a simulated fleet going away), and removes a temporary data dir.
func (f *Fleet) Stop() {
	f.mu.Lock()
	cancel, agents := f.cancel, f.agents
	f.agents = nil
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for _, a := range agents {
		wg.Add(1)
		sem <- struct{}{}
		go func() { defer wg.Done(); a.Shutdown(false); <-sem }()
	}
	wg.Wait()
	f.wg.Wait()
	f.http.CloseIdleConnections()
	if f.tempDir != "" {
		_ = os.RemoveAll(f.tempDir)
	}
}
