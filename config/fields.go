package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// kind is the type of a field's value.
type kind int

const (
	kString kind = iota
	kInt
	kBool
	kDuration
	kStrings
	kMap
)

func (k kind) String() string {
	return [...]string{"a string", "a whole number", "a bool", `a duration such as "10s"`, "a list of strings", "a map of strings"}[k]
}

// field is one settable value of Config: its path in the file grammar,
// its type, where it lives in a Config, and the agent flag that sets it
// ("" when none).
type field struct {
	path string
	kind kind
	ptr  func(*Config) any
	flag string
}

// fields is every value a file (or Set) can give. It drives decoding,
// Merge and Set, so that the three cannot disagree.
var fields = []field{
	{"name", kString, func(c *Config) any { return &c.Name }, "node"},
	{"region", kString, func(c *Config) any { return &c.Region }, "region"},
	{"datacenter", kString, func(c *Config) any { return &c.Datacenter }, "dc"},
	{"data_dir", kString, func(c *Config) any { return &c.DataDir }, "data-dir"},
	{"log_level", kString, func(c *Config) any { return &c.LogLevel }, "log-level"},
	{"log_json", kBool, func(c *Config) any { return &c.LogJSON }, "log-json"},
	{"enable_debug", kBool, func(c *Config) any { return &c.EnableDebug }, "enable-debug"},
	{"bind_addr", kString, func(c *Config) any { return &c.BindAddr }, "bind"},
	{"allow_remote_operator", kBool, func(c *Config) any { return &c.AllowRemoteOperator }, ""},
	{"http_api_response_headers", kMap, func(c *Config) any { return &c.HTTPAPIResponseHeaders }, ""},
	{"http_allowed_hosts", kStrings, func(c *Config) any { return &c.HTTPAllowedHosts }, ""},
	{"shutdown_timeout", kDuration, func(c *Config) any { return &c.ShutdownTimeout }, ""},
	{"addresses.http", kString, func(c *Config) any { return &c.Addresses.HTTP }, ""},
	{"addresses.raft", kString, func(c *Config) any { return &c.Addresses.Raft }, ""},
	{"ports.http", kInt, func(c *Config) any { return &c.Ports.HTTP }, ""},
	{"ports.raft", kInt, func(c *Config) any { return &c.Ports.Raft }, ""},
	{"ports.serf", kInt, func(c *Config) any { return &c.Ports.Serf }, ""},
	{"advertise.http", kString, func(c *Config) any { return &c.Advertise.HTTP }, ""},
	{"advertise.raft", kString, func(c *Config) any { return &c.Advertise.Raft }, ""},
	{"server.enabled", kBool, func(c *Config) any { return &c.Server.Enabled }, "server"},
	{"server.bootstrap_expect", kInt, func(c *Config) any { return &c.Server.BootstrapExpect }, "bootstrap-expect"},
	{"server.retry_join", kStrings, func(c *Config) any { return &c.Server.RetryJoin }, "retry-join"},
	{"server.join_token", kString, func(c *Config) any { return &c.Server.JoinToken }, ""},
	{"server.authoritative_region", kString, func(c *Config) any { return &c.Server.AuthoritativeRegion }, ""},
	{"server.heartbeat_grace", kDuration, func(c *Config) any { return &c.Server.HeartbeatGrace }, ""},
	{"server.eval_gc_threshold", kDuration, func(c *Config) any { return &c.Server.EvalGCThreshold }, ""},
	{"server.deployment_gc_threshold", kDuration, func(c *Config) any { return &c.Server.DeploymentGCThreshold }, ""},
	{"server.job_gc_threshold", kDuration, func(c *Config) any { return &c.Server.JobGCThreshold }, ""},
	{"server.node_gc_threshold", kDuration, func(c *Config) any { return &c.Server.NodeGCThreshold }, ""},
	{"server.job_tracked_versions", kInt, func(c *Config) any { return &c.Server.JobTrackedVersions }, ""},
	{"server.raft_snapshot_threshold", kInt, func(c *Config) any { return &c.Server.RaftSnapshotThreshold }, ""},
	{"server.raft_trailing_logs", kInt, func(c *Config) any { return &c.Server.RaftTrailingLogs }, ""},
	{"server.gc_percent", kInt, func(c *Config) any { return &c.Server.GCPercent }, ""},
	{"server.min_heartbeat_ttl", kDuration, func(c *Config) any { return &c.Server.MinHeartbeatTTL }, ""},
	{"server.max_heartbeats_per_second", kInt, func(c *Config) any { return &c.Server.MaxHeartbeatsPerSecond }, ""},
	{"server.heartbeat_timeout", kDuration, func(c *Config) any { return &c.Server.HeartbeatTimeout }, ""},
	{"server.election_timeout", kDuration, func(c *Config) any { return &c.Server.ElectionTimeout }, ""},
	{"server.leader_lease_timeout", kDuration, func(c *Config) any { return &c.Server.LeaderLeaseTimeout }, ""},
	{"server.enable_event_broker", kBool, func(c *Config) any { return &c.Server.EnableEventBroker }, ""},
	{"server.event_buffer_size", kInt, func(c *Config) any { return &c.Server.EventBufferSize }, ""},
	{"server.client_introduction.enforcement", kString, func(c *Config) any { return &c.Server.ClientIntroduction.Enforcement }, ""},
	{"server.client_introduction.default_identity_ttl", kDuration, func(c *Config) any { return &c.Server.ClientIntroduction.DefaultIdentityTTL }, ""},
	{"server.client_introduction.max_identity_ttl", kDuration, func(c *Config) any { return &c.Server.ClientIntroduction.MaxIdentityTTL }, ""},
	{"autopilot.cleanup_dead_servers", kBool, func(c *Config) any { return &c.Autopilot.CleanupDeadServers }, ""},
	{"autopilot.last_contact_threshold", kDuration, func(c *Config) any { return &c.Autopilot.LastContactThreshold }, ""},
	{"autopilot.max_trailing_logs", kInt, func(c *Config) any { return &c.Autopilot.MaxTrailingLogs }, ""},
	{"autopilot.min_quorum", kInt, func(c *Config) any { return &c.Autopilot.MinQuorum }, ""},
	{"autopilot.server_stabilization_time", kDuration, func(c *Config) any { return &c.Autopilot.ServerStabilizationTime }, ""},
	{"client.enabled", kBool, func(c *Config) any { return &c.Client.Enabled }, "client"},
	{"client.servers", kStrings, func(c *Config) any { return &c.Client.Servers }, "servers"},
	{"client.node_class", kString, func(c *Config) any { return &c.Client.NodeClass }, "node-class"},
	{"client.node_pool", kString, func(c *Config) any { return &c.Client.NodePool }, "node-pool"},
	{"client.intro_token", kString, func(c *Config) any { return &c.Client.IntroToken }, "client-intro-token"},
	{"client.meta", kMap, func(c *Config) any { return &c.Client.Meta }, "meta"},
	{"client.options", kMap, func(c *Config) any { return &c.Client.Options }, ""},
	{"client.chroot_env", kMap, func(c *Config) any { return &c.Client.ChrootEnv }, ""},
	{"client.cni_path", kString, func(c *Config) any { return &c.Client.CNIPath }, ""},
	{"client.cni_config_dir", kString, func(c *Config) any { return &c.Client.CNIConfigDir }, ""},
	{"client.bridge_network_name", kString, func(c *Config) any { return &c.Client.BridgeNetworkName }, ""},
	{"client.bridge_network_subnet", kString, func(c *Config) any { return &c.Client.BridgeNetworkSubnet }, ""},
	{"client.bridge_network_hairpin_mode", kBool, func(c *Config) any { return &c.Client.BridgeNetworkHairpinMode }, ""},
	{"client.cpu_total_compute", kInt, func(c *Config) any { return &c.Client.CPUTotalCompute }, ""},
	{"client.memory_total_mb", kInt, func(c *Config) any { return &c.Client.MemoryTotalMB }, ""},
	{"client.network_interface", kString, func(c *Config) any { return &c.Client.NetworkInterface }, "network-interface"},
	{"client.min_dynamic_port", kInt, func(c *Config) any { return &c.Client.MinDynamicPort }, ""},
	{"client.max_dynamic_port", kInt, func(c *Config) any { return &c.Client.MaxDynamicPort }, ""},
	{"client.template.function_denylist", kStrings, func(c *Config) any { return &c.Client.Template.FunctionDenylist }, ""},
	{"client.template.disable_file_sandbox", kBool, func(c *Config) any { return &c.Client.Template.DisableFileSandbox }, ""},
	{"client.template.max_stale", kDuration, func(c *Config) any { return &c.Client.Template.MaxStale }, ""},
	{"client.template.block_query_wait", kDuration, func(c *Config) any { return &c.Client.Template.BlockQueryWait }, ""},
	{"client.template.wait.min", kDuration, func(c *Config) any { return &c.Client.Template.Wait.Min }, ""},
	{"client.template.wait.max", kDuration, func(c *Config) any { return &c.Client.Template.Wait.Max }, ""},
	{"client.template.wait_bounds.min", kDuration, func(c *Config) any { return &c.Client.Template.WaitBounds.Min }, ""},
	{"client.template.wait_bounds.max", kDuration, func(c *Config) any { return &c.Client.Template.WaitBounds.Max }, ""},
	{"client.template.nomad_retry.attempts", kInt, func(c *Config) any { return &c.Client.Template.NomadRetry.Attempts }, ""},
	{"client.template.nomad_retry.backoff", kDuration, func(c *Config) any { return &c.Client.Template.NomadRetry.Backoff }, ""},
	{"client.template.nomad_retry.max_backoff", kDuration, func(c *Config) any { return &c.Client.Template.NomadRetry.MaxBackoff }, ""},
	{"client.template.render_timeout", kDuration, func(c *Config) any { return &c.Client.Template.RenderTimeout }, ""},
	{"client.artifact.http_read_timeout", kDuration, func(c *Config) any { return &c.Client.Artifact.HTTPReadTimeout }, ""},
	{"client.artifact.http_max_size", kString, func(c *Config) any { return &c.Client.Artifact.HTTPMaxSize }, ""},
	{"client.artifact.decompression_file_count_limit", kInt, func(c *Config) any { return &c.Client.Artifact.DecompressionFileCountLimit }, ""},
	{"client.artifact.decompression_size_limit", kString, func(c *Config) any { return &c.Client.Artifact.DecompressionSizeLimit }, ""},
	{"acl.enabled", kBool, func(c *Config) any { return &c.ACL.Enabled }, "acl-enabled"},
	{"acl.token_ttl", kDuration, func(c *Config) any { return &c.ACL.TokenTTL }, ""},
	{"acl.policy_ttl", kDuration, func(c *Config) any { return &c.ACL.PolicyTTL }, ""},
	{"acl.replication_token", kString, func(c *Config) any { return &c.ACL.ReplicationToken }, "acl-replication-token"},
	{"ui.enabled", kBool, func(c *Config) any { return &c.UI.Enabled }, ""},
	{"limits.http_write_rate", kInt, func(c *Config) any { return &c.Limits.HTTPWriteRate }, ""},
	{"limits.http_write_burst", kInt, func(c *Config) any { return &c.Limits.HTTPWriteBurst }, ""},
	{"tls.http", kBool, func(c *Config) any { return &c.TLS.HTTP }, ""},
	{"tls.rpc", kBool, func(c *Config) any { return &c.TLS.RPC }, ""},
	{"tls.ca_file", kString, func(c *Config) any { return &c.TLS.CAFile }, ""},
	{"tls.cert_file", kString, func(c *Config) any { return &c.TLS.CertFile }, ""},
	{"tls.key_file", kString, func(c *Config) any { return &c.TLS.KeyFile }, ""},
	{"tls.verify_server_hostname", kBool, func(c *Config) any { return &c.TLS.VerifyServerHostname }, ""},
	{"tls.verify_https_client", kBool, func(c *Config) any { return &c.TLS.VerifyHTTPSClient }, ""},
	{"telemetry.collection_interval", kDuration, func(c *Config) any { return &c.Telemetry.CollectionInterval }, ""},
	{"telemetry.prometheus_metrics", kBool, func(c *Config) any { return &c.Telemetry.PrometheusMetrics }, ""},
	{"telemetry.disable_hostname", kBool, func(c *Config) any { return &c.Telemetry.DisableHostname }, ""},
	{"analysis.prometheus_address", kString, func(c *Config) any { return &c.Analysis.PrometheusAddress }, ""},
	{"plugin.raw_exec.config.enabled", kBool, func(c *Config) any { return &c.Plugin.RawExec.Enabled }, ""},
	{"plugin.exec.config.default_pid_mode", kString, func(c *Config) any { return &c.Plugin.Exec.DefaultPidMode }, ""},
	{"plugin.exec.config.default_ipc_mode", kString, func(c *Config) any { return &c.Plugin.Exec.DefaultIpcMode }, ""},
	{"plugin.exec.config.allow_caps", kStrings, func(c *Config) any { return &c.Plugin.Exec.AllowCaps }, ""},
	{"plugin.java.config.default_pid_mode", kString, func(c *Config) any { return &c.Plugin.Java.DefaultPidMode }, ""},
	{"plugin.java.config.default_ipc_mode", kString, func(c *Config) any { return &c.Plugin.Java.DefaultIpcMode }, ""},
	{"plugin.java.config.allow_caps", kStrings, func(c *Config) any { return &c.Plugin.Java.AllowCaps }, ""},
	{"plugin.docker.config.infra_image", kString, func(c *Config) any { return &c.Plugin.Docker.InfraImage }, ""},
	{"plugin.docker.config.infra_image_pull_timeout", kDuration, func(c *Config) any { return &c.Plugin.Docker.InfraImagePullTimeout }, ""},
}

