package structs

// ServerMembers is the answer of GET /v1/agent/members, in Nomad's shape:
// the answering agent's name, region and datacenter, and the servers it
// knows.
type ServerMembers struct {
	ServerName   string
	ServerRegion string
	ServerDC     string
	Members      []*AgentMember
}

// AgentMember is one server as GET /v1/agent/members lists it, in Nomad's
// shape. Drover has no gossip layer: Addr and Port are the server's HTTP
// address (the one other servers join through), Status is what a probe of
// that address found, and Tags carry the rest as Nomad names them
// (id, region, dc, build, port and rpc_addr for Raft, raft_vsn) plus
// http_addr. The protocol fields are zero.
type AgentMember struct {
	Name        string
	Addr        string
	Port        uint16
	Tags        map[string]string
	Status      string
	ProtocolMin uint8
	ProtocolMax uint8
	ProtocolCur uint8
	DelegateMin uint8
	DelegateMax uint8
	DelegateCur uint8
}

// Member statuses, as Nomad's (serf's) names.
const (
	MemberStatusAlive  = "alive"
	MemberStatusFailed = "failed"
	MemberStatusLeft   = "left"
)
