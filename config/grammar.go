package config

import (
	"sort"
	"strings"
)

// blocks are the blocks of the file grammar, by path; "" is the top level.
var blocks = map[string]bool{
	"": true, "addresses": true, "ports": true, "advertise": true, "server": true, "client": true, "autopilot": true,
	"tls": true, "acl": true, "limits": true, "ui": true, "telemetry": true, "analysis": true, "plugin": true, "plugin.raw_exec": true, "plugin.raw_exec.config": true,
	"plugin.exec": true, "plugin.exec.config": true, "plugin.java": true, "plugin.java.config": true, "plugin.docker": true, "plugin.docker.config": true, "server.client_introduction": true,
	"client.template": true, "client.template.wait": true, "client.template.wait_bounds": true, "client.template.nomad_retry": true, "client.artifact": true, "client.host_volume": true,
}

// labelled are the blocks that take one label, which names them:
// plugin "raw_exec" { ... } is the block at path plugin.raw_exec.
var labelled = map[string]bool{"plugin": true, "client.host_volume": true}

// aliases are Nomad's names for drover's fields: Nomad's RPC port and
// address are the ones drover gives Raft.
var aliases = map[string]string{
	"ports.rpc":     "ports.raft",
	"addresses.rpc": "addresses.raft",
	"advertise.rpc": "advertise.raft",
}

// foreign is a Nomad agent setting that drover does not implement.
type foreign struct {
	block bool // written as a block in Nomad's grammar
	// refused settings are errors: ignoring them would change what the
	// agent does in a way the operator relies on. The others are warnings.
	refused bool
	note    string
}

