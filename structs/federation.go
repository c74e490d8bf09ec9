package structs

import "time"

// FederatedServer is a server of a federated region as one server tells
// another in the join exchange: the server, and how long ago a server last
// heard from it directly (its own join or answer). The receiver keeps the
// freshest of what it hears, so that a server nobody reaches any more ages
// out of every region's view within the same bound instead of being kept
// alive by the others' second-hand copies.
type FederatedServer struct {
	ServerMember
	// Age is how long before the exchange the server was last heard from
	// directly; 0 for a server describing itself or its own region's
	// current Raft configuration.
	Age time.Duration
}

// ACLReplication is the answer of `GET /v1/acl/replication`: what
// the authoritative region replicates to the others: ACL policies, global
// tokens, namespaces and node pools. Tokens are the global tokens only, each with its SecretHash (the state never holds a secret),
// which the usual JSON shape of a token leaves out.
type ACLReplication struct {
	Policies []*ACLPolicy
	Tokens   []*ReplicatedACLToken
	// Namespaces and NodePools replicate too, as Nomad's (the built-in
	// node pools excepted); nil from a server that sends none.
	Namespaces []*Namespace `json:",omitempty"`
	NodePools  []*NodePool  `json:",omitempty"`
}

// ReplicatedACLToken is a global token as it replicates: the token and its
// secret's hash (a field beside it, which the token's own JSON leaves out).
type ReplicatedACLToken struct {
	Token      *ACLToken
	SecretHash string
}
