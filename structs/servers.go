package structs

// ServerMember describes one server to the other servers: what they need
// to reach it over Raft and over HTTP.
type ServerMember struct {
	ID         string // Raft server ID (a UUID kept in the data directory)
	Name       string // node name
	RaftAddr   string
	HTTPAddr   string
	Region     string
	Datacenter string
	Version    string
	// Build is the server's ServerBuild; 0 for a server of a build from
	// before builds were numbered, which announces none (treated as 1).
	Build int `json:",omitempty"`
}

// ServerBuild numbers what this build's servers write and accept of each
// other: the formats of the forwarded requests, the Raft log's message
// types and fields, the snapshots and the client protocol. It goes up by one
// in each release that adds to any of them, and a server writes what is new
// only once every server announces a build that knows it (the version-skew
// rule, website/production.md#upgrading).
//
//   - 1: the builds before numbering (up to upgrade/PREVIOUS): forward v2.
//   - 2: forward v3, which carries the original caller's address, for the
//     leader to count a forwarded write against it.
//     ACL roles, auth methods, binding rules and one-time tokens: the log
//     entries ACLRoleUpsert/Delete, ACLAuthMethodUpsert/Delete,
//     ACLBindingRuleUpsert/Delete, OneTimeTokenUpsert/Exchange (fsm types
//     50–57), the snapshot's records of their tables (tags 50–53), and
//     ACLToken's Sealed field.
//     The scheduler configuration: the log entry SchedulerSetConfig (fsm
//     type 60) and the snapshot's scheduler_config record (tag 60).
//     Node pools: the log entries NodePoolUpsert and NodePoolDelete
//     (fsm types 45, 46) and the snapshot's node_pools records.
//     Namespaces: the log entries NamespaceUpsert and NamespaceDelete
//     (fsm types 40, 41), the snapshot's namespaces and job_submissions
//     records, and JobRegister's Submission field.
//     Variable locks: the log entry VarLock (fsm type 63) and
//     VariableMetadata's Lock and VariableEncrypted's LockExpires fields.
//     Multi-region rollouts: the deployment statuses pending and blocked
//     (active, as Nomad's) and Deployment's IsMultiregion, written in the
//     existing entries (plans, DeploymentStatusUpdate) once every server
//     is of build 2 (server/multiregion_watch.go).
//     Multi-region jobs: the log entry JobRegisterAtVersion (fsm type 70).
const ServerBuild = 2

// EffectiveBuild is b, or 1 for a server that announced none.
func EffectiveBuild(b int) int { return max(b, 1) }

// ServerJoinRequest is the body of `POST /v1/internal/join`: a server
// announcing itself to another and sharing the servers it knows.
type ServerJoinRequest struct {
	Self  ServerMember
	Known []ServerMember
	// Federation lists the servers of other regions the caller knows and,
	// with age 0, its own region's (structs/federation.go); a server of
	// another region only ever lands there, never in Known.
	Federation []FederatedServer `json:",omitempty"`
}

// ServerJoinResponse answers a ServerJoinRequest with what the receiving
// server knows. Bootstrapped reports whether it already has Raft state;
// a server that sees a bootstrapped peer never bootstraps itself.
type ServerJoinResponse struct {
	Self            ServerMember
	Known           []ServerMember
	Bootstrapped    bool
	BootstrapExpect int
	LeaderID        string
	// Federation is as in ServerJoinRequest.
	Federation []FederatedServer `json:",omitempty"`
}

// RaftServer is one server of `GET /v1/operator/raft/configuration`, in
// Nomad's shape.
type RaftServer struct {
	ID           string
	Node         string
	Address      string
	Leader       bool
	Voter        bool
	RaftProtocol string
}

// RaftConfiguration is the answer of `GET /v1/operator/raft/configuration`.
type RaftConfiguration struct {
	Servers []*RaftServer
	Index   uint64
}

// AgentSelf is the answer of `GET /v1/agent/self`: the agent's
// configuration, its member record and Raft statistics. The top-level keys
// are lower case, as Nomad's.
type AgentSelf struct {
	Config AgentConfig                  `json:"config"`
	Member ServerMember                 `json:"member"`
	Stats  map[string]map[string]string `json:"stats"`
}

// AgentConfig is the part of the agent's configuration /v1/agent/self
// reports.
type AgentConfig struct {
	Region     string
	Datacenter string
	NodeName   string
	Version    string
	DataDir    string
	Server     AgentServerConfig
	Addresses  AgentAddresses
}

// AgentServerConfig is the server block of AgentConfig.
type AgentServerConfig struct {
	Enabled         bool
	BootstrapExpect int
	ServerID        string
	RetryJoin       []string
}

// AgentAddresses are the addresses the agent listens on.
type AgentAddresses struct {
	HTTP string
	Raft string
}
