package config

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// validNodePoolName is Nomad's rule for a node pool's name (structs.ValidateNodePoolName).
var validNodePoolName = regexp.MustCompile("^[a-zA-Z0-9-_]{1,128}$")

// logLevels are the levels log_level accepts, in any case.
var logLevels = []string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR"}

// Validate reports whether c is a configuration the agent can run: nil,
// or an *Errors (errors.Is ErrInvalid) with every problem. Use Check to
// also get the warnings.
func (c *Config) Validate() error {
	_, err := c.Check()
	return err
}

// Check validates c (see Validate) and also returns warnings: settings
// that work but are probably not what was meant, such as an even
// bootstrap_expect. Each problem is located where its field was given: a
// file position, a flag, or nowhere for a default.
func (c *Config) Check() ([]Warning, error) {
	v := &validator{c: c}
	v.general()
	v.network()
	v.server()
	v.autopilot()
	v.client()
	v.tls()
	v.rawExec()
	v.acl()
	v.telemetry()
	v.clientIntroduction()
	return v.r.result()
}

// validator checks one Config.
type validator struct {
	c *Config
	r report
}

func (v *validator) at(path string) Location { return v.c.at[path] }

func (v *validator) errorf(path, format string, args ...any) {
	v.r.errorf(v.at(path), path, format, args...)
}

func (v *validator) warnf(path, format string, args ...any) {
	v.r.warnf(v.at(path), path, format, args...)
}

func (v *validator) general() {
	c := v.c
	if !c.Server.Enabled && !c.Client.Enabled {
		v.r.errorf(firstOf(v, "server.enabled", "client.enabled"), "server.enabled",
			"neither server nor client is enabled: set server { enabled = true } or client { enabled = true } (or -server, -client, -dev)")
	}
	if !c.Dev && strings.TrimSpace(c.DataDir) == "" {
		v.errorf("data_dir", "data_dir is required (or -data-dir); only -dev runs without one")
	}
	ok := false
	for _, l := range logLevels {
		ok = ok || strings.EqualFold(c.LogLevel, l)
	}
	if !ok {
		v.errorf("log_level", "log_level %q is not one of %s", c.LogLevel, strings.Join(logLevels, ", "))
	}
	for _, f := range []struct{ path, s string }{{"region", c.Region}, {"datacenter", c.Datacenter}} {
		if strings.TrimSpace(f.s) == "" {
			v.errorf(f.path, "%s must not be empty", f.path)
		}
	}
	if c.ShutdownTimeout < time.Second {
		v.errorf("shutdown_timeout", "shutdown_timeout must be at least 1s (got %s)", c.ShutdownTimeout)
	}
	for _, h := range c.HTTPAllowedHosts {
		if h == "" || strings.ContainsAny(h, ":/ []") {
			v.errorf("http_allowed_hosts", "http_allowed_hosts: %q is not a host name (give the name alone, without a scheme or a port)", h)
		}
	}
}

func (v *validator) network() {
	c := v.c
	v.port("ports.http", c.Ports.HTTP)
	v.port("ports.raft", c.Ports.Raft)
	v.serfPort()
	v.ip("bind_addr", c.BindAddr, false)
	v.ip("addresses.http", c.Addresses.HTTP, true)
	v.ip("addresses.raft", c.Addresses.Raft, true)
	if c.Server.Enabled && c.Ports.HTTP == c.Ports.Raft && orElse(c.Addresses.HTTP, c.BindAddr) == orElse(c.Addresses.Raft, c.BindAddr) {
		v.errorf("ports.raft", "ports.raft and ports.http are both %d on the same address", c.Ports.Raft)
	}
	v.hostPort("advertise.http", "", c.Advertise.HTTP, true)
	v.hostPort("advertise.raft", "", c.Advertise.Raft, true)
	if !c.Server.Enabled {
		return
	}
	// Other servers dial the advertised addresses; a wildcard bind address
	// cannot be dialled.
	if c.Advertise.Raft == "" && unspecified(orElse(c.Addresses.Raft, c.BindAddr)) {
		v.r.errorf(firstOf(v, "addresses.raft", "bind_addr"), "advertise.raft",
			"advertise.raft is required when the Raft bind address is %s: other servers cannot dial it", orElse(c.Addresses.Raft, c.BindAddr))
	}
	if c.Advertise.HTTP == "" && unspecified(orElse(c.Addresses.HTTP, c.BindAddr)) {
		v.r.errorf(firstOf(v, "addresses.http", "bind_addr"), "advertise.http",
			"advertise.http is required when the HTTP bind address is %s: other servers cannot dial it", orElse(c.Addresses.HTTP, c.BindAddr))
	}
}

func (v *validator) autopilot() {
	a := v.c.Autopilot
	for _, d := range []struct {
		path string
		d    time.Duration
	}{{"autopilot.last_contact_threshold", a.LastContactThreshold}, {"autopilot.server_stabilization_time", a.ServerStabilizationTime}} {
		if d.d < 0 {
			v.errorf(d.path, "%s must not be negative (got %s)", d.path, d.d)
		}
	}
	for _, n := range []struct {
		path string
		n    int
	}{{"autopilot.max_trailing_logs", a.MaxTrailingLogs}, {"autopilot.min_quorum", a.MinQuorum}} {
		if n.n < 0 {
			v.errorf(n.path, "%s must not be negative (got %d)", n.path, n.n)
		}
	}
}

