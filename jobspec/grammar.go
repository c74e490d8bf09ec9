package jobspec

// support says what drover does with one element of Nomad's job grammar.
type support int

const (
	// supported elements are decoded into the job.
	supported support = iota
	// refused elements are errors when set: ignoring them would change what
	// the job does.
	refused
	// ignored elements are accepted with a warning: dropping them does not
	// change how the job runs under drover.
	ignored
	// serverSet elements exist only in the API form and are filled in by the
	// servers; a submitted value is ignored silently.
	serverSet
)

// kind says whether an element is an attribute or a block in HCL.
type kind int

const (
	attr kind = iota
	block
)

// element is one attribute or block of a Nomad job block. HCL is its name
// in a job file ("" when the API form alone has it); JSON is its field
// name in Nomad's API JSON ("" when only the job file has it).
type element struct {
	HCL     string
	JSON    string
	Kind    kind
	Support support
	Note    string
}

// grammar is Nomad's job grammar, per block, as the hcl tags and field names
// of github.com/hashicorp/nomad/api define it, and what drover does with
// each element. Each block lists its JSON names in the order of Nomad's
// API type (task's Identities and Identity aside), the order suggestions
// are drawn from. Tests check the table against Nomad's API types; drover
// itself does not import them.
// website/jobspec/unsupported.md documents the same table.
var grammar = map[string][]element{
	"job": {
		{"region", "Region", attr, supported, ""},
		{"namespace", "Namespace", attr, supported, ""},
		{"id", "ID", attr, supported, "must equal the job label"},
		{"name", "Name", attr, supported, "defaults to the job label; may differ (NOMAD_JOB_NAME)"},
		{"type", "Type", attr, supported, ""},
		{"priority", "Priority", attr, supported, ""},
		{"all_at_once", "AllAtOnce", attr, ignored, "placements are never all-or-nothing"},
		{"datacenters", "Datacenters", attr, supported, ""},
		{"node_pool", "NodePool", attr, supported, `the pool must exist when the job is registered`},
		{"constraint", "Constraints", block, supported, ""},
		{"affinity", "Affinities", block, supported, ""},
		{"group", "TaskGroups", block, supported, ""},
		{"task", "", block, supported, "a group of the task's name and count 1, as Nomad's"},
		{"update", "Update", block, supported, ""},
		{"multiregion", "Multiregion", block, supported, "registered in every region named, one version (website/multiregion.md)"},
		{"spread", "Spreads", block, supported, ""},
		{"periodic", "Periodic", block, supported, ""},
		{"parameterized", "ParameterizedJob", block, supported, ""},
		{"reschedule", "Reschedule", block, supported, ""},
		{"migrate", "Migrate", block, supported, ""},
		{"meta", "Meta", block, supported, ""},
		{"ui", "UI", block, ignored, "the web UI does not show a job's description and links"},
		{"vault", "", block, refused, "no Vault integration"},
		{"consul", "", block, ignored, "no Consul"},
		{"", "Stop", attr, serverSet, ""},
		{"", "ParentID", attr, serverSet, ""},
		{"", "Dispatched", attr, serverSet, ""},
		{"", "DispatchIdempotencyToken", attr, serverSet, ""},
		{"", "Payload", attr, serverSet, ""},
		{"", "ConsulNamespace", attr, serverSet, ""},
		{"", "VaultNamespace", attr, serverSet, ""},
		{"", "NomadTokenID", attr, serverSet, ""},
		{"", "Status", attr, serverSet, ""},
		{"", "StatusDescription", attr, serverSet, ""},
		{"", "Stable", attr, serverSet, ""},
		{"", "Version", attr, serverSet, ""},
		{"", "SubmitTime", attr, serverSet, ""},
		{"", "CreateIndex", attr, serverSet, ""},
		{"", "ModifyIndex", attr, serverSet, ""},
		{"", "JobModifyIndex", attr, serverSet, ""},
		{"", "VersionTag", attr, serverSet, ""},
		// drover's own: the version a revert restored (structs.Job.RevertOf).
		{"", "RevertOf", attr, serverSet, ""},
	},
	"group": {
		{"", "Name", attr, supported, ""},
		{"count", "Count", attr, supported, ""},
		{"constraint", "Constraints", block, supported, ""},
		{"affinity", "Affinities", block, supported, ""},
		{"task", "Tasks", block, supported, ""},
		{"spread", "Spreads", block, supported, ""},
		{"volume", "Volumes", block, supported, `host volumes; type = "csi" is refused`},
		{"restart", "RestartPolicy", block, supported, ""},
		{"disconnect", "Disconnect", block, supported, ""},
		{"reschedule", "ReschedulePolicy", block, supported, ""},
		{"ephemeral_disk", "EphemeralDisk", block, supported, ""},
		{"update", "Update", block, supported, ""},
		{"migrate", "Migrate", block, supported, ""},
		{"network", "Networks", block, supported, ""},
		{"meta", "Meta", block, supported, ""},
		{"service", "Services", block, supported, ""},
		{"shutdown_delay", "ShutdownDelay", attr, supported, ""},
		{"max_run_duration", "MaxRunDuration", attr, supported, ""},
		{"stop_after_client_disconnect", "StopAfterClientDisconnect", attr, supported, ""},
		{"max_client_disconnect", "MaxClientDisconnect", attr, supported, ""},
		{"scaling", "Scaling", block, supported, ""},
		{"consul", "Consul", block, ignored, "no Consul"},
		{"prevent_reschedule_on_lost", "PreventRescheduleOnLost", attr, refused, "lost allocations are always rescheduled"},
	},
	"task": {
		{"", "Name", attr, supported, ""},
		{"driver", "Driver", attr, supported, ""},
		{"user", "User", attr, supported, ""},
		{"lifecycle", "Lifecycle", block, supported, ""},
		{"config", "Config", block, supported, ""},
		{"constraint", "Constraints", block, supported, ""},
		{"affinity", "Affinities", block, supported, ""},
		{"env", "Env", block, supported, ""},
		{"service", "Services", block, supported, ""},
		{"resources", "Resources", block, supported, ""},
		{"restart", "RestartPolicy", block, supported, ""},
		{"meta", "Meta", block, supported, ""},
		{"kill_timeout", "KillTimeout", attr, supported, ""},
		{"logs", "LogConfig", block, supported, ""},
		{"artifact", "Artifacts", block, supported, ""},
		{"vault", "Vault", block, refused, "no Vault integration"},
		{"consul", "Consul", block, ignored, "no Consul"},
		{"template", "Templates", block, supported, "rendered by the client; Consul and Vault functions are refused"},
		{"dispatch_payload", "DispatchPayload", block, supported, ""},
		{"volume_mount", "VolumeMounts", block, supported, "docker bind-mounts the volume; raw_exec ignores it, as Nomad's"},
		{"csi_plugin", "CSIPluginConfig", block, refused, "no CSI"},
		{"leader", "Leader", attr, supported, ""},
		{"shutdown_delay", "ShutdownDelay", attr, supported, ""},
		{"kill_signal", "KillSignal", attr, supported, ""},
		{"kind", "Kind", attr, refused, "no Consul Connect"},
		{"scaling", "ScalingPolicies", block, refused, `task scaling "cpu" and "mem" blocks are Nomad Enterprise's vertical scaling`},
		{"secret", "Secrets", block, refused, "no secret providers"},
		{"identity", "Identities", block, refused, "identities are not configurable: each task has one default workload identity, for reading its own variables"},
		{"", "Identity", block, refused, "identities are not configurable: each task has one default workload identity, for reading its own variables"},
		{"action", "Actions", block, refused, "no task actions"},
		{"schedule", "Schedule", block, refused, "no task schedules"},
	},
	"service": {
		{"name", "Name", attr, supported, ""},
		{"tags", "Tags", attr, supported, ""},
		{"canary_tags", "CanaryTags", attr, supported, ""},
		{"enable_tag_override", "EnableTagOverride", attr, ignored, "Consul only"},
		{"port", "PortLabel", attr, supported, ""},
		{"address_mode", "AddressMode", attr, supported, `"auto" or "host": the host address; "alloc": the allocation's own, in bridge mode`},
		{"address", "Address", attr, supported, ""},
		{"check", "Checks", block, supported, ""},
		{"check_restart", "CheckRestart", block, supported, ""},
		{"connect", "Connect", block, refused, "no Consul Connect"},
		{"meta", "Meta", block, supported, ""},
		{"canary_meta", "CanaryMeta", block, ignored, "registrations carry no meta, as Nomad's"},
		{"tagged_addresses", "TaggedAddresses", block, ignored, "Consul only"},
		{"task", "TaskName", attr, supported, ""},
		{"on_update", "OnUpdate", attr, supported, ""},
		{"identity", "Identity", block, refused, "identities are not configurable: each task has one default workload identity, for reading its own variables"},
		{"weights", "Weights", block, ignored, "no DNS weights"},
		{"provider", "Provider", attr, supported, ""},
		{"cluster", "Cluster", attr, ignored, "no Consul"},
		{"kind", "Kind", attr, refused, "no Consul Connect"},
	},
	"check": {
		{"name", "Name", attr, supported, ""},
		{"type", "Type", attr, supported, ""},
		{"command", "Command", attr, supported, ""},
		{"args", "Args", attr, supported, ""},
		{"path", "Path", attr, supported, ""},
		{"protocol", "Protocol", attr, supported, ""},
		{"port", "PortLabel", attr, supported, ""},
		{"expose", "Expose", attr, refused, "no Consul Connect"},
		{"address_mode", "AddressMode", attr, ignored, "checks use the host address"},
		{"advertise", "Advertise", attr, ignored, "Consul only"},
		{"interval", "Interval", attr, supported, ""},
		{"timeout", "Timeout", attr, supported, ""},
		{"initial_status", "InitialStatus", attr, refused, "checks start critical"},
		{"notes", "Notes", attr, ignored, "Consul only"},
		{"tls_server_name", "TLSServerName", attr, refused, "no TLS checks"},
		{"tls_skip_verify", "TLSSkipVerify", attr, refused, "no TLS checks"},
		{"header", "Header", block, supported, ""},
		{"method", "Method", attr, supported, ""},
		{"check_restart", "CheckRestart", block, supported, ""},
		{"grpc_service", "GRPCService", attr, refused, "no gRPC checks"},
		{"grpc_use_tls", "GRPCUseTLS", attr, refused, "no gRPC checks"},
		{"task", "TaskName", attr, supported, ""},
		{"success_before_passing", "SuccessBeforePassing", attr, refused, "one success passes a check"},
		{"failures_before_critical", "FailuresBeforeCritical", attr, refused, "one failure fails a check"},
		{"failures_before_warning", "FailuresBeforeWarning", attr, refused, "no warning state"},
		{"body", "Body", attr, refused, "checks send no body"},
		{"on_update", "OnUpdate", attr, supported, ""},
	},
	"template": {
		{"source", "SourcePath", attr, supported, ""},
		{"destination", "DestPath", attr, supported, ""},
		{"data", "EmbeddedTmpl", attr, supported, ""},
		{"change_mode", "ChangeMode", attr, supported, ""},
		{"change_script", "ChangeScript", block, supported, ""},
		{"change_signal", "ChangeSignal", attr, supported, ""},
		{"once", "Once", attr, supported, ""},
		{"splay", "Splay", attr, supported, ""},
		{"perms", "Perms", attr, supported, ""},
		{"uid", "Uid", attr, supported, ""},
		{"gid", "Gid", attr, supported, ""},
		{"left_delimiter", "LeftDelim", attr, supported, ""},
		{"right_delimiter", "RightDelim", attr, supported, ""},
		{"env", "Envvars", attr, supported, ""},
		{"vault_grace", "VaultGrace", attr, ignored, "no Vault integration"},
		{"wait", "Wait", block, supported, ""},
		{"error_on_missing_key", "ErrMissingKey", attr, supported, ""},
	},
	"change_script": {
		{"command", "Command", attr, supported, ""},
		{"args", "Args", attr, supported, ""},
		{"timeout", "Timeout", attr, supported, ""},
		{"fail_on_error", "FailOnError", attr, supported, ""},
		{"run_on_first_render", "RunOnFirstRender", attr, ignored, "the script runs on re-renders only"},
	},
	"wait": {
		{"min", "Min", attr, supported, ""},
		{"max", "Max", attr, supported, ""},
	},
	"disconnect": {
		{"lost_after", "LostAfter", attr, supported, ""},
		{"stop_on_client_after", "StopOnClientAfter", attr, supported, ""},
		{"replace", "Replace", attr, supported, ""},
		{"reconcile", "Reconcile", attr, supported, ""},
	},
	"check_restart": {
		{"limit", "Limit", attr, supported, ""},
		{"grace", "Grace", attr, supported, ""},
		{"ignore_warnings", "IgnoreWarnings", attr, supported, ""},
	},
	"network": {
		{"mode", "Mode", attr, supported, `"host" or "bridge" (one network namespace per allocation through CNI, for every driver, docker's through a pause container)`},
		{"device", "Device", attr, refused, "ports bind on the node's address"},
		{"cidr", "CIDR", attr, refused, "ports bind on the node's address"},
		{"ip", "IP", attr, refused, "ports bind on the node's address"},
		{"dns", "DNS", block, refused, "a bridge allocation's tasks use the host's resolver configuration"},
		{"reserved_ports", "", block, refused, `write port "x" { static = N }`},
		{"", "ReservedPorts", block, supported, ""},
		{"port", "DynamicPorts", block, supported, ""},
		{"hostname", "Hostname", attr, ignored, "each task keeps its own host name (exec: the task's name)"},
		{"mbits", "MBits", attr, ignored, "bandwidth is not scheduled"},
		{"cni", "CNI", block, refused, "only the client's bridge network runs (no cni/<name> modes)"},
	},
	"port": {
		{"", "Label", attr, supported, ""},
		{"static", "Value", attr, supported, ""},
		{"to", "To", attr, supported, ""},
		{"host_network", "HostNetwork", attr, supported, `"default" only: drover clients have no other host network`},
		{"ignore_collision", "IgnoreCollision", attr, refused, "ports never collide"},
	},
	"resources": {
		{"cpu", "CPU", attr, supported, ""},
		{"cores", "Cores", attr, supported, ""},
		{"memory", "MemoryMB", attr, supported, ""},
		{"memory_max", "MemoryMaxMB", attr, supported, ""},
		{"disk", "DiskMB", attr, ignored, "Nomad parses it and ignores it too: a task's disk is the group's ephemeral_disk size"},
		{"network", "Networks", block, refused, "write the network block in the group"},
		{"device", "Devices", block, refused, "no devices"},
		{"numa", "NUMA", block, refused, "no NUMA placement"},
		{"secrets", "SecretsMB", attr, refused, "no secrets directory"},
		{"iops", "IOPS", attr, ignored, "IOPS are not scheduled"},
	},
	"restart": {
		{"interval", "Interval", attr, supported, ""},
		{"attempts", "Attempts", attr, supported, ""},
		{"delay", "Delay", attr, supported, ""},
		{"mode", "Mode", attr, supported, ""},
		{"render_templates", "RenderTemplates", attr, ignored, "a task's templates are kept current whether it restarts or not"},
	},
	"reschedule": {
		{"attempts", "Attempts", attr, supported, ""},
		{"interval", "Interval", attr, supported, ""},
		{"delay", "Delay", attr, supported, ""},
		{"delay_function", "DelayFunction", attr, supported, ""},
		{"max_delay", "MaxDelay", attr, supported, ""},
		{"unlimited", "Unlimited", attr, supported, ""},
	},
	"migrate": {
		{"max_parallel", "MaxParallel", attr, supported, ""},
		{"health_check", "HealthCheck", attr, supported, ""},
		{"min_healthy_time", "MinHealthyTime", attr, supported, ""},
		{"healthy_deadline", "HealthyDeadline", attr, supported, ""},
	},
	"ephemeral_disk": {
		{"sticky", "Sticky", attr, supported, ""},
		{"migrate", "Migrate", attr, supported, "as sticky on the same node; data is not copied between nodes"},
		{"size", "SizeMB", attr, supported, ""},
	},
	"logs": {
		{"max_files", "MaxFiles", attr, supported, ""},
		{"max_file_size", "MaxFileSizeMB", attr, supported, ""},
		{"enabled", "Enabled", attr, supported, ""},
		{"disabled", "Disabled", attr, supported, ""},
	},
	"constraint": {
		{"attribute", "LTarget", attr, supported, ""},
		{"value", "RTarget", attr, supported, ""},
		{"operator", "Operand", attr, supported, ""},
		{"distinct_hosts", "", attr, supported, ""},
		{"regexp", "", attr, supported, ""},
		{"version", "", attr, supported, ""},
		{"semver", "", attr, supported, ""},
		{"set_contains", "", attr, supported, ""},
		{"set_contains_all", "", attr, supported, ""},
		{"distinct_property", "", attr, supported, ""},
		{"set_contains_any", "", attr, supported, ""},
	},
	"affinity": {
		{"attribute", "LTarget", attr, supported, ""},
		{"value", "RTarget", attr, supported, ""},
		{"operator", "Operand", attr, supported, ""},
		{"weight", "Weight", attr, supported, ""},
	},
	"periodic": {
		{"enabled", "Enabled", attr, supported, ""},
		{"cron", "Spec", attr, supported, ""},
		{"crons", "Specs", attr, supported, ""},
		{"", "SpecType", attr, supported, ""},
		{"prohibit_overlap", "ProhibitOverlap", attr, supported, ""},
		{"time_zone", "TimeZone", attr, supported, ""},
	},
	"parameterized": {
		{"payload", "Payload", attr, supported, ""},
		{"meta_required", "MetaRequired", attr, supported, ""},
		{"meta_optional", "MetaOptional", attr, supported, ""},
	},
	"volume": {
		{"", "Name", attr, supported, ""},
		{"type", "Type", attr, supported, `"host"; "csi" is refused: no CSI volumes`},
		{"source", "Source", attr, supported, ""},
		{"read_only", "ReadOnly", attr, supported, ""},
		{"sticky", "Sticky", attr, refused, "no dynamic host volumes"},
		{"access_mode", "AccessMode", attr, refused, "no CSI volumes"},
		{"attachment_mode", "AttachmentMode", attr, refused, "no CSI volumes"},
		{"mount_options", "MountOptions", block, refused, "no CSI volumes"},
		{"per_alloc", "PerAlloc", attr, supported, ""},
	},
	"volume_mount": {
		{"volume", "Volume", attr, supported, ""},
		{"destination", "Destination", attr, supported, ""},
		{"read_only", "ReadOnly", attr, supported, ""},
		{"propagation_mode", "PropagationMode", attr, refused, `bind mounts are always "private"`},
		{"selinux_label", "SELinuxLabel", attr, ignored, "no SELinux relabelling"},
	},
	"artifact": {
		{"source", "GetterSource", attr, supported, "http, https, git and hg, as Nomad's client; a path on the client, `file://` and git or hg over a local path refused; `s3::` and `gcs::` not supported"},
		{"options", "GetterOptions", block, supported, ""},
		{"headers", "GetterHeaders", block, supported, ""},
		{"mode", "GetterMode", attr, supported, ""},
		{"insecure", "GetterInsecure", attr, supported, ""},
		{"destination", "RelativeDest", attr, supported, "must stay inside the task's directory or the allocation's shared ../alloc"},
		{"chown", "Chown", attr, supported, ""},
	},
	"dispatch_payload": {
		{"file", "File", attr, supported, ""},
	},
	"lifecycle": {
		{"hook", "Hook", attr, supported, ""},
		{"sidecar", "Sidecar", attr, supported, ""},
	},
	"scaling": {
		{"min", "Min", attr, supported, ""},
		{"max", "Max", attr, supported, ""},
		{"policy", "Policy", block, supported, ""},
		{"enabled", "Enabled", attr, supported, ""},
		{"type", "Type", attr, supported, ""},
		{"", "ID", attr, serverSet, ""},
		{"", "Namespace", attr, serverSet, ""},
		{"", "Target", attr, serverSet, ""},
		{"", "CreateIndex", attr, serverSet, ""},
		{"", "ModifyIndex", attr, serverSet, ""},
	},
	"spread": {
		{"attribute", "Attribute", attr, supported, ""},
		{"weight", "Weight", attr, supported, ""},
		{"target", "SpreadTarget", block, supported, ""},
	},
	"target": {
		{"", "Value", attr, supported, ""},
		{"percent", "Percent", attr, supported, ""},
	},
	"variable": {
		{"type", "", attr, supported, ""},
		{"default", "", attr, supported, ""},
		{"description", "", attr, supported, ""},
		{"validation", "", block, supported, ""},
		{"sensitive", "", attr, ignored, "values are not redacted"},
	},
	"validation": {
		{"condition", "", attr, supported, ""},
		{"error_message", "", attr, supported, ""},
	},
	"file": {
		{"job", "", block, supported, ""},
		{"variable", "", block, supported, ""},
		{"locals", "", block, supported, ""},
		{"variables", "", block, refused, `declare each variable with a variable "name" block`},
	},
}

