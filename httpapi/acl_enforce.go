package httpapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/internal/keyring"
	"github.com/droverhq/drover/structs"
)

// With ACLs on (agent config acl { enabled = true }), every request is
// checked against what its route declares it needs (route.need) before
// its handler runs, on the server that serves it: a follower forwards a
// write or a non-stale read with its token (X-Nomad-Token, or
// "Authorization: Bearer"), and the leader checks it against the state it
// is the first to hold. So a token deleted through the leader stops
// working for every write and every read that is not ?stale, through
// every server, as soon as the deletion returns; nothing is cached but
// compiled policies, keyed by their ModifyIndex. A ?stale read or an
// agent endpoint on a follower is checked against that follower's copy,
// which is behind the leader by its replication lag (milliseconds).
//
// The answers, as Nomad's: 403 "Permission denied" (with what the route
// needs), 403 "ACL token not found", 403 "ACL token expired". A request
// without a token is the anonymous token: the rules of the policy named
// "anonymous" when there is one, nothing otherwise. Deny by default: a
// route that declares nothing is refused (and a test fails on it).
//
// The client routes (/v1/internal/) are not for tokens: a client node
// presents its node secret, and may only heartbeat as itself and read and
// update its own allocations (another node's is a 403). A node registers
// with its secret; the servers keep its hash, and a later registration of
// the same node must present the same secret.
//
// With ACLs off nothing is checked (the routes stay open, as Nomad's
// without ACLs) and the /v1/acl/ endpoints answer 400 "ACL support
// disabled".

// ACLConfig configures the ACL system of the API.
type ACLConfig struct {
	Enabled bool
}

// WithACL turns ACL enforcement on or off.
func WithACL(c ACLConfig) Option { return func(s *Server) { s.aclConfig = c } }

// Sentinel errors of token resolution; each answers 403.
var (
	// ErrPermissionDenied: the token does not grant what the route needs.
	ErrPermissionDenied = errors.New("Permission denied")
	// ErrTokenNotFound: no token has the presented secret.
	ErrTokenNotFound = errors.New("ACL token not found")
	// ErrTokenExpired: the token's ExpirationTime has passed.
	ErrTokenExpired = errors.New("ACL token expired")
	// ErrACLDisabled: an /v1/acl/ endpoint on an agent without ACLs (400).
	ErrACLDisabled = errors.New("ACL support disabled")
	// errUnknownNodeSecret: no node has the presented secret (a follower
	// asks the leader before refusing).
	errUnknownNodeSecret = errors.New("node secret not found")
)

// TokenHeader carries the ACL token (or a client node's secret), as
// Nomad's.
const TokenHeader = "X-Nomad-Token"

// TokenFromRequest returns the token a request presents: X-Nomad-Token,
// or the bearer of an Authorization header, as Nomad's.
func TokenFromRequest(r *http.Request) string {
	if t := strings.TrimSpace(r.Header.Get(TokenHeader)); t != "" {
		return t
	}
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(v)
	}
	return ""
}

// needKind is what a route asks of its caller.
type needKind int

const (
	needUndeclared        needKind = iota // the zero value: refused, and the route walk fails
	needPublic                            // anyone (status, health, regions, bootstrap)
	needNamespace                         // a namespace capability in the request's namespace
	needNodeRead                          // node { policy = "read" }
	needNodeWrite                         // node { policy = "write" }
	needAgentRead                         // agent { policy = "read" }
	needOperatorRead                      // operator { policy = "read" }
	needOperatorWrite                     // operator { policy = "write" }
	needManagement                        // a management token
	needToken                             // a token the servers know; the handler narrows
	needAnyCaller                         // anyone, anonymous included; the handler narrows
	needNodeRegister                      // a client node's secret, checked by the handler
	needNodeSelf                          // the secret of the node the path names
	needNodeAny                           // the secret of a registered node
	needNodeReadOrSelf                    // node read, or the secret of the node the path names
	needServerJoin                        // signed with the join token (access.go)
	needEventTopics                       // per ?topic= of the event stream (event_stream.go)
	needAgentReadOrServer                 // agent:read, or a server's signed probe (autopilot)
	needVariables                         // a variables capability on the request's path (variables.go)
	needServiceRead                       // read-job in the request's namespace, or a workload identity of it
	needNodePool                          // a node_pool capability on the pool the path names (nodepools.go)
	needAgentWrite                        // agent { policy = "write" }
)

