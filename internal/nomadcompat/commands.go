// Package nomadcompat lists Nomad's CLI commands and what drover offers for
// each. It is data only: website/nomad-compatibility.md is generated from
// it together with the job grammar (go test ./jobspec -update), and a test
// of cmd/drover checks it against drover's command tree, so that a
// command marked supported exists and every drover command is listed.
//
// Adding a command to drover: mark its row Supported (or, for a command
// Nomad has not, add it to DroverOnly), then run go test ./jobspec -update.
package nomadcompat

// Status is what drover offers for one of Nomad's commands.
type Status string

// Statuses.
const (
	// Supported: `drover PATH` exists, with Nomad's arguments and output
	// as far as its page under website/commands/ says.
	Supported Status = "supported"
	// NotSupported: drover has no such command.
	NotSupported Status = "not supported"
	// NotYet: `drover PATH` exists and takes Nomad's flags, and answers
	// with an error that says why drover does not run it yet.
	NotYet Status = "refused with the reason"
)

// Command is one of Nomad's CLI commands: its path after "nomad".
type Command struct {
	Path   string
	Status Status
	Note   string
}

// Commands are Nomad's CLI commands (v2.0, leaf commands, Enterprise ones
// aside, the deprecated top-level aliases such as "nomad run" aside), by
// group in Nomad's order.
var Commands = []Command{
	{"acl auth-method create", Supported, "JWT and OIDC methods stored; logins with JWT methods"},
	{"acl auth-method delete", Supported, "JWT and OIDC methods stored; logins with JWT methods"},
	{"acl auth-method info", Supported, "JWT and OIDC methods stored; logins with JWT methods"},
	{"acl auth-method list", Supported, "JWT and OIDC methods stored; logins with JWT methods"},
	{"acl auth-method update", Supported, "JWT and OIDC methods stored; logins with JWT methods"},
	{"acl binding-rule create", Supported, ""},
	{"acl binding-rule delete", Supported, ""},
	{"acl binding-rule info", Supported, ""},
	{"acl binding-rule list", Supported, ""},
	{"acl binding-rule update", Supported, ""},
	{"acl bootstrap", Supported, ""},
	{"acl policy apply", Supported, ""},
	{"acl policy delete", Supported, ""},
	{"acl policy info", Supported, ""},
	{"acl policy list", Supported, ""},
	{"acl policy self", Supported, "the token's policies, its roles' included"},
	{"acl role create", Supported, ""},
	{"acl role delete", Supported, ""},
	{"acl role info", Supported, ""},
	{"acl role list", Supported, ""},
	{"acl role update", Supported, ""},
	{"acl token create", Supported, ""},
	{"acl token delete", Supported, ""},
	{"acl token info", Supported, ""},
	{"acl token list", Supported, ""},
	{"acl token self", Supported, ""},
	{"acl token update", Supported, ""},
	{"agent", Supported, ""},
	{"agent-info", Supported, ""},
	{"alloc checks", Supported, ""},
	{"alloc exec", Supported, "no -e escape sequences"},
	{"alloc fs", NotSupported, ""},
	{"alloc logs", Supported, ""},
	{"alloc pause", NotSupported, "no task schedules"},
	{"alloc restart", Supported, "-all-tasks restarts the running tasks only"},
	{"alloc signal", Supported, ""},
	{"alloc status", Supported, ""},
	{"alloc stop", Supported, "no -no-shutdown-delay: drover has no shutdown delay"},
	{"config validate", NotSupported, "drover agent validates its files when it starts"},
	{"deployment fail", Supported, ""},
	{"deployment list", Supported, ""},
	{"deployment pause", Supported, ""},
	{"deployment promote", Supported, ""},
	{"deployment resume", Supported, ""},
	{"deployment status", Supported, ""},
	{"deployment unblock", Supported, ""},
	{"eval delete", NotSupported, ""},
	{"eval list", NotSupported, "job status lists a job's evaluations"},
	{"eval status", Supported, ""},
	{"fmt", Supported, ""},
	{"job action", NotSupported, "no task actions"},
	{"job allocs", NotSupported, "job status lists a job's allocations"},
	{"job deployments", Supported, ""},
	{"job dispatch", Supported, ""},
	{"job eval", NotSupported, ""},
	{"job history", Supported, ""},
	{"job init", Supported, ""},
	{"job inspect", Supported, "also reads a job file"},
	{"job periodic force", Supported, ""},
	{"job plan", Supported, ""},
	{"job promote", Supported, ""},
	{"job restart", Supported, "on the servers, as a deployment under the job's `update` block; `-plan` prints the batches"},
	{"job revert", Supported, ""},
	{"job run", Supported, ""},
	{"job scale", Supported, ""},
	{"job scaling-events", Supported, ""},
	{"job start", NotSupported, "run the job again"},
	{"job status", Supported, ""},
	{"job stop", Supported, ""},
	{"job tag apply", NotSupported, ""},
	{"job tag unset", NotSupported, ""},
	{"job validate", Supported, ""},
	{"login", Supported, "JWT auth methods; the OIDC browser flow is not supported"},
	{"monitor", Supported, ""},
	{"namespace apply", Supported, "capabilities enforced; quota, Vault and Consul settings stored only"},
	{"namespace delete", Supported, ""},
	{"namespace inspect", Supported, ""},
	{"namespace list", Supported, ""},
	{"namespace status", Supported, ""},
	{"node config", NotSupported, ""},
	{"node drain", Supported, "each allocation is replaced before it stops"},
	{"node eligibility", Supported, ""},
	{"node identity get", Supported, ""},
	{"node identity renew", Supported, ""},
	{"node intro create", Supported, ""},
	{"node meta apply", NotSupported, ""},
	{"node meta read", NotSupported, ""},
	{"node pool apply", Supported, "scheduler_config is stored and shown; drover's scheduler does not read it"},
	{"node pool delete", Supported, ""},
	{"node pool info", Supported, ""},
	{"node pool init", Supported, ""},
	{"node pool jobs", Supported, "-filter is applied by the CLI"},
	{"node pool list", Supported, "-filter is applied by the CLI"},
	{"node pool nodes", Supported, "-filter is applied by the CLI"},
	{"node status", Supported, ""},
	{"operator api", NotSupported, ""},
	{"operator autopilot get-config", Supported, ""},
	{"operator autopilot health", Supported, ""},
	{"operator autopilot set-config", Supported, ""},
	{"operator client-state", NotSupported, ""},
	{"operator debug", Supported, "-log-lookback and -log-file-export refused: agents keep no log history to export"},
	{"operator gossip keyring generate", NotSupported, "servers join over Raft with a join token, no gossip"},
	{"operator gossip keyring install", NotSupported, "servers join over Raft with a join token, no gossip"},
	{"operator gossip keyring list", NotSupported, "servers join over Raft with a join token, no gossip"},
	{"operator gossip keyring remove", NotSupported, "servers join over Raft with a join token, no gossip"},
	{"operator gossip keyring use", NotSupported, "servers join over Raft with a join token, no gossip"},
	{"operator metrics", NotSupported, ""},
	{"operator raft info", NotSupported, ""},
	{"operator raft list-peers", Supported, ""},
	{"operator raft logs", NotSupported, ""},
	{"operator raft remove-peer", Supported, ""},
	{"operator raft state", NotSupported, ""},
	{"operator raft transfer-leadership", NotSupported, ""},
	{"operator root keyring list", Supported, "key IDs shortened unless -verbose; never the key material"},
	{"operator root keyring remove", Supported, "refuses a key that still encrypts variables unless -force"},
	{"operator root keyring rotate", Supported, "-prepublish is refused; -full encrypts the variables again at once"},
	{"operator scheduler get-config", Supported, "binpack, memory oversubscription, no preemption"},
	{"operator scheduler set-config", Supported, "the configuration is fixed: a change is refused"},
	{"operator snapshot inspect", NotSupported, ""},
	{"operator snapshot redact", NotSupported, ""},
	{"operator snapshot restore", Supported, ""},
	{"operator snapshot save", Supported, ""},
	{"operator snapshot state", NotSupported, ""},
	{"operator utilization", NotSupported, ""},
	{"plugin status", NotSupported, "no CSI plugins"},
	{"scaling policy info", Supported, ""},
	{"scaling policy list", Supported, ""},
	{"server force-leave", Supported, "the leader removes the server from Raft and keeps it out until it is joined again"},
	{"server join", Supported, "joins servers of its region or of another (federation, website/multiregion.md), with the join token"},
	{"server members", Supported, ""},
	{"service delete", Supported, ""},
	{"service info", Supported, ""},
	{"service list", Supported, ""},
	{"setup consul", NotSupported, "no Consul"},
	{"setup vault", NotSupported, "no Vault"},
	{"status", Supported, ""},
	{"system gc", Supported, "the reaper's passes at once, every threshold zero"},
	{"system reconcile summaries", Supported, "nothing to do: summaries are kept by every write"},
	{"tls ca create", Supported, "nomad-agent-ca.pem and nomad-agent-ca-key.pem, ECDSA P-256; Nomad's subject flags and -name-constraint"},
	{"tls ca info", NotSupported, ""},
	{"tls cert create", Supported, "-server, -client, -cli, -region, -additional-dnsname, -additional-ipaddress, -ca, -key, -days; Nomad's file names; no -domain"},
	{"tls cert info", NotSupported, ""},
	{"ui", Supported, "-show-url; no -authenticate: the UI asks for a token on its own page"},
	{"var get", Supported, ""},
	{"var init", Supported, ""},
	{"var list", Supported, "-per-page, -page-token and -filter applied by the CLI to the whole list"},
	{"var lock", Supported, "the lock is the servers' (acquire, renew, release; released by the leader when not renewed); the child runs while it is held"},
	{"var purge", Supported, ""},
	{"var put", Supported, ""},
	{"version", Supported, ""},
	{"volume create", NotSupported, "no CSI or dynamic host volumes: host volumes are client host_volume blocks"},
	{"volume delete", NotSupported, "no CSI or dynamic host volumes: host volumes are client host_volume blocks"},
	{"volume deregister", NotSupported, "no CSI or dynamic host volumes: host volumes are client host_volume blocks"},
	{"volume detach", NotSupported, "no CSI or dynamic host volumes: host volumes are client host_volume blocks"},
	{"volume init", NotSupported, "no CSI or dynamic host volumes: host volumes are client host_volume blocks"},
	{"volume register", NotSupported, "no CSI or dynamic host volumes: host volumes are client host_volume blocks"},
	{"volume snapshot create", NotSupported, "no CSI or dynamic host volumes: host volumes are client host_volume blocks"},
	{"volume snapshot delete", NotSupported, "no CSI or dynamic host volumes: host volumes are client host_volume blocks"},
	{"volume snapshot list", NotSupported, "no CSI or dynamic host volumes: host volumes are client host_volume blocks"},
	{"volume status", NotSupported, "no CSI or dynamic host volumes: host volumes are client host_volume blocks"},
}

// DroverOnly are drover's commands that Nomad has not.
var DroverOnly = []Command{
	{"sim bench", Supported, "the fleet simulator's benchmark set (website/scale.md)"},
	{"sim probe-reads", Supported, "the read probe sim bench starts in a process of its own (website/scale.md)"},
	{"sim run", Supported, "the fleet simulator (website/scale.md)"},
}