// fieldByPath indexes fields.
var fieldByPath = func() map[string]*field {
	m := make(map[string]*field, len(fields))
	for i := range fields {
		m[fields[i].path] = &fields[i]
	}
	return m
}()

// Fields returns the path of every field a file can set, in the order the
// documentation lists them.
func Fields() []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.path
	}
	return out
}

// mark records that the field at path was given, at l.
func (c *Config) mark(path string, l Location) {
	if c.set == nil {
		c.set = map[string]bool{}
		c.at = map[string]Location{}
	}
	c.set[path] = true
	c.at[path] = l
}

// Set gives the field at path (see Fields) a value written as on the
// command line, and records it as set at Location{File: from}; from names
// the source, such as "-bootstrap-expect". A list field takes every value
// given; a map field takes "key=value" pairs and adds them to the map; any
// other field takes exactly one value. Errors wrap ErrUnknownField or
// ErrInvalid.
func (c *Config) Set(path, from string, values ...string) error {
	f, ok := fieldByPath[path]
	if !ok {
		return fmt.Errorf("%w: %q%s", ErrUnknownField, path, suggest(path, Fields()))
	}
	bad := func(format string, args ...any) error {
		d := Diagnostic{Location: Location{File: from}, Field: path, Message: fmt.Sprintf(format, args...)}
		return &Errors{Diagnostics: []Diagnostic{d}}
	}
	if f.kind != kStrings && f.kind != kMap && len(values) != 1 {
		return bad("%s takes one value, got %d", path, len(values))
	}
	switch p := f.ptr(c).(type) {
	case *string:
		*p = values[0]
	case *int:
		n, err := strconv.Atoi(strings.TrimSpace(values[0]))
		if err != nil {
			return bad("%s must be %s (got %q)", path, f.kind, values[0])
		}
		*p = n
	case *bool:
		b, err := strconv.ParseBool(strings.TrimSpace(values[0]))
		if err != nil {
			return bad("%s must be %s (got %q)", path, f.kind, values[0])
		}
		*p = b
	case *time.Duration:
		d, err := time.ParseDuration(strings.TrimSpace(values[0]))
		if err != nil {
			return bad("%s must be %s (got %q)", path, f.kind, values[0])
		}
		*p = d
	case *[]string:
		*p = append([]string(nil), values...)
	case *map[string]string:
		m := make(map[string]string, len(*p)+len(values))
		for k, v := range *p {
			m[k] = v
		}
		for _, kv := range values {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return bad("%s takes key=value pairs (got %q)", path, kv)
			}
			m[k] = v
		}
		*p = m
	}
	c.mark(path, Location{File: from})
	return nil
}

// setPaths returns the paths of the fields given, sorted.
func (c *Config) setPaths() []string {
	out := make([]string, 0, len(c.set))
	for p := range c.set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