// need is what a route declares it needs.
type need struct {
	kind       needKind
	capability string // for needNamespace
	// or is a second namespace capability that serves as well ("" none),
	// as Nomad lets read-job read scaling policies.
	or string
}

// The needs routes declare.
var (
	public         = need{kind: needPublic}
	nodeRead       = need{kind: needNodeRead}
	nodeWrite      = need{kind: needNodeWrite}
	agentRead      = need{kind: needAgentRead}
	agentWrite     = need{kind: needAgentWrite}
	operatorRead   = need{kind: needOperatorRead}
	operatorWrite  = need{kind: needOperatorWrite}
	management     = need{kind: needManagement}
	anyToken       = need{kind: needToken}
	anyCaller      = need{kind: needAnyCaller}
	nodeRegister   = need{kind: needNodeRegister}
	nodeSelf       = need{kind: needNodeSelf}
	nodeAny        = need{kind: needNodeAny}
	nodeReadOrSelf = need{kind: needNodeReadOrSelf}
	serverJoin     = need{kind: needServerJoin}
	// agentReadOrServer lets the other servers' autopilot read this
	// server's Raft statistics (/v1/agent/self) without a token: they sign
	// the probe with the join token.
	agentReadOrServer = need{kind: needAgentReadOrServer}
	eventTopics       = need{kind: needEventTopics}
	// serviceRead lets a task's workload identity read its namespace's
	// service registrations (templates' nomadService, nomadServices), as
	// Nomad's; a token needs read-job.
	serviceRead = need{kind: needServiceRead}
)

// nsCap needs a namespace capability (acl.NamespaceCapability…).
func nsCap(capability string) need { return need{kind: needNamespace, capability: capability} }

// nsCapOr needs either of two namespace capabilities.
func nsCapOr(capability, or string) need {
	return need{kind: needNamespace, capability: capability, or: or}
}

// caps names the namespace capabilities n accepts ("a or b").
func (n need) caps() string {
	if n.or != "" {
		return n.capability + " or " + n.or
	}
	return n.capability
}

// allowedIn reports whether a grants n in namespace ns.
func (n need) allowedIn(a *acl.ACL, ns string) bool {
	return a.AllowNamespaceOp(ns, n.capability) || (n.or != "" && a.AllowNamespaceOp(ns, n.or))
}

// String names the need as website/api/acl.md lists it.
func (n need) String() string {
	switch n.kind {
	case needPublic:
		return "none"
	case needNamespace:
		if n.or != "" {
			return "namespace:" + n.capability + " or namespace:" + n.or
		}
		return "namespace:" + n.capability
	case needNodeRead:
		return "node:read"
	case needNodeWrite:
		return "node:write"
	case needAgentRead:
		return "agent:read"
	case needAgentWrite:
		return "agent:write"
	case needOperatorRead:
		return "operator:read"
	case needOperatorWrite:
		return "operator:write"
	case needManagement:
		return "management"
	case needToken:
		return "a token"
	case needAnyCaller:
		return "none (filtered)"
	case needNodeRegister, needNodeAny:
		return "node secret"
	case needNodeSelf:
		return "node secret (own node)"
	case needNodeReadOrSelf:
		return "node:read, or node secret (own node)"
	case needServerJoin:
		return "join token"
	case needAgentReadOrServer:
		return "agent:read, or a server's probe signed with the join token"
	case needEventTopics:
		return "per topic: namespace:read-job (Job, Allocation, Deployment, Evaluation, Service), node:read (Node), management (NodePool, *)"
	case needServiceRead:
		return "namespace:read-job, or a workload identity of the namespace"
	case needNodePool:
		return "node_pool:" + n.capability + " on the pool"
	case needVariables:
		if n.capability == acl.VariablesCapabilityList {
			return "variables:list on some path of the namespace (the list keeps what the token may list)"
		}
		return "variables:" + n.capability + " on the path"
	}
	return "undeclared"
}