func (v *validator) server() {
	s := v.c.Server
	if !s.Enabled {
		for _, p := range []string{"server.bootstrap_expect", "server.retry_join"} {
			if v.c.IsSet(p) {
				v.warnf(p, "%s is ignored: the server is not enabled", p)
			}
		}
		return
	}
	switch {
	case s.BootstrapExpect < 0:
		v.errorf("server.bootstrap_expect", "server.bootstrap_expect must not be negative (got %d)", s.BootstrapExpect)
	case s.BootstrapExpect == 0 && !v.c.Dev:
		// As Nomad: such a server never bootstraps a cluster; it waits to
		// be joined to one (dev mode takes 1).
		v.warnf("server.bootstrap_expect", "server.bootstrap_expect is 0: this server does not bootstrap a cluster; it waits to be joined to one (server.retry_join, or \"server join\" on a member)")
	case s.BootstrapExpect%2 == 0:
		v.warnf("server.bootstrap_expect", "server.bootstrap_expect is %d: an odd number of servers is recommended (%d servers tolerate no more failures than %d)", s.BootstrapExpect, s.BootstrapExpect, s.BootstrapExpect-1)
	}
	for i, a := range s.RetryJoin {
		v.hostPort("server.retry_join", "["+strconv.Itoa(i)+"]", a, false)
	}
	if s.JoinToken == "" && !v.c.AllowRemoteOperator {
		for _, a := range s.RetryJoin {
			if host, _, err := net.SplitHostPort(a); err == nil && !isLoopbackHost(host) {
				v.warnf("server.retry_join", "server.join_token is empty: the servers at %s will refuse this server's joins, which they accept from loopback addresses only without a join token", a)
				break
			}
		}
	}
	if s.BootstrapExpect > 1 && len(s.RetryJoin) == 0 {
		v.warnf("server.bootstrap_expect", "server.bootstrap_expect is %d but server.retry_join is empty: this server waits for the others to join it", s.BootstrapExpect)
	}
	if s.EvalGCThreshold < time.Second {
		v.errorf("server.eval_gc_threshold", "server.eval_gc_threshold must be at least 1s (got %s)", s.EvalGCThreshold)
	}
	if s.DeploymentGCThreshold < time.Second {
		v.errorf("server.deployment_gc_threshold", "server.deployment_gc_threshold must be at least 1s (got %s)", s.DeploymentGCThreshold)
	}
	if s.JobGCThreshold < time.Second {
		v.errorf("server.job_gc_threshold", "server.job_gc_threshold must be at least 1s (got %s)", s.JobGCThreshold)
	}
	if s.NodeGCThreshold < time.Second {
		v.errorf("server.node_gc_threshold", "server.node_gc_threshold must be at least 1s (got %s)", s.NodeGCThreshold)
	}
	if s.JobTrackedVersions < 1 {
		v.errorf("server.job_tracked_versions", "server.job_tracked_versions must be greater than 0 (got %d)", s.JobTrackedVersions)
	}
	if s.RaftSnapshotThreshold < 0 {
		v.errorf("server.raft_snapshot_threshold", "server.raft_snapshot_threshold must not be negative (got %d)", s.RaftSnapshotThreshold)
	}
	if s.GCPercent != 0 && s.GCPercent < MinServerGCPercent {
		v.errorf("server.gc_percent", "server.gc_percent must be at least %d, or 0 for the default %d (got %d)", MinServerGCPercent, DefaultServerGCPercent, s.GCPercent)
	}
	if s.RaftTrailingLogs < 0 {
		v.errorf("server.raft_trailing_logs", "server.raft_trailing_logs must not be negative (got %d)", s.RaftTrailingLogs)
	}
	if s.HeartbeatGrace < 0 {
		v.errorf("server.heartbeat_grace", "server.heartbeat_grace must not be negative (got %s)", s.HeartbeatGrace)
	}
	if s.MinHeartbeatTTL < 0 {
		v.errorf("server.min_heartbeat_ttl", "server.min_heartbeat_ttl must not be negative (got %s)", s.MinHeartbeatTTL)
	}
	if s.MaxHeartbeatsPerSecond < 0 {
		v.errorf("server.max_heartbeats_per_second", "server.max_heartbeats_per_second must not be negative (got %d)", s.MaxHeartbeatsPerSecond)
	}
	for _, t := range []struct {
		path string
		set  bool
		d    string
		ok   bool
	}{
		{"server.heartbeat_timeout", s.HeartbeatTimeout != 0, s.HeartbeatTimeout.String(), s.HeartbeatTimeout >= raftMinTimeout},
		{"server.election_timeout", s.ElectionTimeout != 0, s.ElectionTimeout.String(), s.ElectionTimeout >= raftMinTimeout},
		{"server.leader_lease_timeout", s.LeaderLeaseTimeout != 0, s.LeaderLeaseTimeout.String(), s.LeaderLeaseTimeout >= raftMinTimeout},
	} {
		if t.set && !t.ok {
			v.errorf(t.path, "%s must be at least %s (got %s)", t.path, raftMinTimeout, t.d)
		}
	}
	hb, _, lease := v.c.RaftTimeouts()
	if lease > hb {
		v.r.errorf(firstOf(v, "server.leader_lease_timeout", "server.heartbeat_timeout"), "server.leader_lease_timeout",
			"server.leader_lease_timeout (%s) must not exceed server.heartbeat_timeout (%s)", lease, hb)
	}
}

