// Package agent assembles a drover agent: a server (the replicated state
// machine, the Raft server, the leader's services, the HTTP API and the
// discovery of the other servers), a client (package client, which runs
// allocations, with its logs endpoint), or both in one process.
package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/client"
	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/server"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
	"github.com/droverhq/drover/telemetry"
	"github.com/droverhq/drover/tlsutil"
	"github.com/droverhq/drover/ui"
)

// The leader's plan applier keeps a large plan's entries in flight
// together through this interface.
var _ server.Enqueuer = (*cluster.Server)(nil)

// ErrConfig: the configuration cannot run.
var ErrConfig = errors.New("invalid agent configuration")

// Agent is one running agent: a server, a client, or both.
type Agent struct {
	cfg    Config
	logger hclog.Logger
	// closeConns is set once the agent stops (stopServingKeepAlives).
	closeConns atomic.Bool

	// The server; all nil when the agent runs no server.
	fsm     *fsm.FSM
	raft    *cluster.Server
	leader  *server.Leader
	members *members
	// left are the servers this one forced out (force_leave.go).
	left forceLeft
	// fed is what this server knows of the other regions' servers
	// (federation.go); fedHTTP are the clients of their HTTP APIs, by
	// region, each checking its region's server name with TLS.
	fed       *cluster.Federation
	fedHTTPMu sync.Mutex
	fedHTTP   map[string]*http.Client
	api       *httpapi.Server
	// autopilot holds the leader's latest view of the servers' health.
	autopilot autopilotState

	// The client; nil when the agent runs none. servers is its client of
	// the servers' HTTP APIs, which a client-only agent's API forwards to
	// (client_api.go).
	client  *client.Agent
	servers *apiclient.NodeClient

	// telemetry is the process's metrics (metrics.go).
	telemetry *telemetry.Telemetry

	listener net.Listener
	http     *http.Server
	// serf serves the join exchange on the serf port (serf.go); nil
	// without one.
	serf         *http.Server
	serfListener net.Listener
	// tls builds every tls.Config of the agent (see tls.go); agentHTTP is
	// its one client of other servers' HTTP APIs.
	tls       *tlsutil.Configurator
	agentHTTP *http.Client
	devDir    string // removed on shutdown

	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// New checks cfg, opens the Raft state, prepares the client and binds the
// HTTP listener. Start runs them.
func New(cfg Config) (*Agent, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Region == "" {
		cfg.Region = structs.DefaultRegion
	}
	if cfg.Datacenter == "" {
		cfg.Datacenter = structs.DefaultDatacenter
	}
	if cfg.NodeName == "" {
		cfg.NodeName, _ = os.Hostname()
	}
	a := &Agent{cfg: cfg, logger: cfg.Logger}
	if cfg.Dev {
		dir, err := os.MkdirTemp("", "drover-dev-")
		if err != nil {
			return nil, fmt.Errorf("dev data directory: %w", err)
		}
		a.devDir, a.cfg.DataDir = dir, dir
		a.cfg.Server, a.cfg.Client = true, true
		a.cfg.BootstrapExpect = 1
		a.cfg.Servers = nil
		// The state is thrown away on exit: no point syncing it to disk.
		a.cfg.NoSync = true
	}
	if err := a.check(); err != nil {
		a.removeDevDir()
		return nil, err
	}
	if err := a.openTLS(); err != nil {
		a.removeDevDir()
		return nil, err
	}
	if err := a.openTelemetry(); err != nil {
		a.removeDevDir()
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := a.open(); err != nil {
		a.removeDevDir()
		return nil, err
	}
	return a, nil
}

func (a *Agent) check() error {
	switch {
	case !a.cfg.Server && !a.cfg.Client:
		return fmt.Errorf("%w: neither server nor client enabled; pass -server, -client or -dev", ErrConfig)
	case a.cfg.DataDir == "":
		return fmt.Errorf("%w: -data-dir is required (or use -dev)", ErrConfig)
	case a.cfg.BootstrapExpect < 0:
		return fmt.Errorf("%w: -bootstrap-expect must not be negative", ErrConfig)
	case a.cfg.HTTPAddr == "":
		return fmt.Errorf("%w: an HTTP address is required", ErrConfig)
	case a.cfg.Server && a.cfg.RaftAddr == "":
		return fmt.Errorf("%w: a server needs a Raft address", ErrConfig)
	case a.cfg.Client && !a.cfg.Server && len(a.cfg.Servers) == 0:
		return fmt.Errorf("%w: a client without a server needs -servers", ErrConfig)
	}
	return nil
}

// openTLS loads the tls block's files and checks that the agent's
// certificate may act in its roles.
func (a *Agent) openTLS() error {
	if a.cfg.TLS.Region == "" {
		a.cfg.TLS.Region = a.cfg.Region
	}
	c, err := tlsutil.New(a.cfg.TLS)
	if err != nil {
		return fmt.Errorf("%w: tls: %w", ErrConfig, err)
	}
	role := tlsutil.RoleClient
	if a.cfg.Server {
		role = tlsutil.RoleServer
	}
	if err := c.CheckRole(role); err != nil {
		return fmt.Errorf("%w: tls: %w", ErrConfig, err)
	}
	a.tls, a.agentHTTP = c, newAgentHTTPClient(c)
	return nil
}

func (a *Agent) open() error {
	ln, err := net.Listen("tcp", a.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("HTTP listener: %w", err)
	}
	a.listener = ln
	if a.cfg.Server {
		if err := a.openServer(); err != nil {
			ln.Close()
			return err
		}
		if err := a.openSerf(); err != nil {
			ln.Close()
			_ = a.raft.Shutdown()
			return err
		}
	}
	if a.cfg.Client {
		if err := a.openClient(); err != nil {
			if a.raft != nil {
				_ = a.raft.Shutdown()
			}
			ln.Close()
			return err
		}
	}
	a.http = &http.Server{
		Handler: a.handler(), ReadHeaderTimeout: 10 * time.Second, TLSConfig: a.tls.HTTPServer(),
		// Refused handshakes (a certificate of another CA, none) are
		// logged as the agent's, not to Go's default logger.
		ErrorLog: a.logger.Named("http").StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	return nil
}

// openServer opens the Raft state and assembles the leader's services
// and the HTTP API.
func (a *Agent) openServer() error {
	a.fsm = fsm.New(a.logger.Named("fsm"))
	a.fsm.SetJobTrackedVersions(a.cfg.JobTrackedVersions)
	if !a.cfg.DisableEventBroker {
		a.fsm.SetEvents(stream.NewBuffer(a.cfg.EventBufferSize))
	}
	rc := cluster.LANRaftConfig()
	// Raft's figures with the peer in the name duplicate the labelled ones.
	rc.NoLegacyTelemetry = true
	if a.cfg.RaftHeartbeatTimeout > 0 {
		rc.HeartbeatTimeout = a.cfg.RaftHeartbeatTimeout
	}
	if a.cfg.RaftElectionTimeout > 0 {
		rc.ElectionTimeout = a.cfg.RaftElectionTimeout
	}
	if a.cfg.RaftLeaderLeaseTimeout > 0 {
		rc.LeaderLeaseTimeout = a.cfg.RaftLeaderLeaseTimeout
	}
	if a.cfg.RaftSnapshotThreshold > 0 {
		rc.SnapshotThreshold = uint64(a.cfg.RaftSnapshotThreshold)
	}
	if a.cfg.RaftTrailingLogs > 0 {
		rc.TrailingLogs = uint64(a.cfg.RaftTrailingLogs)
	}
	var raftTLS *cluster.TLS
	if a.tls.RPCEnabled() {
		raftTLS = &cluster.TLS{Server: a.tls.RaftServer(), Client: a.tls.RaftClient()}
	}
	srv, err := cluster.New(cluster.Config{
		DataDir: a.cfg.DataDir, RaftAddr: a.cfg.RaftAddr, FSM: a.fsm, Logger: a.logger, NoSync: a.cfg.NoSync, Raft: rc,
		RecoveryFSM: func() raft.FSM {
			f := fsm.New(a.logger.Named("recovery"))
			f.SetJobTrackedVersions(a.cfg.JobTrackedVersions)
			// The other servers' builds are not known during a
			// recovery: its snapshot is written for the oldest.
			f.SetSnapshotMinBuild(func() int { return 1 })
			return f
		}, TLS: raftTLS,
	})
	if err != nil {
		return err
	}
	leader, err := server.New(server.Config{
		Raft: srv, State: a.fsm.State, Logger: a.logger.Named("leader"), HeartbeatGrace: a.cfg.HeartbeatGrace,
		HeartbeatTTL: a.cfg.MinHeartbeatTTL, MaxHeartbeatsPerSecond: float64(a.cfg.MaxHeartbeatsPerSecond),
		MetricsInterval: a.telemetry.Interval(), Events: a.fsm.Events(),
		PrometheusAddress: a.cfg.PrometheusAddress,
	})
	if err != nil {
		_ = srv.Shutdown()
		return err
	}
	srv.OnLeadership("scheduler", leader.Run)
	srv.OnLeadership("reaper", a.runReaper)
	srv.OnLeadership("autopilot", a.runAutopilot)
	a.raft, a.leader = srv, leader
	a.members = newMembers(a.self())
	a.fed = cluster.NewFederation(a.cfg.Region, a.cfg.FederationTTL)
	// A new message type is written only once every server knows it
	// (fsm.CheckWritable; website/production.md#upgrading).
	srv.SetMinServerBuild(a.MinServerBuild)
	// A snapshot holds, before its end tag, only the records every server
	// reads (fsm.SetSnapshotMinBuild): a lagging follower of the previous
	// build may be sent it.
	a.fsm.SetSnapshotMinBuild(a.MinServerBuild)
	access := httpapi.Access{JoinToken: a.cfg.JoinToken, AllowRemote: a.cfg.AllowRemoteOperator}
	if a.cfg.Dev {
		access.RefuseJoins = "a dev agent is a one-server cluster"
	}
	a.api = httpapi.New(a, a.logger, httpapi.WithAccess(access), httpapi.WithACL(httpapi.ACLConfig{Enabled: a.cfg.ACLEnabled}),
		httpapi.WithWriteLimit(httpapi.WriteLimit{Rate: float64(a.cfg.WriteRate), Burst: a.cfg.WriteBurst}), httpapi.WithAgentTLS(a.tls.ServerHTTPClient()),
		httpapi.WithEventStream(httpapi.EventStreamConfig{Buffer: a.fsm.Events()}), httpapi.WithMetrics(a.telemetry.Handler()),
		httpapi.WithPrometheusAddress(a.cfg.PrometheusAddress), httpapi.WithRegionTLS(a.tls.ServerHTTPClientFor),
		httpapi.WithClientIntroduction(clientIntroduction(a.cfg.ClientIntroduction)))
	// Registered once the API exists: the service makes the first key
	// through it.
	srv.OnLeadership("keyring", a.runKeyring)
	a.startACLReplication()
	a.startMultiregionWatch()
	return nil
}

// spreadServers returns the configured servers in a random order (intn
// is rand.IntN), as Nomad's clients shuffle theirs: a client talks to the
// first that answers, and clients configured with the same list would
// otherwise all talk to the same server.
func spreadServers(addrs []string, intn func(int) int) []string {
	out := slices.Clone(addrs)
	for i := len(out) - 1; i > 0; i-- {
		j := intn(i + 1)
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// openClient prepares the client: it talks to the configured servers, or
// to this agent's own HTTP API.
func (a *Agent) openClient() error {
	servers := spreadServers(a.cfg.Servers, rand.IntN)
	if len(servers) == 0 {
		servers = []string{a.HTTPAddr()}
	}
	for i, s := range servers {
		servers[i] = apiclient.WithScheme(s, a.tls.Scheme())
	}
	nc, err := apiclient.NewNodeClientWithHTTPClient(servers, a.agentHTTP)
	if err != nil {
		return fmt.Errorf("%w: -servers: %w", ErrConfig, err)
	}
	a.servers = nc
	api := client.NewHTTPServersOver(nc)
	c, err := client.New(client.Config{
		DataDir: a.cfg.DataDir, NodeName: a.cfg.NodeName, Datacenter: a.cfg.Datacenter,
		NodeClass: a.cfg.NodeClass, NodePool: a.cfg.NodePool, Meta: a.cfg.Meta, Options: a.cfg.Options,
		DisableRawExec: a.cfg.DisableRawExec && !a.cfg.Dev,
		Exec:           a.cfg.Exec,
		Java:           a.cfg.Java,
		ServerAPI:      api, Logger: a.logger, Version: a.cfg.Version, HTTPAddr: a.advertiseHTTP(),
		CPUTotalMHz: a.cfg.CPUTotalMHz, MemoryTotalMB: a.cfg.MemoryTotalMB,
		MinDynamicPort: a.cfg.MinDynamicPort, MaxDynamicPort: a.cfg.MaxDynamicPort,
		Templates:      a.cfg.Templates,
		ArtifactLimits: a.cfg.ArtifactLimits, HostVolumes: a.cfg.HostVolumes,
		Bridge: a.cfg.Bridge, IntroToken: a.cfg.ClientIntroToken,
		DockerInfraImage: a.cfg.DockerInfraImage, DockerInfraImagePullTimeout: a.cfg.DockerInfraImagePullTimeout,
	})
	if err != nil {
		return err
	}
	a.client = c
	return nil
}

// handler serves the agent's health (every role it runs), the web UI at
// /ui/ (with GET / redirected there) when a server runs it, the client
// endpoints (/v1/client/: from the local client when it holds what is
// asked about, else forwarded by a server to the node that does; see
// client_forward.go), everything else from the server's API when a
// server runs (a client-only agent forwards it to a server: client_api.go),
// and Go's profiles under /debug/pprof/ in dev mode or with
// enable_debug.
func (a *Agent) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/agent/health", a.health)
	mux.Handle("/v1/client/", a.otherRegion(a.clientACL(a.clientRouter())))
	if a.api != nil {
		mux.Handle("/", a.api.Handler())
	} else {
		mux.Handle("GET /v1/metrics", a.metricsHandler())
		mux.Handle("/", a.clientAPI())
		// Its own log and profiles (client_agent_endpoints.go).
		local := a.localAgentHandler()
		mux.Handle("GET /v1/agent/monitor", local)
		mux.Handle("GET /v1/agent/pprof/{profile}", local)
	}
	if a.api != nil && !a.cfg.UIDisabled {
		// The web UI: static pages and one script, public as Nomad's (they
		// hold no data; the script reads the API with the browser's token).
		mux.Handle(ui.Prefix, ui.New())
		mux.HandleFunc("GET /{$}", ui.RedirectRoot)
	}
	if a.cfg.Dev || a.cfg.EnableDebug {
		// As Nomad's enable_debug, which its dev mode turns on; served to
		// loopback addresses only unless allow_remote_operator (profiles
		// show the process's command line and memory).
		local := func(h http.HandlerFunc) http.Handler { return httpapi.LocalOnly(h, a.cfg.AllowRemoteOperator) }
		mux.Handle("/debug/pprof/", local(pprof.Index))
		mux.Handle("/debug/pprof/cmdline", local(pprof.Cmdline))
		mux.Handle("/debug/pprof/profile", local(pprof.Profile))
		mux.Handle("/debug/pprof/symbol", local(pprof.Symbol))
		mux.Handle("/debug/pprof/trace", local(pprof.Trace))
	}
	return a.closingConns(httpapi.CheckVarPaths(a.roleGuard(httpapi.GuardCrossSite(mux, a.crossSite()))))
}

// closingConns answers with "Connection: close" once the agent stops
// (stopServingKeepAlives), so that each caller's connection closes after
// its answer and the caller opens a new one for its next request, which
// finds the next leader or a listener that refuses it.
func (a *Agent) closingConns(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.closeConns.Load() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

// stopServingKeepAlives makes every answer from now on close its
// connection (closingConns). Unlike http.Server.SetKeepAlivesEnabled, it
// does not close the connections idle at that moment: Go's server counts a
// connection idle until it has read a request's whole header, so closing
// the idle ones could cut a request it had read and was serving, and its
// caller saw EOF with no way to know whether the request was served (a
// follower forwarding a write to a stopping leader did). The connections
// still idle are closed by the HTTP server's Shutdown.
func (a *Agent) stopServingKeepAlives() { a.closeConns.Store(true) }

// crossSite configures the guard against other sites' pages
// (httpapi.CrossSite) from http_api_response_headers, http_allowed_hosts
// and the addresses.
func (a *Agent) crossSite() httpapi.CrossSite {
	c := httpapi.CrossSite{Headers: a.cfg.ResponseHeaders, ForwardMarks: []string{httpapi.ForwardedHeader, httpapi.RegionForwardedHeader, ClientForwardedHeader}}
	for k, v := range a.cfg.ResponseHeaders {
		if strings.EqualFold(k, "Access-Control-Allow-Origin") {
			c.AllowedOrigins = strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
		}
	}
	if host, _, err := net.SplitHostPort(a.cfg.HTTPAddr); err == nil {
		ip := net.ParseIP(host)
		c.LoopbackOnly = ip != nil && ip.IsLoopback() || strings.EqualFold(host, "localhost")
	}
	// A loopback-only agent answers the names http_allowed_hosts lists and
	// the one it advertises (other agents forward to it there).
	c.AllowedHosts = slices.Clone(a.cfg.AllowedHosts)
	if host, _, err := net.SplitHostPort(a.cfg.AdvertiseHTTP); err == nil && net.ParseIP(host) == nil {
		c.AllowedHosts = append(c.AllowedHosts, host)
	}
	return c
}

// self is this server's member record.
func (a *Agent) self() structs.ServerMember {
	return structs.ServerMember{
		ID: a.raft.ID(), Name: a.cfg.NodeName, RaftAddr: a.raft.Addr(), HTTPAddr: a.advertiseHTTP(),
		Region: a.cfg.Region, Datacenter: a.cfg.Datacenter, Version: a.cfg.Version,
	}
}

// HTTPAddr is the address the API listens on.
func (a *Agent) HTTPAddr() string { return a.listener.Addr().String() }

// advertiseHTTP is the HTTP address other agents are told: the configured
// one, or the bound address.
func (a *Agent) advertiseHTTP() string {
	if a.cfg.AdvertiseHTTP != "" {
		return a.cfg.AdvertiseHTTP
	}
	return a.HTTPAddr()
}

// Cluster returns the Raft server, for registering leader services; nil
// when the agent runs no server.
func (a *Agent) Cluster() *cluster.Server { return a.raft }

// Client returns the client agent; nil when the agent runs no client.
func (a *Agent) Client() *client.Agent { return a.client }

// Start serves the API, starts finding the other servers (bootstrapping
// once enough are known) and runs the client.
func (a *Agent) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	a.serveSerf()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		serve := func() error { return a.http.Serve(a.listener) }
		if a.tls.HTTPEnabled() {
			serve = func() error { return a.http.ServeTLS(a.listener, "", "") }
		}
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger.Error("HTTP server stopped", "error", err)
		}
	}()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.runMetrics(ctx)
	}()
	if a.raft != nil {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.discover(ctx)
		}()
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.federate(ctx)
		}()
		a.logger.Info("server started", "id", a.raft.ID(), "http", a.HTTPAddr(), "raft", a.raft.Addr(),
			"data_dir", a.cfg.DataDir, "bootstrap_expect", a.cfg.BootstrapExpect)
	}
	if a.client != nil {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.client.Run(ctx)
		}()
		a.logger.Info("client started", "node_id", a.client.NodeID(), "http", a.HTTPAddr(),
			"servers", a.cfg.Servers, "data_dir", a.cfg.DataDir)
	}
	raftAddr := ""
	if a.raft != nil {
		raftAddr = a.cfg.RaftAddr
	}
	for _, w := range openWarnings(a.cfg, a.HTTPAddr(), raftAddr) {
		a.logger.Warn("SECURITY: " + w)
	}
}

func (a *Agent) removeDevDir() {
	if a.devDir == "" {
		return
	}
	if err := removeTree(a.devDir); err != nil {
		a.logger.Warn("removing dev data directory", "dir", a.devDir, "error", err)
	}
}

// removeParallelism bounds the goroutines removing a data directory.
const removeParallelism = 32

// removeTree removes dir like os.RemoveAll, but removes the allocation
// directories under dir/alloc concurrently: a dev agent that ran
// thousands of allocations has tens of thousands of files, and one
// unlink after another takes tens of seconds on a slow disk.
func removeTree(dir string) error {
	entries, _ := os.ReadDir(filepath.Join(dir, "alloc"))
	var wg sync.WaitGroup
	sem := make(chan struct{}, removeParallelism)
	for _, e := range entries {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			_ = os.RemoveAll(filepath.Join(dir, "alloc", e.Name()))
		}()
	}
	wg.Wait()
	return os.RemoveAll(dir)
}
