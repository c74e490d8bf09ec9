package config

import (
	"net"
	"os"
	"strconv"
	"time"

	"github.com/droverhq/drover/tlsutil"
)

// Defaults of the fields whose zero value is not the default. The ports
// are Nomad's: drover's Raft port is the one Nomad gives its RPC.
const (
	DefaultRegion     = "global"
	DefaultDatacenter = "dc1"
	DefaultLogLevel   = "INFO"
	DefaultBindAddr   = "127.0.0.1"
	DefaultHTTPPort   = 4646
	DefaultRaftPort   = 4647
	// DefaultEvalGCThreshold is Nomad's server.eval_gc_threshold: how
	// long a terminal evaluation, or an allocation the servers stopped and
	// its client finished, is kept before it is collected.
	DefaultEvalGCThreshold = time.Hour
	// DefaultDeploymentGCThreshold is Nomad's
	// server.deployment_gc_threshold: how long a terminal deployment is
	// kept once no allocation refers to it.
	DefaultDeploymentGCThreshold = time.Hour
	// DefaultJobGCThreshold is Nomad's server.job_gc_threshold: how long
	// a stopped job, or a batch job that finished, is kept once all its
	// allocations and evaluations have ended.
	DefaultJobGCThreshold = 4 * time.Hour
	// DefaultNodeGCThreshold is Nomad's server.node_gc_threshold: how long
	// a node is kept once it is down.
	DefaultNodeGCThreshold = 24 * time.Hour
	// DefaultJobTrackedVersions is Nomad's server.job_tracked_versions:
	// how many versions of a job are kept.
	DefaultJobTrackedVersions = 6
	// DefaultHeartbeatGrace is Nomad's server.heartbeat_grace.
	DefaultHeartbeatGrace = 10 * time.Second
	// DefaultMinDynamicPort and DefaultMaxDynamicPort are Nomad's range of
	// ports given to tasks' dynamic port labels.
	DefaultMinDynamicPort = 20000
	DefaultMaxDynamicPort = 32000
	// DefaultNodePool is the node pool of a client that names none.
	DefaultNodePool = "default"
	// DefaultServerGCPercent is server.gc_percent's default: the Go
	// collector's GOGC on an agent that runs a server. A server's
	// garbage comes mostly from its store's copy-on-write trees (every
	// allocation written copies its path in each index) at a rate that
	// follows the cluster's changes; at Go's 100 the collector took a
	// fifth of a leader's CPU in a 10,000-allocation rollout. 200 halves
	// the collector's work for a heap that may grow to three times what
	// is live rather than twice (website/scale.md has the figures).
	DefaultServerGCPercent = 200
	// MinServerGCPercent is the least server.gc_percent accepted.
	MinServerGCPercent = 50
)

// Raft timing used when server.heartbeat_timeout, election_timeout or
// leader_lease_timeout is unset (0). They mirror the cluster package's
// LAN tuning; they are here so that Validate can check the relations Raft
// requires between the three without importing the cluster.
const (
	RaftHeartbeatTimeout   = 500 * time.Millisecond
	RaftElectionTimeout    = 500 * time.Millisecond
	RaftLeaderLeaseTimeout = 250 * time.Millisecond
	// raftMinTimeout is the smallest timeout hashicorp/raft accepts.
	raftMinTimeout = 5 * time.Millisecond
)