// authz is what the check of a request learned; handlers read it to
// narrow their answers (namespaces, the node a secret names).
type authz struct {
	enabled bool
	need    need
	acl     *acl.ACL
	token   *structs.ACLToken // nil: anonymous (or a node)
	node    *structs.Node     // the node whose secret the request presents
}

type authzKey struct{}

// authzOf returns the check of r; an unchecked request (a test calling a
// handler directly) is as with ACLs off.
func authzOf(r *http.Request) *authz {
	if a, ok := r.Context().Value(authzKey{}).(*authz); ok {
		return a
	}
	return &authz{}
}

// authorize checks r against what rt needs and returns r carrying the
// check, or the error to answer with.
func (s *Server) authorize(r *http.Request, rt route) (*http.Request, error) {
	z := &authz{enabled: s.aclConfig.Enabled, need: rt.need}
	if rt.need.kind == needUndeclared {
		return nil, Errorf(http.StatusForbidden, "%s: %s declares no permission: %w", ErrPermissionDenied, rt.pattern, ErrPermissionDenied)
	}
	if !z.enabled {
		return withAuthz(r, z), nil
	}
	secret := TokenFromRequest(r)
	switch rt.need.kind {
	case needPublic, needServerJoin, needNodeRegister:
		return withAuthz(r, z), nil
	case needAgentReadOrServer:
		if s.signedByServer(r) {
			return withAuthz(r, z), nil
		}
	case needNodeSelf, needNodeAny, needNodeReadOrSelf:
		var node *structs.Node
		if secret != "" || rt.need.kind != needNodeReadOrSelf {
			var err error
			if node, err = s.nodeBySecret(secret); err != nil {
				return nil, err
			}
		}
		switch {
		case node != nil && (rt.need.kind == needNodeAny || node.ID == r.PathValue("id")):
			z.node = node
			return withAuthz(r, z), nil
		case node != nil:
			return nil, Errorf(http.StatusForbidden, "%s: node %s may only ask about itself, not node %q: %w",
				ErrPermissionDenied, node.ID, r.PathValue("id"), ErrPermissionDenied)
		case rt.need.kind != needNodeReadOrSelf:
			return nil, Errorf(http.StatusForbidden, "%s: %s needs the secret of a registered client node: %w",
				ErrPermissionDenied, rt.pattern, errUnknownNodeSecret)
		}
	}
	a, tok, err := s.resolve(secret)
	if err != nil {
		return nil, err
	}
	z.acl, z.token = a, tok
	if !allows(z, rt.need, r) {
		return nil, Errorf(http.StatusForbidden, "%s: %s needs %s: %w", ErrPermissionDenied, rt.pattern, describeNeed(rt.need, r), ErrPermissionDenied)
	}
	return withAuthz(r, z), nil
}

func withAuthz(r *http.Request, z *authz) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), authzKey{}, z))
}

// describeNeed says what a refused request lacked.
func describeNeed(n need, r *http.Request) string {
	if n.kind == needNamespace {
		return fmt.Sprintf("%s in namespace %q", n.caps(), namespaceOf(r))
	}
	if n.kind == needNodeReadOrSelf {
		return "node:read"
	}
	if n.kind == needServiceRead {
		return fmt.Sprintf("read-job in namespace %q", namespaceOf(r))
	}
	if n.kind == needVariables {
		if p := cleanVarPath(r.PathValue("path")); p != "" {
			return fmt.Sprintf("variables %s on %q in namespace %q", n.capability, p, namespaceOf(r))
		}
		return fmt.Sprintf("variables %s in namespace %q", n.capability, namespaceOf(r))
	}
	return n.String()
}