// droverBlocks are the blocks drover adds to Nomad's grammar: an update
// block's zones (website/rollouts.md#zones) and its analysis blocks (website/jobspec/analysis.md). Nomad's API has no type for them.
var droverBlocks = map[string]bool{"zones": true, "analysis": true}

// The update block and its zones block take their part of the table from
// their rows (updateSpec, zoneSpec), whose decoders read the table: hence
// init rather than the literal above.
func init() {
	grammar["update"] = updateGrammar()     // spec_update.go
	grammar["zones"] = zonesGrammar()       // spec_zones.go
	grammar["analysis"] = analysisGrammar() // spec_analysis.go
}

// nomadDefaults are values of unsupported elements that ask for exactly
// what drover does anyway (Nomad's own defaults, which its client fills in
// when it canonicalizes a job). They are accepted silently. Keyed by block
// and JSON name.
var nomadDefaults = map[string]string{
	"service.OnUpdate":             "require_healthy",
	"volume_mount.PropagationMode": "private",
	"check.OnUpdate":               "require_healthy",
	"service.AddressMode":          "auto",
	"check.AddressMode":            "host",
	"service.Cluster":              "default",
}

// isNomadDefault reports whether value is the harmless default of the
// element e of blockName.
func isNomadDefault(blockName string, e element, value string) bool {
	def, ok := nomadDefaults[blockName+"."+e.JSON]
	return ok && value == def
}

// lookupHCL returns the element of block named name in a job file.
func lookupHCL(blockName, name string) (element, bool) {
	for _, e := range grammar[blockName] {
		if e.HCL == name && name != "" {
			return e, true
		}
	}
	return element{}, false
}

// hclNames lists the job-file names of a block's elements, for suggestions.
func hclNames(blockName string) []string {
	var out []string
	for _, e := range grammar[blockName] {
		if e.HCL != "" && e.Support != serverSet {
			out = append(out, e.HCL)
		}
	}
	return out
}