// Config is the agent's configuration. The zero value of a field means
// "not set" only through the set-tracking kept by Parse, Set and Merge;
// read the fields directly, or through the accessors that fill in derived
// values (NodeName, HTTPAddr, RaftAddr, AdvertiseHTTP, AdvertiseRaft).
type Config struct {
	// Dev is true for DevConfig: a single self-bootstrapping server and
	// client whose state lives in a temporary directory, so that data_dir
	// is not required. It is not an HCL field (the -dev flag).
	Dev bool

	Name       string // node name; the host name when empty
	Region     string
	Datacenter string
	DataDir    string
	LogLevel   string // TRACE, DEBUG, INFO, WARN or ERROR (any case)
	LogJSON    bool
	// EnableDebug serves Go's runtime profiles under /debug/pprof/ on the
	// HTTP address, as Nomad's enable_debug; dev mode turns it on.
	EnableDebug bool
	// BindAddr is the IP every service listens on unless Addresses
	// overrides it for one.
	BindAddr  string
	Addresses Addresses
	Ports     Ports
	Advertise Advertise
	Server    Server
	Client    Client
	Autopilot Autopilot
	// TLS is the tls block: HTTPS for the API and the agents' HTTP calls,
	// mutual TLS for Raft.
	TLS TLS
	// ACL is the acl block: tokens and policies (website/security.md).
	ACL ACL
	// Limits is the limits block: the per-address write rate limit.
	Limits Limits
	// UI is the ui block: the web UI a server serves at /ui/.
	UI UI
	// Plugin configures the built-in drivers, as Nomad's plugin blocks.
	Plugin Plugin
	// Telemetry is the telemetry block: what /v1/metrics publishes.
	Telemetry Telemetry
	// Analysis is drover's analysis block: where a server's leader
	// measures the rollouts' analyses (website/jobspec/analysis.md).
	Analysis Analysis
	// AllowRemoteOperator serves the snapshot endpoints, /v1/internal/join
	// (without a join token), /v1/operator/debug/heap and /debug/pprof/ to
	// non-loopback addresses.
	// Off: until drover has ACLs they answer loopback (and other servers)
	// only.
	AllowRemoteOperator bool
	// HTTPAPIResponseHeaders are added to every HTTP answer
	// (http_api_response_headers); its Access-Control-Allow-Origin names
	// the other origins whose pages may call the API.
	HTTPAPIResponseHeaders map[string]string
	// HTTPAllowedHosts are the host names, besides IP addresses and
	// localhost, that a loopback-only agent answers requests sent to
	// (http_allowed_hosts, drover's own): a request under any other name
	// may come from a page of a name pointed at 127.0.0.1 (DNS rebinding).
	HTTPAllowedHosts []string
	// ShutdownTimeout bounds the agent's shutdown on SIGINT or SIGTERM
	// (shutdown_timeout, drover's own): past it the agent exits anyway,
	// naming what did not stop.
	ShutdownTimeout time.Duration

	// set holds the paths ("server.bootstrap_expect") of the fields a
	// file, a flag or Set gave; at is where each was given.
	set map[string]bool
	at  map[string]Location
}

// Addresses overrides BindAddr per service. Each is an IP; empty means
// BindAddr.
type Addresses struct {
	HTTP string
	Raft string
}

// Ports are the TCP ports the agent listens on.
type Ports struct {
	HTTP int
	Raft int
	// Serf, when set, is a second port where a server answers the server
	// join exchange (config/serf.go); 0: none.
	Serf int
}

// Advertise are the host:port addresses other agents use to reach this
// one; empty means the bind address and port.
type Advertise struct {
	HTTP string
	Raft string
}