// allows answers whether the checked caller z has what n needs.
func allows(z *authz, n need, r *http.Request) bool {
	a := z.acl
	switch n.kind {
	case needNamespace:
		if ns := namespaceOf(r); ns != "*" {
			return n.allowedIn(a, ns)
		}
		return a.AllowNamespaceOpAny(n.capability) || (n.or != "" && a.AllowNamespaceOpAny(n.or))
	case needNodeRead, needNodeReadOrSelf:
		return a.AllowNodeRead()
	case needNodeWrite:
		return a.AllowNodeWrite()
	case needAgentRead, needAgentReadOrServer:
		return a.AllowAgentRead()
	case needAgentWrite:
		return a.AllowAgentWrite()
	case needOperatorRead:
		return a.AllowOperatorRead()
	case needOperatorWrite:
		return a.AllowOperatorWrite()
	case needManagement:
		return a.IsManagement()
	case needToken:
		return z.token != nil
	case needAnyCaller:
		return true
	case needEventTopics:
		return allowsEventTopics(a, r)
	case needVariables:
		return allowsVariables(a, n, r)
	case needNodePool:
		return allowsNodePool(a, n, r)
	case needServiceRead:
		if ns := namespaceOf(r); ns != "*" {
			return a.AllowServiceRead(ns)
		}
		return a.AllowServiceReadAny()
	}
	return false
}

// checkNamespace checks, for a handler, the route's namespace capability
// in the namespace of the object it reads or writes (an allocation found
// by ID, the job in a request body), which may not be the request's.
func checkNamespace(r *http.Request, ns string) error {
	z := authzOf(r)
	if !z.enabled || z.need.kind != needNamespace || z.need.allowedIn(z.acl, ns) {
		return nil
	}
	return Errorf(http.StatusForbidden, "%s: needs %s in namespace %q: %w", ErrPermissionDenied, z.need.caps(), ns, ErrPermissionDenied)
}

// checkJobVersion checks, for a handler, what a job version asks of its
// submitter beyond the route's capability: the capability in the job's
// own namespace (checkNamespace), and a mount of each group volume's host
// volume (acl.AllowHostVolumeMount: mount-readwrite, or for a read_only
// volume mount-readonly as well), as Nomad's Job.Register. Every request
// that makes a version from a job its caller sends or names goes through
// it: a registration, a plan (which answers for the registration it
// previews) and a revert. A scale (only a count changes) and a dispatch
// or a periodic launch (a child copies its parent's groups) are not
// checked, as Nomad's. A management token, and ACLs off, skip it.
func checkJobVersion(r *http.Request, job *structs.Job) error {
	if err := checkNamespace(r, jobNamespace(job)); err != nil {
		return err
	}
	z := authzOf(r)
	if !z.enabled || z.acl.IsManagement() {
		return nil
	}
	for _, tg := range job.TaskGroups {
		names := slices.Sorted(maps.Keys(tg.Volumes))
		for _, name := range names {
			vol := tg.Volumes[name]
			if vol == nil {
				continue
			}
			if vol.Type != structs.VolumeTypeHost {
				return Errorf(http.StatusForbidden, "%s: group %q volume %q: drover mounts only host volumes, not %q: %w",
					ErrPermissionDenied, tg.Name, name, vol.Type, ErrPermissionDenied)
			}
			if !z.acl.AllowHostVolumeMount(vol.Source, vol.ReadOnly) {
				want := acl.HostVolumeCapabilityMountReadWrite
				if vol.ReadOnly {
					want = acl.HostVolumeCapabilityMountReadOnly + " or " + want
				}
				return Errorf(http.StatusForbidden, "%s: group %q volume %q mounts host volume %q, which needs %s: %w",
					ErrPermissionDenied, tg.Name, name, vol.Source, want, ErrPermissionDenied)
			}
		}
	}
	return nil
}

// namespaceFilter returns, for a list across namespaces, whether an
// object of namespace ns may be shown; nil when everything may.
func namespaceFilter(r *http.Request) func(ns string) bool {
	z := authzOf(r)
	if !z.enabled || z.acl == nil || z.acl.IsManagement() {
		return nil
	}
	n := z.need
	a := z.acl
	if n.kind == needServiceRead {
		return a.AllowServiceRead
	}
	if n.kind != needNamespace {
		n = nsCap(acl.NamespaceCapabilityReadJob)
	}
	return func(ns string) bool { return n.allowedIn(a, ns) }
}

// signedByServer reports whether a request carries a server's signature
// with the cluster's join token (joinauth.ForwardHeader, over its method
// and URI, within the signature's window). Only a local route may be let
// in on it: followers sign what they forward too, and a forwarded request
// is checked for its caller's token.
func (s *Server) signedByServer(r *http.Request) bool {
	if r.Header.Get(ForwardedHeader) != "" {
		return false
	}
	ok, _ := s.forwardSigned(r) // over the body received, as every forward signature
	return ok
}

