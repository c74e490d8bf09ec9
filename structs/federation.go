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
// the authoritative region replicates to the others: ACL policies, roles,
// auth methods, binding rules, global tokens, namespaces and node pools.
// Tokens are the global tokens only, each with its SecretHash (the state never holds a secret),
// which the usual JSON shape of a token leaves out.
type ACLReplication struct {
	Policies []*ACLPolicy
	Tokens   []*ReplicatedACLToken
	// Namespaces and NodePools replicate too, as Nomad's (the built-in
	// node pools excepted); nil from a server that sends none. A server
	// that has none sends an empty list, never null: nil changes nothing,
	// an empty list deletes them all.
	Namespaces []*Namespace
	NodePools  []*NodePool
	// Roles, AuthMethods and BindingRules replicate too, as Nomad's (every
	// auth method, whatever its TokenLocality); nil from a server that
	// sends none. An auth method travels without its sealed secrets (its
	// configuration holds "redacted" in their place).
	Roles        []*ACLRole
	AuthMethods  []*ACLAuthMethod
	BindingRules []*ACLBindingRule
}

// ReplicatedACLToken is a global token as it replicates: the token and its
// secret's hash (a field beside it, which the token's own JSON leaves out).
type ReplicatedACLToken struct {
	Token      *ACLToken
	SecretHash string
}