// Server configures the server: Raft, state and scheduling.
type Server struct {
	Enabled bool
	// BootstrapExpect is how many servers form a new cluster.
	BootstrapExpect int
	// RetryJoin lists HTTP addresses (host:port) of other servers.
	RetryJoin []string
	// HeartbeatGrace is added to clients' heartbeat TTL after a leader
	// election, so that clients have time to find the new leader.
	HeartbeatGrace time.Duration
	// EvalGCThreshold is how long terminal evaluations and finished,
	// stopped allocations of jobs still registered are kept
	// (DefaultEvalGCThreshold).
	EvalGCThreshold time.Duration
	// DeploymentGCThreshold is how long a terminal deployment is kept
	// once no allocation refers to it (DefaultDeploymentGCThreshold).
	DeploymentGCThreshold time.Duration
	// JobGCThreshold is how long a stopped job, or a batch job that
	// finished, is kept once its allocations and evaluations have all
	// ended (DefaultJobGCThreshold).
	JobGCThreshold time.Duration
	// NodeGCThreshold is how long a down node with nothing running is
	// kept (DefaultNodeGCThreshold).
	NodeGCThreshold time.Duration
	// JobTrackedVersions is how many versions of each job are kept
	// (DefaultJobTrackedVersions).
	JobTrackedVersions int
	// RaftSnapshotThreshold is how many log entries since the last
	// snapshot make the server take one; RaftTrailingLogs how many entries
	// a snapshot leaves in the log (for followers that lag). 0: Nomad's
	// defaults, 8192 and 10240.
	RaftSnapshotThreshold int
	RaftTrailingLogs      int
	// GCPercent is the Go collector's GOGC on an agent that runs a server
	// (DefaultServerGCPercent when 0); the GOGC environment variable,
	// when set, wins.
	GCPercent int
	// MinHeartbeatTTL is the least heartbeat TTL given to a client; the TTL
	// grows past it as nodes / MaxHeartbeatsPerSecond. 0 means the
	// server's defaults (10s, 50).
	MinHeartbeatTTL        time.Duration
	MaxHeartbeatsPerSecond int
	// JoinToken is the cluster's join secret: servers sign their join
	// requests with it and refuse unsigned ones.
	JoinToken string
	// AuthoritativeRegion is the region ACL policies and global tokens
	// replicate from (Nomad's server.authoritative_region); empty: this
	// region is its own authority.
	AuthoritativeRegion string
	// Raft timing; 0 means RaftHeartbeatTimeout and the others.
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	// EnableEventBroker serves GET /v1/event/stream; EventBufferSize is
	// how many log entries' events the server keeps for it (Nomad's).
	EnableEventBroker bool
	EventBufferSize   int
	// ClientIntroduction is Nomad's client_introduction block: what the
	// servers do with a new node that registers without a valid client
	// introduction token, and the TTLs of the tokens they sign.
	ClientIntroduction ClientIntroduction
}

// ClientIntroduction is the server's client_introduction block. Zero
// values take Nomad's defaults: "warn", 5m, 30m.
type ClientIntroduction struct {
	Enforcement        string
	DefaultIdentityTTL time.Duration
	MaxIdentityTTL     time.Duration
}

// Autopilot seeds the cluster's autopilot configuration: the first leader
// of a new cluster writes it to the replicated state, where `drover
// operator autopilot set-config` changes it later. Nomad's block and
// defaults.
type Autopilot struct {
	CleanupDeadServers      bool
	LastContactThreshold    time.Duration
	MaxTrailingLogs         int
	MinQuorum               int
	ServerStabilizationTime time.Duration
}

// Nomad's autopilot defaults.
const (
	DefaultLastContactThreshold    = 200 * time.Millisecond
	DefaultMaxTrailingLogs         = 250
	DefaultServerStabilizationTime = 10 * time.Second
)

// Client configures the client, which runs allocations.
type Client struct {
	Enabled bool
	// Servers lists servers' HTTP addresses (host:port); the client fails
	// over between them.
	Servers   []string
	NodeClass string
	NodePool  string
	Meta      map[string]string
	Options   map[string]string
	// CPUTotalCompute (MHz) and MemoryTotalMB override what is
	// fingerprinted when not 0.
	CPUTotalCompute  int
	MemoryTotalMB    int
	NetworkInterface string
	MinDynamicPort   int
	MaxDynamicPort   int
	// Artifact bounds the artifacts the client fetches for tasks.
	Artifact ClientArtifact
	// HostVolumes are the client's host_volume blocks, by name.
	HostVolumes map[string]HostVolume
	// Template is the client's template block: how tasks' templates are
	// rendered.
	Template ClientTemplate
	// ChrootEnv maps host paths to where exec tasks see them, read-only,
	// in their root (Nomad's chroot_env; nil: Nomad's default list).
	ChrootEnv map[string]string
	// Bridge networking through CNI (Nomad's fields; empty: Nomad's
	// defaults, those of client/network): where the plugins are (a
	// colon-separated list), operators' CNI configurations, the host
	// bridge's name, the allocations' IPv4 subnet, and hairpin mode.
	CNIPath                  string
	CNIConfigDir             string
	BridgeNetworkName        string
	BridgeNetworkSubnet      string
	BridgeNetworkHairpinMode bool
	// IntroToken is a client introduction token the node presents when it
	// registers (Nomad's -client-intro-token, $NOMAD_CLIENT_INTRO_TOKEN).
	IntroToken string
}