// unsupported lists Nomad's agent settings drover does not implement, by
// path, and what drover does with each. website/agent-config.md lists the
// same table.
var unsupported = map[string]foreign{
	"audit":                            {true, true, "there is no audit log"},
	"consul":                           {true, true, "there is no Consul integration; a block holding only where Consul is, with auto_advertise and the auto_joins false if written, is a warning"},
	"vault":                            {true, true, "there is no Vault integration; a block that leaves it off (enabled = false or not written) is a warning"},
	"sentinel":                         {true, true, "there are no Sentinel policies"},
	"keyring":                          {true, true, "there is no keyring"},
	"plugin_dir":                       {false, false, "drivers are built in"},
	"ui.content_security_policy":       {true, false, "the UI's Content-Security-Policy is fixed: the agent's own script, style and API only"},
	"ui.consul":                        {true, false, "there is no Consul integration"},
	"ui.vault":                         {true, false, "there is no Vault integration"},
	"ui.label":                         {true, false, "the UI shows no label"},
	"limits.https_handshake_timeout":   {false, false, "TLS handshakes are bounded by the HTTP server's header timeout"},
	"limits.http_max_conns_per_client": {false, false, "connections are not limited per client; writes are (limits.http_write_rate)"},
	"limits.rpc_handshake_timeout":     {false, false, "Raft connections are not tunable"},
	"limits.rpc_max_conns_per_client":  {false, false, "Raft connections are not tunable"},
	"acl.token_min_expiration_ttl":     {false, false, "token expiry is not bounded by the servers"},
	"acl.token_max_expiration_ttl":     {false, false, "token expiry is not bounded by the servers"},
	"reporting":                        {true, false, "nothing is reported"},
	"server_join":                      {true, true, "use server.retry_join or client.servers"},
	"leave_on_interrupt":               {false, true, "a server stays a Raft member when it stops"},
	"leave_on_terminate":               {false, true, "a server stays a Raft member when it stops"},
	"enable_syslog":                    {false, false, "logs go to standard error"},
	"syslog_facility":                  {false, false, "logs go to standard error"},
	"log_file":                         {false, true, "logs go to standard error"},
	"log_rotate_bytes":                 {false, false, "logs go to standard error"},
	"log_rotate_duration":              {false, false, "logs go to standard error"},
	"log_rotate_max_files":             {false, false, "logs go to standard error"},
	"log_include_location":             {false, false, "log lines do not carry source locations"},
	"disable_update_check":             {false, false, "drover never checks for updates"},
	"disable_anonymous_signature":      {false, false, "drover never checks for updates"},
	"addresses.serf":                   {false, false, "servers find each other over HTTP; there is no gossip"},
	"advertise.serf":                   {false, false, "servers find each other over HTTP; there is no gossip"},

	"tls.rpc_upgrade_mode":                {false, true, "Raft accepts TLS only once tls.rpc is on; there is no mixed mode"},
	"tls.tls_min_version":                 {false, true, "drover speaks TLS 1.2 and later"},
	"tls.tls_cipher_suites":               {false, true, "Go's default cipher suites are used"},
	"tls.tls_prefer_server_cipher_suites": {false, false, "Go chooses the cipher suite"},

	"plugin.docker.args":                      {false, false, "drivers are built in; they take no arguments"},
	"plugin.docker.config.endpoint":           {false, true, "the daemon's address is the client option docker.endpoint"},
	"plugin.docker.config.volumes":            {true, true, "host paths and named volumes are enabled with the client option docker.volumes.enabled"},
	"plugin.raw_exec.args":                    {false, false, "drivers are built in; they take no arguments"},
	"plugin.exec.args":                        {false, false, "drivers are built in; they take no arguments"},
	"plugin.exec.config.no_pivot":             {false, false, "exec tasks always pivot_root into their root"},
	"plugin.java.args":                        {false, false, "drivers are built in; they take no arguments"},
	"plugin.raw_exec.config.no_cgroups":       {false, false, "raw_exec tasks are not put in cgroups"},
	"plugin.raw_exec.config.denied_host_uids": {false, true, "raw_exec tasks run as the agent's user; there is no user to deny"},
	"plugin.raw_exec.config.denied_host_gids": {false, true, "raw_exec tasks run as the agent's user; there is no group to deny"},

	"autopilot.enable_redundancy_zones":   {false, false, "there are no redundancy zones (Nomad Enterprise)"},
	"autopilot.disable_upgrade_migration": {false, false, "there are no upgrade migrations (Nomad Enterprise)"},
	"autopilot.enable_custom_upgrades":    {false, false, "there are no upgrade migrations (Nomad Enterprise)"},

	"server.data_dir":                 {false, true, "use the top-level data_dir"},
	"server.start_join":               {false, true, "use server.retry_join with HTTP addresses"},
	"server.server_join":              {true, true, "use server.retry_join with HTTP addresses"},
	"server.retry_max":                {false, false, "joining is retried until the agent stops"},
	"server.retry_interval":           {false, false, "joining is retried at a fixed interval"},
	"server.rejoin_after_leave":       {false, false, "servers never leave"},
	"server.encrypt":                  {false, false, "servers do not gossip; joins are signed with join_token"},
	"server.num_schedulers":           {false, false, "the scheduler's concurrency is fixed"},
	"server.enabled_schedulers":       {false, true, "every scheduler is enabled"},
	"server.raft_protocol":            {false, false, "drover speaks one Raft protocol"},
	"server.raft_multiplier":          {false, true, "set heartbeat_timeout, election_timeout and leader_lease_timeout"},
	"server.raft_boltdb":              {true, false, "the Raft store is not tunable"},
	"server.redundancy_zone":          {false, true, "there are no redundancy zones"},
	"server.non_voting_server":        {false, true, "every server votes"},
	"server.upgrade_version":          {false, true, "there are no upgrade migrations"},
	"server.license_path":             {false, false, "there is no license"},
	"server.failover_heartbeat_ttl":   {false, false, "heartbeat_grace covers failover"},
	"server.job_gc_interval":          {false, false, "the leader looks for what to collect every 2 seconds"},
	"server.default_scheduler_config": {true, true, "the scheduler is not configurable"},
	"server.plan_rejection_tracker":   {true, false, "plan rejections are not tracked"},
	"server.search":                   {true, false, "there is no search API"},
	"server.job_max_priority":         {false, true, "priorities are 1 to 100"},
	"server.job_default_priority":     {false, true, "the default priority is 50"},

	"telemetry.statsite_address":                       {false, false, "metrics are published at /v1/metrics only (Nomad's JSON and Prometheus)"},
	"telemetry.statsd_address":                         {false, false, "metrics are published at /v1/metrics only (Nomad's JSON and Prometheus)"},
	"telemetry.datadog_address":                        {false, false, "metrics are published at /v1/metrics only (Nomad's JSON and Prometheus)"},
	"telemetry.datadog_tags":                           {false, false, "metrics are published at /v1/metrics only (Nomad's JSON and Prometheus)"},
	"telemetry.circonus_api_token":                     {false, false, "metrics are published at /v1/metrics only (Nomad's JSON and Prometheus)"},
	"telemetry.circonus_submission_url":                {false, false, "metrics are published at /v1/metrics only (Nomad's JSON and Prometheus)"},
	"telemetry.publish_allocation_metrics":             {false, false, "allocations' resource usage is served by /v1/client/allocation/:id/stats, not as metrics"},
	"telemetry.publish_node_metrics":                   {false, false, "the node's resource usage is served by /v1/client/stats, not as metrics"},
	"telemetry.use_node_name":                          {false, false, "metric names never carry a host or node name"},
	"telemetry.prefix_filter":                          {false, false, "every metric is published; labels are bounded (no IDs)"},
	"telemetry.filter_default":                         {false, false, "every metric is published; labels are bounded (no IDs)"},
	"telemetry.disable_dispatched_job_summary_metrics": {false, false, "there are no per-job summary metrics"},
	"telemetry.in_memory_collection_interval":          {false, false, "the JSON metrics aggregate over Nomad's fixed 10s intervals, kept for a minute"},
	"telemetry.in_memory_retention_period":             {false, false, "the JSON metrics aggregate over Nomad's fixed 10s intervals, kept for a minute"},

	"client.state_dir":                   {false, false, "the client keeps its state under data_dir"},
	"client.alloc_dir":                   {false, false, "allocation directories live under data_dir"},
	"client.alloc_mounts_dir":            {false, false, "allocation directories live under data_dir"},
	"client.server_join":                 {true, true, "use client.servers"},
	"client.reserved":                    {true, true, "no resources are reserved; the whole node is schedulable"},
	"client.host_network":                {true, true, "there are no host networks"},
	"client.drain_on_shutdown":           {true, true, "a client does not drain itself when it stops"},
	"client.disk_total_mb":               {false, true, "disk is not scheduled"},
	"client.disk_free_mb":                {false, true, "disk is not scheduled"},
	"client.network_speed":               {false, false, "bandwidth is not scheduled"},
	"client.cpu_disable_dmidecode":       {false, false, "the CPU is fingerprinted without dmidecode"},
	"client.preferred_address_family":    {false, false, "addresses are taken as fingerprinted"},
	"client.no_host_uuid":                {false, false, "node IDs are random and kept in data_dir"},
	"client.gc_interval":                 {false, false, "allocations are garbage collected with fixed settings"},
	"client.gc_disk_usage_threshold":     {false, false, "allocations are garbage collected with fixed settings"},
	"client.gc_inode_usage_threshold":    {false, false, "allocations are garbage collected with fixed settings"},
	"client.gc_max_allocs":               {false, false, "allocations are garbage collected with fixed settings"},
	"client.gc_parallel_destroys":        {false, false, "allocations are garbage collected with fixed settings"},
	"client.max_kill_timeout":            {false, false, "a task's kill_timeout is not capped"},
	"client.disable_remote_exec":         {false, false, "there is no remote exec"},
	"client.node_max_allocs":             {false, true, "allocations per node are not capped"},
	"client.consul":                      {true, true, "there is no Consul integration"},
	"client.vault":                       {true, true, "there is no Vault integration"},
	"client.template.consul_retry":       {true, false, "there is no Consul integration"},
	"client.template.vault_retry":        {true, false, "there is no Vault integration"},
	"client.template.function_blacklist": {false, true, "write function_denylist"},
}

// join makes the path of name inside block.
func join(block, name string) string {
	if block == "" {
		return name
	}
	return block + "." + name
}

// known returns every name the grammar knows inside block, for
// suggestions.
func known(block string) []string {
	var out []string
	add := func(path string) {
		if rest, ok := strings.CutPrefix(path, block+"."); ok || block == "" {
			if block == "" {
				rest = path
			}
			if !strings.Contains(rest, ".") {
				out = append(out, rest)
			}
		}
	}
	for _, f := range fields {
		add(f.path)
	}
	for b := range blocks {
		if b != "" {
			add(b)
		}
	}
	for p := range aliases {
		add(p)
	}
	for p := range unsupported {
		add(p)
	}
	sort.Strings(out)
	return out
}
