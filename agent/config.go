package agent

import (
	"maps"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/client/network"
	"github.com/droverhq/drover/client/taskrunner"
	"github.com/droverhq/drover/client/template"
	"github.com/droverhq/drover/config"
	"github.com/droverhq/drover/drivers/exec"
	"github.com/droverhq/drover/structs"
	"github.com/droverhq/drover/tlsutil"
)

// Config is the agent's configuration: what it runs (a server, a client
// or both) and how. FromConfig builds one from the configuration files
// and flags.
type Config struct {
	// Dev runs a single server that bootstraps itself and a client that
	// talks to it, keeping their state in a temporary directory that is
	// removed on shutdown.
	Dev bool
	// EnableDebug serves Go's profiles under /debug/pprof/ (always on
	// with Dev).
	EnableDebug bool
	// Server enables the server (Raft, state, scheduling, HTTP API).
	Server bool
	// Client enables the client, which runs allocations.
	Client bool

	// BootstrapExpect is how many servers form a new cluster; they
	// bootstrap once that many have found each other.
	BootstrapExpect int
	// RetryJoin lists HTTP addresses (host:port) of other servers.
	RetryJoin []string
	// DataDir holds the server's state (server-id, raft/) and the
	// client's (client/node-id, alloc/). Required unless Dev.
	DataDir string
	// HTTPAddr and RaftAddr are host:port to listen on. Port 0 is allowed
	// for HTTP (see Agent.HTTPAddr for the bound address), not for Raft.
	HTTPAddr string
	RaftAddr string
	// AdvertiseHTTP is the HTTP address other agents use (the servers'
	// member lists, the client node's HTTPAddr); the bound address when
	// empty.
	AdvertiseHTTP string
	// SerfAddr, when set, is where a server also answers the server join
	// exchange (Nomad's serf port, ports.serf; serf.go); "" for none.
	SerfAddr string
	// NodeName names this agent; the host name when empty.
	NodeName   string
	Region     string
	Datacenter string
	Version    string
	// NoSync skips fsync of the Raft log (see cluster.Config.NoSync):
	// about 4,700 instead of 400 serial writes per second, safe against the
	// process being killed but not against power loss. Dev mode sets it.
	NoSync bool
	// HeartbeatGrace is added to every client's heartbeat TTL before it may
	// be marked down, and after a leader election
	// (server.Config.HeartbeatGrace); 0 is the default.
	HeartbeatGrace time.Duration
	// EvalGCThreshold is how long terminal evaluations and finished,
	// stopped allocations of registered jobs are kept (reaper.go); 0 is
	// the default, an hour.
	EvalGCThreshold time.Duration
	// DeploymentGCThreshold is how long a terminal deployment no
	// allocation refers to is kept (reaper.go); 0 is the default, an hour.
	DeploymentGCThreshold time.Duration
	// JobGCThreshold is how long a stopped job, or a batch job that
	// finished, is kept once its allocations and evaluations have all
	// ended (reaper.go); 0 is the default, 4 hours.
	JobGCThreshold time.Duration
	// NodeGCThreshold is how long a down node with nothing running is kept
	// (reaper.go); 0 is the default, 24 hours.
	NodeGCThreshold time.Duration
	// JobTrackedVersions is how many versions of each job the state keeps
	// (the latest stable one beyond them); 0 is the default, 6.
	JobTrackedVersions int
	// RaftSnapshotThreshold and RaftTrailingLogs override the Raft
	// log's compaction (server.raft_snapshot_threshold,
	// raft_trailing_logs); 0 keeps cluster.LANRaftConfig's.
	RaftSnapshotThreshold int
	RaftTrailingLogs      int
	// GCPercent is the collector's GOGC while a server runs
	// (server.gc_percent; 0 is config.DefaultServerGCPercent). See
	// ServerGCPercent.
	GCPercent int
	// MinHeartbeatTTL and MaxHeartbeatsPerSecond set the clients'
	// heartbeat TTL (server.Config.HeartbeatTTL, MaxHeartbeatsPerSecond);
	// 0 is the default.
	MinHeartbeatTTL        time.Duration
	MaxHeartbeatsPerSecond int
	// JoinToken is the cluster's join secret (server.join_token): a
	// server must sign its join requests with it to be added, and this
	// server signs its own. Empty: joins are accepted from loopback
	// addresses only (and AllowRemoteOperator). Never logged.
	JoinToken string
	// AuthoritativeRegion is the region ACL policies and global tokens
	// replicate from (server.authoritative_region); empty or this region:
	// none replicate here. ReplicationToken is a management token of
	// that region (acl.replication_token). FederationTTL bounds how long a
	// server of another region stays known unheard of (0: the default,
	// cluster.DefaultFederationTTL).
	AuthoritativeRegion string
	ReplicationToken    string
	FederationTTL       time.Duration
	// AllowRemoteOperator serves the snapshot endpoints, /v1/internal/ and
	// /debug/pprof/ to non-loopback addresses (allow_remote_operator).
	AllowRemoteOperator bool
	// ACLEnabled enforces ACL tokens on the HTTP API, the client's
	// endpoints included (acl.enabled); ACLTokenTTL bounds how long a
	// client agent keeps what the servers said a token grants (the
	// shorter of acl.token_ttl and acl.policy_ttl; 0: ask every time).
	ACLEnabled  bool
	ACLTokenTTL time.Duration
	// ResponseHeaders are added to every HTTP answer
	// (http_api_response_headers); its Access-Control-Allow-Origin, a list
	// of origins separated by commas or spaces, is the allow-list of the
	// pages of other origins that may call the API (httpapi.CrossSite).
	ResponseHeaders map[string]string
	// AllowedHosts are the host names, besides IP addresses and localhost,
	// a loopback-only agent answers requests sent to (http_allowed_hosts;
	// httpapi.CrossSite).
	AllowedHosts []string
	// ShutdownTimeout bounds Shutdown (shutdown_timeout); 0 is
	// config.DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// UIDisabled turns off the web UI a server serves at /ui/
	// (ui.enabled = false).
	UIDisabled bool
	// WriteRate and WriteBurst are the per-address write limit
	// (limits.http_write_rate, http_write_burst); a zero WriteRate turns
	// it off.
	WriteRate  int
	WriteBurst int
	// Autopilot is the autopilot configuration the first leader writes to
	// the replicated state when there is none yet; nil means Nomad's
	// defaults (structs.DefaultAutopilotConfig).
	Autopilot *structs.AutopilotConfig
	// TLS is the tls block (tls.http, tls.rpc, the files and the two
	// verifications); package tlsutil builds every listener's and dialer's
	// tls.Config from it. Its Region defaults to Region.
	TLS tlsutil.Config
	// DisableEventBroker turns the event stream off (server.enable_event_broker
	// = false); EventBufferSize is how many log entries' events a server
	// keeps for it (server.event_buffer_size; 0: stream.DefaultBufferSize).
	DisableEventBroker bool
	EventBufferSize    int
	// PrometheusMetrics serves /v1/metrics?format=prometheus
	// (telemetry.prometheus_metrics); CollectionInterval is how often the
	// gauges are sampled (telemetry.collection_interval; 0: 1s).
	PrometheusMetrics  bool
	CollectionInterval time.Duration
	// PrometheusAddress is the Prometheus server the leader queries for an
	// analysis whose job names no address (analysis.prometheus_address);
	// "": a job with such an analysis is refused.
	PrometheusAddress string
	// Raft timing; 0 keeps the cluster package's LAN tuning.
	RaftHeartbeatTimeout   time.Duration
	RaftElectionTimeout    time.Duration
	RaftLeaderLeaseTimeout time.Duration

	// Servers are the HTTP addresses of the servers a client talks to; a
	// client in an agent that also runs a server talks to that server
	// when empty (always, with Dev).
	Servers   []string
	NodeClass string
	NodePool  string
	Meta      map[string]string
	// ClientIntroToken is the client introduction token the node
	// presents when it registers; ClientIntroduction the servers'
	// client_introduction block (node identities, client/node_identity.go).
	ClientIntroToken   string
	ClientIntroduction config.ClientIntroduction
	// Options are the client's options (client.options): the docker
	// driver reads docker.endpoint and docker.volumes.enabled.
	Options map[string]string
	// DisableRawExec reports the raw_exec driver as not detected and
	// refuses its tasks. FromConfig sets it unless the configuration
	// enables raw_exec (config.RawExecEnabled: -dev, plugin "raw_exec" {
	// config { enabled = true } }, or the option driver.raw_exec.enable).
	DisableRawExec bool
	// Exec configures the exec driver: the client's chroot_env and
	// plugin "exec" block (its StateDir is left to the client).
	Exec exec.Options
	// Java configures the java driver: the client's chroot_env and
	// plugin "java" block.
	Java exec.Options
	// DockerInfraImage and DockerInfraImagePullTimeout are the plugin
	// "docker" block's infra_image and infra_image_pull_timeout.
	DockerInfraImage            string
	DockerInfraImagePullTimeout time.Duration
	// CPUTotalMHz and MemoryTotalMB replace what the machine reports when
	// positive.
	CPUTotalMHz    int64
	MemoryTotalMB  int64
	MinDynamicPort int
	MaxDynamicPort int
	// Templates are the client's template settings (client.template).
	Templates template.Settings
	// ArtifactLimits is the client's artifact block (nil: Nomad's
	// defaults).
	ArtifactLimits *taskrunner.ArtifactLimits
	// HostVolumes are the client's host_volume blocks, by name.
	HostVolumes map[string]*structs.ClientHostVolumeConfig
	// Bridge is the client's bridge networking (cni_path, cni_config_dir,
	// bridge_network_*); its state directory is left to the client.
	Bridge network.Config

	Logger hclog.Logger
}