// ClientTemplate is Nomad's client template block, without its Consul
// and Vault settings. Zero values take Nomad's defaults (those of
// client/template).
type ClientTemplate struct {
	FunctionDenylist   []string
	DisableFileSandbox bool
	MaxStale           time.Duration
	BlockQueryWait     time.Duration
	Wait               TemplateWait
	WaitBounds         TemplateWait
	NomadRetry         TemplateRetry
	// RenderTimeout is drover's own: how long a task waits for its
	// templates' first render before it fails.
	RenderTimeout time.Duration
}

// TemplateWait is a wait or wait_bounds block.
type TemplateWait struct {
	Min, Max time.Duration
}

// TemplateRetry is a nomad_retry block.
type TemplateRetry struct {
	Attempts            int
	Backoff, MaxBackoff time.Duration
}

// ClientArtifact is the client's artifact block, as Nomad's. The sizes
// are written as Nomad writes them ("100GB", "512MiB"); see ParseSize.
type ClientArtifact struct {
	HTTPReadTimeout             time.Duration
	HTTPMaxSize                 string
	DecompressionFileCountLimit int
	DecompressionSizeLimit      string
}

// Nomad's defaults of the client's artifact block.
const (
	DefaultArtifactHTTPReadTimeout   = 30 * time.Minute
	DefaultArtifactHTTPMaxSize       = "100GB"
	DefaultArtifactFileCountLimit    = 4096
	DefaultArtifactDecompressionSize = "100GB"
)

// ACL is Nomad's acl block.
type ACL struct {
	// Enabled enforces ACLs on the HTTP API: every request needs a token
	// that grants what its endpoint needs (or the anonymous policy).
	Enabled bool
	// TokenTTL and PolicyTTL bound how long a client agent keeps what
	// the servers said a token grants (its policies with it) before it
	// asks again: a deleted token or a changed policy keeps working on
	// the client's own endpoints (logs, stats) for at most the shorter of
	// the two. Servers cache nothing.
	TokenTTL  time.Duration
	PolicyTTL time.Duration
	// ReplicationToken is the management token of the authoritative
	// region a server of another region replicates ACL policies and
	// global tokens with (Nomad's acl.replication_token).
	ReplicationToken string
}

// DefaultACLTTL is the default of acl.token_ttl and acl.policy_ttl:
// shorter than Nomad's 30s, so that a revoked token stops working on
// clients within seconds.
const DefaultACLTTL = 5 * time.Second

// DefaultShutdownTimeout is shutdown_timeout's default.
const DefaultShutdownTimeout = 30 * time.Second

// Analysis is drover's analysis block. PrometheusAddress is the base URL
// of the Prometheus server an analysis queries when its job names no
// address ("" : such a job is refused).
type Analysis struct {
	PrometheusAddress string
}

// UI is Nomad's ui block: whether a server agent serves the web UI at
// /ui/ (and sends a browser's GET / there).
type UI struct {
	Enabled bool
}

// Limits is Nomad's limits block, with drover's write rate limit: each
// remote address may send at most HTTPWriteRate writes a second, in
// bursts of HTTPWriteBurst (0 turns the limit off).
type Limits struct {
	HTTPWriteRate  int
	HTTPWriteBurst int
}

// Defaults of the write rate limit: generous, far above what a person or
// a CI system sends.
const (
	DefaultHTTPWriteRate  = 100
	DefaultHTTPWriteBurst = 200
)

// Telemetry is Nomad's telemetry block, for what drover publishes: the
// agent's metrics at /v1/metrics, in Nomad's JSON and, with
// PrometheusMetrics, in Prometheus' text format.
type Telemetry struct {
	// CollectionInterval is how often the agent samples its gauges (the
	// eval broker's queues, allocations and deployments by status, the Go
	// runtime).
	CollectionInterval time.Duration
	// PrometheusMetrics serves /v1/metrics?format=prometheus.
	PrometheusMetrics bool
	// DisableHostname is accepted for Nomad's files: drover never puts the
	// host name in metric names.
	DisableHostname bool
}

// Defaults of the telemetry block and of the event stream, as Nomad's.
const (
	DefaultCollectionInterval = time.Second
	DefaultEventBufferSize    = 100
)