func (v *validator) client() {
	c := v.c.Client
	if !c.Enabled {
		if v.c.IsSet("client.servers") {
			v.warnf("client.servers", "client.servers is ignored: the client is not enabled")
		}
		return
	}
	if len(c.Servers) == 0 && !v.c.Server.Enabled {
		v.errorf("client.servers", "client.servers is required when this agent runs no server (HTTP addresses of the servers)")
	}
	for i, a := range c.Servers {
		v.hostPort("client.servers", "["+strconv.Itoa(i)+"]", a, false)
	}
	if c.NodePool == "all" {
		v.errorf("client.node_pool", `client.node_pool must not be "all": it is reserved for jobs that run in every pool`)
	}
	if c.NodePool == "" && v.c.IsSet("client.node_pool") {
		v.errorf("client.node_pool", "client.node_pool must not be empty")
	}
	if c.NodePool != "" && !validNodePoolName.MatchString(c.NodePool) {
		v.errorf("client.node_pool", "client.node_pool %q is not a node pool name: 1 to 128 of a-z, A-Z, 0-9, - and _, as Nomad's", c.NodePool)
	}
	for _, p := range []struct {
		path string
		n    int
	}{{"client.cpu_total_compute", c.CPUTotalCompute}, {"client.memory_total_mb", c.MemoryTotalMB}} {
		if p.n < 0 {
			v.errorf(p.path, "%s must not be negative (got %d)", p.path, p.n)
		}
	}
	if s, ok := c.Options["docker.volumes.enabled"]; ok {
		if _, err := strconv.ParseBool(s); err != nil {
			v.errorf("client.options", `client.options "docker.volumes.enabled" must be "true" or "false" (got %q)`, s)
		}
	}
	v.clientTemplate(&c.Template)
	a := c.Artifact
	if a.HTTPReadTimeout < 0 {
		v.errorf("client.artifact.http_read_timeout", "client.artifact.http_read_timeout must not be negative (got %s)", a.HTTPReadTimeout)
	}
	if a.DecompressionFileCountLimit < 0 {
		v.errorf("client.artifact.decompression_file_count_limit", "client.artifact.decompression_file_count_limit must not be negative (got %d)", a.DecompressionFileCountLimit)
	}
	for _, p := range []struct{ path, s string }{
		{"client.artifact.http_max_size", a.HTTPMaxSize}, {"client.artifact.decompression_size_limit", a.DecompressionSizeLimit},
	} {
		if _, err := ParseSize(p.s); err != nil {
			v.errorf(p.path, "%s: %v", p.path, err)
		}
	}
	v.port("client.min_dynamic_port", c.MinDynamicPort)
	v.port("client.max_dynamic_port", c.MaxDynamicPort)
	v.bridge(c)
	if c.MinDynamicPort >= c.MaxDynamicPort {
		v.r.errorf(firstOf(v, "client.min_dynamic_port", "client.max_dynamic_port"), "client.min_dynamic_port",
			"client.min_dynamic_port (%d) must be below client.max_dynamic_port (%d)", c.MinDynamicPort, c.MaxDynamicPort)
	}
}

// port checks a TCP port number.
func (v *validator) port(path string, n int) {
	if n < 1 || n > 65535 {
		v.errorf(path, "%s must be a port from 1 to 65535 (got %d)", path, n)
	}
}

// ip checks an IP address; empty is allowed when optional.
func (v *validator) ip(path, s string, optional bool) {
	if s == "" && optional {
		return
	}
	if net.ParseIP(s) == nil {
		v.errorf(path, "%s must be an IP address (got %q)", path, s)
	}
}

// hostPort checks a host:port address; index names a list element.
func (v *validator) hostPort(path, index, s string, optional bool) {
	if s == "" && optional {
		return
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		v.errorf(path, "%s%s must be host:port (got %q)", path, index, s)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		v.errorf(path, "%s%s has an invalid port (got %q)", path, index, s)
	}
}

// firstOf returns where the first of paths that is set was given.
func firstOf(v *validator, paths ...string) Location {
	for _, p := range paths {
		if v.c.IsSet(p) {
			return v.at(p)
		}
	}
	return Location{}
}

func unspecified(ip string) bool {
	p := net.ParseIP(ip)
	return p != nil && p.IsUnspecified()
}

// isLoopbackHost reports whether host is a loopback IP or "localhost".
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
