// Package client is the client agent: it fingerprints the node,
// registers it with the servers, heartbeats, watches the node's
// allocations, runs them through alloc runners and reports their status.
//
// The agent speaks to the servers only through ServerAPI (HTTP in
// production, see website/api/client.md): it imports domain types,
// drivers, the client's own packages and the API client, never a server
// package, for a client may run on another machine.
//
// Goroutines: Run starts five — the registration and heartbeat loop, the
// allocation watch (a blocking query), the status reporter (one sender
// that coalesces), the stop of allocations when the servers are out of
// reach too long (stop_on_client_after), and the alloc runners' own.
// None exits because the
// servers are unreachable: every call is retried with a growing pause
// (DefaultRetryInterval doubling to MaxRetryInterval) and, through
// HTTPServers, on the next server. The heartbeat loop also picks, every
// five to ten minutes, a server at random to talk to (RebalanceMin), so
// that the nodes of a fleet spread over the servers again after one came
// back.
package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/client/allocrunner"
	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/client/network"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// Agent is a client agent. Create it with New, then Run; stop it with
// Shutdown.
type Agent struct {
	cfg      Config
	logger   hclog.Logger
	clock    clock.Clock
	api      ServerAPI
	drivers  map[string]drivers.Driver
	node     *structs.Node
	reporter *reporter
	usage    *usageCache  // tasks' recent resource usage samples
	host     *hostSampler // the host's recent CPU samples
	// templates is what tasks' templates need of the agent.
	templates allocrunner.TemplateConfig
	// networks gives bridge allocations their namespaces (networks.go).
	networks *network.Manager
	// identity is the node's identity (node_identity.go).
	identity *identityKeeper
	// heldGen counts the changes of the allocs' jobs (heldChanged);
	// held is heldJobs' list as of generation heldFor-1 (under mu).
	heldGen atomic.Uint64
	held    []*structs.Job
	heldFor uint64
	// heldRefs counts the allocs of each job version the agent holds
	// (holdJob, releaseJob; under mu): heldJobs lists them.
	heldRefs map[structs.JobRef]*heldJob
	// disconnecting counts the allocs whose group has a
	// stop_on_client_after (countDisconnects; under mu).
	disconnecting int

	ctx    context.Context
	cancel context.CancelFunc
	loops  sync.WaitGroup // heartbeat, watch and reporter goroutines
	gcs    sync.WaitGroup // goroutines collecting killed allocations

	runOnce      sync.Once
	shutdownOnce sync.Once
	firstReg     sync.Once
	registeredCh chan struct{} // closed at the first registration

	mu         sync.Mutex
	allocs     map[string]*allocEntry
	ttl        time.Duration
	registered bool
	// lastOK is when a heartbeat (or registration) last got through, or
	// the agent started; allocsAdded wakes disconnectLoop (capacity 1).
	lastOK      time.Time
	allocsAdded chan struct{}

	// rebalance, when the ServerAPI can, moves the node's calls to a
	// server picked at random; heartbeatLoop calls it every
	// rebalanceInterval.
	rebalance func()
}

// RebalanceMin is the least time between two picks of a server to talk to
// (HTTPServers.Rebalance); each pause adds up to RebalanceMin more at
// random, as Nomad's clients, so that a fleet does not move at once.
const RebalanceMin = 5 * time.Minute

func rebalanceInterval() time.Duration {
	return RebalanceMin + time.Duration(rand.Int64N(int64(RebalanceMin)))
}