// TLS is Nomad's tls block.
type TLS struct {
	// HTTP serves the HTTP API over TLS (and makes the agent's own HTTP
	// calls to other agents over TLS).
	HTTP bool
	// RPC runs Raft between servers over mutual TLS.
	RPC bool
	// CAFile, CertFile and KeyFile are PEM files: the cluster's CA, this
	// agent's certificate (signed by the CA) and its key.
	CAFile   string
	CertFile string
	KeyFile  string
	// VerifyServerHostname requires every peer acting as a server to
	// present a certificate naming server.<region>.nomad.
	VerifyServerHostname bool
	// VerifyHTTPSClient requires every HTTPS client to present a
	// certificate signed by the CA.
	VerifyHTTPSClient bool
}

// Plugin holds the settings of Nomad's plugin "NAME" { config { ... } }
// blocks that drover's built-in drivers honour.
type Plugin struct {
	RawExec RawExecPlugin
	Exec    ExecPlugin
	// Java is plugin "java" { config { … } }: the same settings for the
	// java driver's tasks.
	Java ExecPlugin
	// Docker is plugin "docker" { config { … } }: the pause image of
	// bridge allocations with a docker task.
	Docker DockerPlugin
}

// DockerPlugin is plugin "docker" { config { … } }, as Nomad's: the
// image of the pause containers that hold bridge allocations' network
// namespaces (empty: drover's own, built on the client from its
// busybox) and how long a pull of another one may take (zero: 5m).
// The other docker settings are client options (docker.endpoint,
// docker.volumes.enabled).
type DockerPlugin struct {
	InfraImage            string
	InfraImagePullTimeout time.Duration
}

// ExecPlugin is plugin "exec" { config { … } }: the exec driver's
// namespace modes for tasks that set none ("private" or "host"; empty:
// private) and the capabilities its tasks may have (nil: Nomad's
// default list).
type ExecPlugin struct {
	DefaultPidMode string
	DefaultIpcMode string
	AllowCaps      []string
}

// RawExecPlugin is plugin "raw_exec" { config { enabled = true } }.
type RawExecPlugin struct {
	Enabled bool
}

// OptionRawExecEnable is Nomad's older client option that enables
// raw_exec ("driver.raw_exec.enable" = "1").
const OptionRawExecEnable = "driver.raw_exec.enable"

// RawExecEnabled reports whether the client runs raw_exec tasks, which run
// as the agent's user without isolation: in dev mode, with
// plugin "raw_exec" { config { enabled = true } }, or with the client
// option "driver.raw_exec.enable" = "1". Off otherwise, as Nomad's.
func (c *Config) RawExecEnabled() bool {
	if c.Dev || c.Plugin.RawExec.Enabled {
		return true
	}
	on, err := strconv.ParseBool(c.Client.Options[OptionRawExecEnable])
	return err == nil && on
}

// TLSConfig returns the tls block for package tlsutil, with the agent's
// region.
func (c *Config) TLSConfig() tlsutil.Config {
	return tlsutil.Config{
		HTTP: c.TLS.HTTP, RPC: c.TLS.RPC,
		CAFile: c.TLS.CAFile, CertFile: c.TLS.CertFile, KeyFile: c.TLS.KeyFile,
		VerifyServerHostname: c.TLS.VerifyServerHostname, VerifyHTTPSClient: c.TLS.VerifyHTTPSClient,
		Region: c.Region,
	}
}