// FromConfig turns a checked agent configuration (files, flags, defaults)
// into the agent's Config; Logger and Version are left for the caller.
func FromConfig(c *config.Config) Config {
	hb, election, lease := c.RaftTimeouts()
	out := Config{
		Dev:             c.Dev,
		EnableDebug:     c.EnableDebug,
		Server:          c.Server.Enabled,
		Client:          c.Client.Enabled,
		BootstrapExpect: c.Server.BootstrapExpect,
		RetryJoin:       append([]string(nil), c.Server.RetryJoin...),
		DataDir:         c.DataDir,
		HTTPAddr:        c.HTTPAddr(),
		RaftAddr:        c.RaftAddr(),
		AdvertiseHTTP:   c.Advertise.HTTP,
		SerfAddr:        c.SerfAddr(),
		NodeName:        c.NodeName(),
		Region:          c.Region,
		Datacenter:      c.Datacenter,
		HeartbeatGrace:  c.Server.HeartbeatGrace,
		EvalGCThreshold: c.Server.EvalGCThreshold,

		DeploymentGCThreshold: c.Server.DeploymentGCThreshold,
		JobGCThreshold:        c.Server.JobGCThreshold,
		NodeGCThreshold:       c.Server.NodeGCThreshold,
		JobTrackedVersions:    c.Server.JobTrackedVersions,
		RaftSnapshotThreshold: c.Server.RaftSnapshotThreshold,
		RaftTrailingLogs:      c.Server.RaftTrailingLogs,
		GCPercent:             c.Server.GCPercent,

		MinHeartbeatTTL:        c.Server.MinHeartbeatTTL,
		MaxHeartbeatsPerSecond: c.Server.MaxHeartbeatsPerSecond,

		JoinToken:           c.Server.JoinToken,
		AuthoritativeRegion: c.Server.AuthoritativeRegion,
		ReplicationToken:    c.ACL.ReplicationToken,
		AllowRemoteOperator: c.AllowRemoteOperator,
		ACLEnabled:          c.ACL.Enabled,
		ACLTokenTTL:         min(c.ACL.TokenTTL, c.ACL.PolicyTTL),
		UIDisabled:          !c.UI.Enabled,
		ResponseHeaders:     maps.Clone(c.HTTPAPIResponseHeaders),
		AllowedHosts:        append([]string(nil), c.HTTPAllowedHosts...),
		ShutdownTimeout:     c.ShutdownTimeout,
		WriteRate:           c.Limits.HTTPWriteRate,
		WriteBurst:          c.Limits.HTTPWriteBurst,
		Autopilot: &structs.AutopilotConfig{
			CleanupDeadServers:      c.Autopilot.CleanupDeadServers,
			LastContactThreshold:    c.Autopilot.LastContactThreshold,
			MaxTrailingLogs:         uint64(max(c.Autopilot.MaxTrailingLogs, 0)),
			MinQuorum:               uint(max(c.Autopilot.MinQuorum, 0)),
			ServerStabilizationTime: c.Autopilot.ServerStabilizationTime,
		},

		TLS: c.TLSConfig(),

		DisableEventBroker: !c.Server.EnableEventBroker,
		EventBufferSize:    c.Server.EventBufferSize,
		PrometheusMetrics:  c.Telemetry.PrometheusMetrics,
		CollectionInterval: c.Telemetry.CollectionInterval,
		PrometheusAddress:  c.Analysis.PrometheusAddress,

		RaftHeartbeatTimeout:   hb,
		RaftElectionTimeout:    election,
		RaftLeaderLeaseTimeout: lease,

		ClientIntroToken:   c.Client.IntroToken,
		ClientIntroduction: c.Server.ClientIntroduction,

		Servers:        append([]string(nil), c.Client.Servers...),
		NodeClass:      c.Client.NodeClass,
		NodePool:       c.Client.NodePool,
		Meta:           maps.Clone(c.Client.Meta),
		Options:        maps.Clone(c.Client.Options),
		DisableRawExec: !c.RawExecEnabled(),
		Exec: exec.Options{
			ChrootEnv:      maps.Clone(c.Client.ChrootEnv),
			DefaultPidMode: c.Plugin.Exec.DefaultPidMode,
			DefaultIpcMode: c.Plugin.Exec.DefaultIpcMode,
			AllowCaps:      slices.Clone(c.Plugin.Exec.AllowCaps),
		},
		Java: exec.Options{
			ChrootEnv:      maps.Clone(c.Client.ChrootEnv),
			DefaultPidMode: c.Plugin.Java.DefaultPidMode,
			DefaultIpcMode: c.Plugin.Java.DefaultIpcMode,
			AllowCaps:      slices.Clone(c.Plugin.Java.AllowCaps),
		},
		DockerInfraImage:            c.Plugin.Docker.InfraImage,
		DockerInfraImagePullTimeout: c.Plugin.Docker.InfraImagePullTimeout,

		CPUTotalMHz:    int64(c.Client.CPUTotalCompute),
		MemoryTotalMB:  int64(c.Client.MemoryTotalMB),
		MinDynamicPort: c.Client.MinDynamicPort,
		MaxDynamicPort: c.Client.MaxDynamicPort,
		Templates:      templateSettings(c),
		ArtifactLimits: artifactLimits(c.Client.Artifact),
		Bridge: network.Config{
			CNIPath: network.SplitPath(c.Client.CNIPath), ConfigDir: c.Client.CNIConfigDir,
			BridgeName: c.Client.BridgeNetworkName, Subnet: c.Client.BridgeNetworkSubnet,
			HairpinMode: c.Client.BridgeNetworkHairpinMode,
		},
	}
	for name, hv := range c.Client.HostVolumes {
		if out.HostVolumes == nil {
			out.HostVolumes = map[string]*structs.ClientHostVolumeConfig{}
		}
		out.HostVolumes[name] = &structs.ClientHostVolumeConfig{Name: name, Path: hv.Path, ReadOnly: hv.ReadOnly}
	}
	if c.Dev {
		// The dev client talks to its own server, wherever it listens.
		out.Servers = nil
	}
	return out
}