// nodeBySecret returns the registered node whose secret is secret; nil
// when none (errUnknownNodeSecret for an empty secret).
func (s *Server) nodeBySecret(secret string) (*structs.Node, error) {
	if secret == "" {
		return nil, Errorf(http.StatusForbidden, "%s: missing node secret (%s): %w", ErrPermissionDenied, TokenHeader, errUnknownNodeSecret)
	}
	return s.backend.State().Snapshot().NodeBySecretHash(structs.HashSecret(secret))
}

// ACLEnabled reports whether the API enforces ACLs.
func (s *Server) ACLEnabled() bool { return s.aclConfig.Enabled }

// ResolveToken returns what a token's secret grants on this server's
// copy of the state ("" is the anonymous token): an error wrapping
// ErrTokenNotFound or ErrTokenExpired for a secret that grants nothing.
// The agent checks the client endpoints (/v1/client/) with it.
func (s *Server) ResolveToken(secret string) (*acl.ACL, error) {
	a, _, err := s.resolve(secret)
	return a, err
}

// resolve returns the ACL and the token of a secret, nil for the
// anonymous token.
func (s *Server) resolve(secret string) (*acl.ACL, *structs.ACLToken, error) {
	snap := s.backend.State().Snapshot()
	if secret == "" {
		p, err := snap.ACLPolicyByName(structs.AnonymousPolicy)
		if err != nil {
			return nil, nil, err
		}
		if p == nil {
			return acl.DenyAll, nil, nil
		}
		return acl.New([]*acl.Policy{s.policies.get(p)}), nil, nil
	}
	if keyring.LooksLikeIdentity(secret) {
		a, err := s.resolveIdentity(snap, secret)
		return a, nil, err
	}
	tok, err := snap.ACLTokenBySecretHash(structs.HashSecret(secret))
	if err != nil {
		return nil, nil, err
	}
	if tok == nil {
		return nil, nil, Errorf(http.StatusForbidden, "%s: %w", ErrTokenNotFound, ErrTokenNotFound)
	}
	if tok.Expired(s.now()) {
		return nil, nil, Errorf(http.StatusForbidden, "%s: %w", ErrTokenExpired, ErrTokenExpired)
	}
	if tok.Management() {
		return acl.ManagementACL, tok, nil
	}
	// A token is granted its own policies and its roles' as they are
	// now: a change to a role takes effect on the next request.
	names, err := snap.TokenPolicyNames(tok)
	if err != nil {
		return nil, nil, err
	}
	var ps []*acl.Policy
	for _, name := range names {
		p, err := snap.ACLPolicyByName(name)
		if err != nil {
			return nil, nil, err
		}
		if p != nil {
			ps = append(ps, s.policies.get(p))
		}
	}
	return acl.New(ps), tok, nil
}

// policyCache keeps the parsed rules of stored policies, by name and
// ModifyIndex, so that a request does not parse them again: a changed
// policy has a new index, so the cache never answers with old rules.
type policyCache struct {
	mu sync.Mutex
	m  map[policyKey]*acl.Policy
}

type policyKey struct {
	name  string
	index uint64
}

// policyCacheSize bounds the cache; past it, it starts again empty.
const policyCacheSize = 1024

// get returns p's parsed rules. Stored rules were checked when written;
// rules that no longer parse (a policy restored from an older format)
// grant nothing.
func (c *policyCache) get(p *structs.ACLPolicy) *acl.Policy {
	k := policyKey{p.Name, p.ModifyIndex}
	c.mu.Lock()
	defer c.mu.Unlock()
	if got, ok := c.m[k]; ok {
		return got
	}
	parsed, err := acl.Parse(p.Name, fmt.Sprintf("policy %q", p.Name), p.Rules)
	if err != nil {
		parsed = &acl.Policy{Name: p.Name}
	}
	if c.m == nil || len(c.m) >= policyCacheSize {
		c.m = map[policyKey]*acl.Policy{}
	}
	c.m[k] = parsed
	return parsed
}