// Default returns the configuration of an agent given no file and no flag:
// neither server nor client enabled (Validate requires one of them).
func Default() *Config {
	return &Config{
		Region:          DefaultRegion,
		Datacenter:      DefaultDatacenter,
		LogLevel:        DefaultLogLevel,
		BindAddr:        DefaultBindAddr,
		ShutdownTimeout: DefaultShutdownTimeout,
		Ports:           Ports{HTTP: DefaultHTTPPort, Raft: DefaultRaftPort},
		Server:          Server{HeartbeatGrace: DefaultHeartbeatGrace, EvalGCThreshold: DefaultEvalGCThreshold, DeploymentGCThreshold: DefaultDeploymentGCThreshold, JobGCThreshold: DefaultJobGCThreshold, NodeGCThreshold: DefaultNodeGCThreshold, JobTrackedVersions: DefaultJobTrackedVersions, EnableEventBroker: true, EventBufferSize: DefaultEventBufferSize},
		Telemetry:       Telemetry{CollectionInterval: DefaultCollectionInterval},
		ACL:             ACL{TokenTTL: DefaultACLTTL, PolicyTTL: DefaultACLTTL},
		Limits:          Limits{HTTPWriteRate: DefaultHTTPWriteRate, HTTPWriteBurst: DefaultHTTPWriteBurst},
		UI:              UI{Enabled: true},
		Autopilot: Autopilot{
			CleanupDeadServers: true, LastContactThreshold: DefaultLastContactThreshold,
			MaxTrailingLogs: DefaultMaxTrailingLogs, ServerStabilizationTime: DefaultServerStabilizationTime,
		},
		Client: Client{
			NodePool:       DefaultNodePool,
			MinDynamicPort: DefaultMinDynamicPort,
			MaxDynamicPort: DefaultMaxDynamicPort,
			Artifact: ClientArtifact{
				HTTPReadTimeout: DefaultArtifactHTTPReadTimeout, HTTPMaxSize: DefaultArtifactHTTPMaxSize,
				DecompressionFileCountLimit: DefaultArtifactFileCountLimit, DecompressionSizeLimit: DefaultArtifactDecompressionSize,
			},
		},
	}
}

// DevConfig returns Default with Dev set and both a server (bootstrap_expect
// 1) and a client enabled, on 127.0.0.1:4646 (HTTP) and 127.0.0.1:4647
// (Raft); the client talks to its own server.
func DevConfig() *Config {
	c := Default()
	c.Dev = true
	c.BindAddr = "127.0.0.1"
	c.Server.Enabled = true
	c.Server.BootstrapExpect = 1
	c.Client.Enabled = true
	c.Client.Servers = []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(DefaultHTTPPort))}
	// A dev agent is for trying things out: its metrics are ready for a
	// local Prometheus.
	c.Telemetry.PrometheusMetrics = true
	return c
}

// NodeName returns Name, or the host name when Name is empty.
func (c *Config) NodeName() string {
	if c.Name != "" {
		return c.Name
	}
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "drover"
	}
	return h
}

// HTTPAddr returns the host:port the HTTP API listens on.
func (c *Config) HTTPAddr() string {
	return net.JoinHostPort(orElse(c.Addresses.HTTP, c.BindAddr), strconv.Itoa(c.Ports.HTTP))
}

// RaftAddr returns the host:port the Raft transport listens on.
func (c *Config) RaftAddr() string {
	return net.JoinHostPort(orElse(c.Addresses.Raft, c.BindAddr), strconv.Itoa(c.Ports.Raft))
}

// AdvertiseHTTP returns the HTTP address other agents use: advertise.http,
// or HTTPAddr.
func (c *Config) AdvertiseHTTP() string { return orElse(c.Advertise.HTTP, c.HTTPAddr()) }

// AdvertiseRaft returns the Raft address other servers use: advertise.raft,
// or RaftAddr.
func (c *Config) AdvertiseRaft() string { return orElse(c.Advertise.Raft, c.RaftAddr()) }

// RaftTimeouts returns the heartbeat, election and leader lease timeouts,
// with the defaults filled in for those unset.
func (c *Config) RaftTimeouts() (heartbeat, election, leaderLease time.Duration) {
	heartbeat = orElseDur(c.Server.HeartbeatTimeout, RaftHeartbeatTimeout)
	election = orElseDur(c.Server.ElectionTimeout, RaftElectionTimeout)
	leaderLease = orElseDur(c.Server.LeaderLeaseTimeout, RaftLeaderLeaseTimeout)
	return heartbeat, election, leaderLease
}

// IsSet reports whether a file, a flag or Set gave the field at path
// ("server.bootstrap_expect").
func (c *Config) IsSet(path string) bool { return c.set[path] }

// Where returns where the field at path was given, and whether it was.
func (c *Config) Where(path string) (Location, bool) {
	l, ok := c.at[path]
	return l, ok
}

func orElse(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orElseDur(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