// templateSettings turns the client's template block into the template
// renderer's settings; what the block leaves zero takes Nomad's default.
func templateSettings(c *config.Config) template.Settings {
	t := c.Client.Template
	s := template.Settings{
		DisableSandbox: t.DisableFileSandbox,
		MaxStale:       t.MaxStale,
		BlockQueryWait: t.BlockQueryWait,
		NomadRetry:     template.Retry{Attempts: t.NomadRetry.Attempts, Backoff: t.NomadRetry.Backoff, MaxBackoff: t.NomadRetry.MaxBackoff},
		RenderTimeout:  t.RenderTimeout,
	}
	if c.IsSet("client.template.function_denylist") {
		s.FunctionDenylist = append([]string{}, t.FunctionDenylist...)
	}
	wait := func(prefix string, w config.TemplateWait, def *structs.WaitConfig) *structs.WaitConfig {
		minSet, maxSet := c.IsSet(prefix+".min"), c.IsSet(prefix+".max")
		if !minSet && !maxSet {
			return def
		}
		out := &structs.WaitConfig{}
		if def != nil {
			out = def.Copy()
		}
		if minSet {
			out.Min = &w.Min
		}
		if maxSet {
			out.Max = &w.Max
		}
		return out
	}
	s.Wait = wait("client.template.wait", t.Wait, template.DefaultSettings().Wait)
	s.WaitBounds = wait("client.template.wait_bounds", t.WaitBounds, nil)
	return s
}

// artifactLimits turns the checked artifact block into the client's
// limits.
func artifactLimits(a config.ClientArtifact) *taskrunner.ArtifactLimits {
	maxSize, _ := config.ParseSize(a.HTTPMaxSize)
	unpacked, _ := config.ParseSize(a.DecompressionSizeLimit)
	return &taskrunner.ArtifactLimits{
		HTTPReadTimeout: a.HTTPReadTimeout, HTTPMaxSize: maxSize,
		DecompressionFileCountLimit: a.DecompressionFileCountLimit, DecompressionSizeLimit: unpacked,
	}
}