// New fingerprints the node and prepares the agent; it contacts no
// server.
func New(cfg Config) (*Agent, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	api := cfg.ServerAPI
	if api == nil {
		if api, err = NewHTTPServers(cfg.Servers); err != nil {
			return nil, err
		}
	}
	id, err := loadNodeID(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	secret, err := loadNodeSecret(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	var rebalance func()
	if r, ok := api.(interface{ Rebalance() }); ok {
		rebalance = r.Rebalance
	}
	raw := api
	api = nodeAuth{api: api, secret: secret}
	a := &Agent{
		cfg: cfg, logger: cfg.Logger.Named("client"), clock: cfg.Clock, api: api, rebalance: rebalance,
		drivers:      make(map[string]drivers.Driver, len(cfg.Drivers)),
		allocs:       map[string]*allocEntry{},
		registeredCh: make(chan struct{}),
		allocsAdded:  make(chan struct{}, 1),
		usage:        newUsageCache(),
		host:         newHostSampler(),
	}
	for _, d := range cfg.Drivers {
		a.drivers[d.Name()] = d
	}
	if a.networks, err = network.New(cfg.Bridge); err != nil {
		return nil, errors.Join(ErrInvalidConfig, err)
	}
	a.templates = templateSetup(cfg, raw, secret, a) // templates.go
	a.node = buildNode(cfg, id)
	a.reporter = newReporter(a.api.UpdateAllocs, a.clock, a.logger, cfg.RetryInterval, reportWindow)
	a.identity = newNodeIdentity(a, raw) // node_identity.go
	a.ctx, a.cancel = context.WithCancel(context.Background())
	return a, nil
}

// NodeID returns the node's ID.
func (a *Agent) NodeID() string { return a.node.ID }

// Node returns a copy of the node as the agent registers it.
func (a *Agent) Node() *structs.Node { return a.node.Copy() }

// Registered reports whether the servers have accepted the node's latest
// registration.
func (a *Agent) Registered() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.registered
}

// Run re-attaches to the allocations saved on disk, lets the drivers
// remove the tasks no allocation owns (drivers.OrphanReaper), then
// registers the node, heartbeats, watches and runs its allocations until
// ctx ends or Shutdown is called. It returns once the agent's loops have stopped;
// tasks keep running until Shutdown says what to do with them.
func (a *Agent) Run(ctx context.Context) {
	a.runOnce.Do(func() {
		stop := context.AfterFunc(ctx, a.cancel)
		defer stop()
		a.heartbeatOK(a.clock.Now())
		a.restore()
		a.reapOrphans()
		a.reconcileNetworks()
		a.loops.Add(4)
		go func() { defer a.loops.Done(); a.reporter.run(a.ctx) }()
		go func() { defer a.loops.Done(); a.heartbeatLoop(a.ctx) }()
		go func() { defer a.loops.Done(); a.watchLoop(a.ctx) }()
		go func() { defer a.loops.Done(); a.disconnectLoop(a.ctx) }()
		if a.identity.fetch != nil {
			a.loops.Add(1)
			go func() { defer a.loops.Done(); a.identity.run(a.ctx, a.registeredCh) }()
		}
		<-a.ctx.Done()
		a.loops.Wait()
	})
}

// Shutdown stops the agent. With stopTasks every allocation's tasks are
// killed (a dev agent on SIGINT) and their final status is sent if a
// server answers within a few seconds; without, the tasks keep running
// for the next client to re-attach to (a restart or upgrade). It returns
// once the runners have stopped.
func (a *Agent) Shutdown(stopTasks bool) {
	a.shutdownOnce.Do(func() {
		a.cancel()
		a.runOnce.Do(func() {}) // a Run that never started never will
		a.loops.Wait()
		a.mu.Lock()
		entries := make([]*allocEntry, 0, len(a.allocs))
		for _, e := range a.allocs {
			entries = append(entries, e)
		}
		a.mu.Unlock()
		for _, e := range entries {
			e.stopTracker()
			if e.runner == nil {
				continue
			}
			if stopTasks {
				e.runner.SkipShutdownDelay()
				e.runner.Kill()
			} else {
				e.runner.Detach()
			}
		}
		for _, e := range entries {
			if e.runner != nil {
				<-e.runner.Done()
			}
		}
		a.gcs.Wait()
		if stopTasks {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := a.reporter.flush(ctx); err != nil {
				a.logger.Warn("sending the final alloc status", "error", err)
			}
		}
	})
}

// Unstopped lists the allocations whose runners have not stopped, for a
// shutdown that took too long to name them.
func (a *Agent) Unstopped() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for id, e := range a.allocs {
		if e.runner == nil {
			continue
		}
		select {
		case <-e.runner.Done():
		default:
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// register registers the node, retrying until a server accepts it or ctx
// ends.
func (a *Agent) register(ctx context.Context) bool {
	backoff := a.cfg.RetryInterval
	for {
		ttl, err := a.api.Register(a.introduce(ctx), a.node)
		if err == nil {
			a.mu.Lock()
			a.ttl, a.registered = ttl, true
			a.mu.Unlock()
			a.firstReg.Do(func() { close(a.registeredCh) })
			a.logger.Info("node registered", "node_id", a.node.ID, "heartbeat_ttl", ttl)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		a.logger.Warn("registering the node failed; retrying", "error", err, "in", backoff)
		if !sleep(ctx, a.clock, jitter(backoff)) {
			return false
		}
		backoff = min(2*backoff, MaxRetryInterval)
	}
}

// heartbeatLoop registers, then heartbeats about twice per TTL. A node
// the servers forgot registers again, and so does a node that could not
// heartbeat for longer than its TTL: the servers may have marked it down,
// and a registration makes it ready again. A failed heartbeat is retried
// sooner, well within the TTL.
func (a *Agent) heartbeatLoop(ctx context.Context) {
	if !a.register(ctx) {
		return
	}
	lastOK := a.clock.Now()
	next := a.beatInterval()
	backoff := a.cfg.RetryInterval
	a.heartbeatOK(lastOK)
	rebalanceAt := lastOK.Add(rebalanceInterval())
	for sleep(ctx, a.clock, next) {
		a.mu.Lock()
		ttl := a.ttl
		a.mu.Unlock()
		var err error
		if a.clock.Now().Sub(lastOK) > ttl {
			err = fmt.Errorf("%w, perhaps: no heartbeat got through within the TTL", ErrNodeUnknown)
		} else {
			ttl, err = a.api.Heartbeat(ctx, a.node.ID)
		}
		switch {
		case err == nil:
			a.mu.Lock()
			a.ttl = ttl
			a.mu.Unlock()
			lastOK = a.clock.Now()
			a.heartbeatOK(lastOK)
			backoff = a.cfg.RetryInterval
			next = a.beatInterval()
			if a.rebalance != nil && !lastOK.Before(rebalanceAt) {
				a.rebalance()
				rebalanceAt = lastOK.Add(rebalanceInterval())
			}
		case errors.Is(err, ErrNodeUnknown):
			a.logger.Warn("registering the node again", "node_id", a.node.ID, "reason", err)
			a.mu.Lock()
			a.registered = false
			a.mu.Unlock()
			if !a.register(ctx) {
				return
			}
			lastOK = a.clock.Now()
			a.heartbeatOK(lastOK)
			backoff = a.cfg.RetryInterval
			next = a.beatInterval()
			// The servers may have marked the allocations unknown while
			// the node was away: say again how they are.
			a.reportAll()
		case ctx.Err() != nil:
			return
		default:
			a.logger.Warn("heartbeat failed; retrying", "error", err, "in", backoff)
			next = min(jitter(backoff), a.beatInterval())
			backoff = min(2*backoff, MaxRetryInterval)
		}
	}
}

// beatInterval is half the TTL, jittered down by up to a tenth.
func (a *Agent) beatInterval() time.Duration {
	a.mu.Lock()
	ttl := a.ttl
	a.mu.Unlock()
	if ttl <= 0 {
		ttl = 10 * time.Second
	}
	half := ttl / 2
	return half - time.Duration(rand.Int64N(int64(half/10)+1))
}

// jitter returns d less up to a quarter, so that many clients do not
// retry in step.
func jitter(d time.Duration) time.Duration {
	return d - time.Duration(rand.Int64N(int64(d/4)+1))
}
