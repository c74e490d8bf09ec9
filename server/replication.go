package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// ACL replication, as Nomad's: the leader of every region that is not the
// authoritative one (server.authoritative_region) mirrors the
// authoritative region's ACL policies, roles, auth methods, binding rules,
// global tokens, namespaces and node pools. It reads them
// with a blocking query on a server of that region (ACLSource, with the
// replication token), computes what differs from its own state (DiffACL,
// a pure function) and writes that through its own Raft, with the same
// entries as a local write. The index it waits on is kept in memory: a new
// leader starts from 0, reads everything once and writes only what
// differs, so nothing is lost or written twice across a leader change.

// ACLSource reads what the authoritative region replicates, blocking until
// its index passes minIndex (or a wait of the source's choosing ends).
type ACLSource interface {
	ACLReplication(ctx context.Context, minIndex uint64) (*structs.ACLReplication, uint64, error)
}

// ACLReplicator is the leader service that mirrors the authoritative
// region's ACL objects, namespaces and node pools.
type ACLReplicator struct {
	Source ACLSource
	Raft   Raft
	State  func() *state.Store
	Logger hclog.Logger
	// RetryMin and RetryMax bound the wait after a failed round
	// (defaults 500 ms and 10 s).
	RetryMin, RetryMax time.Duration
	// Applied, when set (tests), is called after each round that wrote
	// something.
	Applied func(ACLDiff)
	// Region is this region's name, which a refused deletion of a node
	// pool in use names.
	Region string
}

// ACLDiff is what makes a region's ACL policies and global tokens those of
// the authoritative region.
type ACLDiff struct {
	UpsertPolicies []*structs.ACLPolicy
	DeletePolicies []string
	UpsertTokens   []*structs.ACLToken
	DeleteTokens   []string
	// Namespaces and node pools (DiffNamespaces, DiffNodePools): a
	// deletion of one this region still uses is refused by the state and
	// retried at the next change.
	UpsertNamespaces []*structs.Namespace
	DeleteNamespaces []string
	UpsertNodePools  []*structs.NodePool
	DeleteNodePools  []string
	// Roles (by ID), auth methods (by name) and binding rules (by ID):
	// DiffACL, DiffAuthMethods, DiffBindingRules.
	UpsertRoles        []*structs.ACLRole
	DeleteRoles        []string
	UpsertAuthMethods  []*structs.ACLAuthMethod
	DeleteAuthMethods  []string
	UpsertBindingRules []*structs.ACLBindingRule
	DeleteBindingRules []string
}

// Empty reports whether there is nothing to write.
func (d ACLDiff) Empty() bool {
	return len(d.UpsertPolicies)+len(d.DeletePolicies)+len(d.UpsertTokens)+len(d.DeleteTokens)+
		len(d.UpsertNamespaces)+len(d.DeleteNamespaces)+len(d.UpsertNodePools)+len(d.DeleteNodePools)+
		len(d.UpsertRoles)+len(d.DeleteRoles)+len(d.UpsertAuthMethods)+len(d.DeleteAuthMethods)+
		len(d.UpsertBindingRules)+len(d.DeleteBindingRules) == 0
}

// String summarises d for logs and tests.
func (d ACLDiff) String() string {
	names := func(ps []*structs.ACLPolicy) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = p.Name
		}
		return out
	}
	ids := func(ts []*structs.ACLToken) []string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = t.AccessorID
		}
		return out
	}
	out := fmt.Sprintf("policies +%v -%v tokens +%v -%v", names(d.UpsertPolicies), d.DeletePolicies, ids(d.UpsertTokens), d.DeleteTokens)
	if len(d.UpsertNamespaces)+len(d.DeleteNamespaces) > 0 {
		ns := make([]string, len(d.UpsertNamespaces))
		for i, n := range d.UpsertNamespaces {
			ns[i] = n.Name
		}
		out += fmt.Sprintf(" namespaces +%v -%v", ns, d.DeleteNamespaces)
	}
	if len(d.UpsertNodePools)+len(d.DeleteNodePools) > 0 {
		ps := make([]string, len(d.UpsertNodePools))
		for i, p := range d.UpsertNodePools {
			ps[i] = p.Name
		}
		out += fmt.Sprintf(" node pools +%v -%v", ps, d.DeleteNodePools)
	}
	if len(d.UpsertRoles)+len(d.DeleteRoles) > 0 {
		rs := make([]string, len(d.UpsertRoles))
		for i, r := range d.UpsertRoles {
			rs[i] = r.ID
		}
		out += fmt.Sprintf(" roles +%v -%v", rs, d.DeleteRoles)
	}
	if len(d.UpsertAuthMethods)+len(d.DeleteAuthMethods) > 0 {
		ms := make([]string, len(d.UpsertAuthMethods))
		for i, m := range d.UpsertAuthMethods {
			ms[i] = m.Name
		}
		out += fmt.Sprintf(" auth methods +%v -%v", ms, d.DeleteAuthMethods)
	}
	if len(d.UpsertBindingRules)+len(d.DeleteBindingRules) > 0 {
		bs := make([]string, len(d.UpsertBindingRules))
		for i, b := range d.UpsertBindingRules {
			bs[i] = b.ID
		}
		out += fmt.Sprintf(" binding rules +%v -%v", bs, d.DeleteBindingRules)
	}
	return out
}

// DiffNamespaces compares a region's namespaces with the authoritative
// region's: those it lacks or holds otherwise are upserted, those the
// authority does not have deleted ("default" never). A nil want (a source
// that sends no namespaces) changes nothing.
func DiffNamespaces(have, want []*structs.Namespace) (upsert []*structs.Namespace, del []string) {
	if want == nil {
		return nil, nil
	}
	local := map[string]*structs.Namespace{}
	for _, n := range have {
		local[n.Name] = n
	}
	keep := map[string]bool{structs.DefaultNamespace: true}
	for _, n := range want {
		if n == nil || n.Name == "" {
			continue
		}
		keep[n.Name] = true
		c := *n
		c.CreateIndex, c.ModifyIndex = 0, 0
		if old := local[n.Name]; old == nil || !sameIgnoringIndexes(old, &c, func(x *structs.Namespace) { x.CreateIndex, x.ModifyIndex = 0, 0 }) {
			upsert = append(upsert, &c)
		}
	}
	for _, n := range have {
		if !keep[n.Name] {
			del = append(del, n.Name)
		}
	}
	sort.Slice(upsert, func(i, j int) bool { return upsert[i].Name < upsert[j].Name })
	sort.Strings(del)
	return upsert, del
}

// DiffNodePools is DiffNamespaces for node pools; the built-in pools are
// never written.
func DiffNodePools(have, want []*structs.NodePool) (upsert []*structs.NodePool, del []string) {
	if want == nil {
		return nil, nil
	}
	local := map[string]*structs.NodePool{}
	for _, p := range have {
		local[p.Name] = p
	}
	keep := map[string]bool{}
	for _, p := range want {
		if p == nil || p.Name == "" || structs.IsBuiltInNodePool(p.Name) {
			continue
		}
		keep[p.Name] = true
		c := *p
		c.CreateIndex, c.ModifyIndex = 0, 0
		if old := local[p.Name]; old == nil || !sameIgnoringIndexes(old, &c, func(x *structs.NodePool) { x.CreateIndex, x.ModifyIndex = 0, 0 }) {
			upsert = append(upsert, &c)
		}
	}
	for _, p := range have {
		if !keep[p.Name] && !structs.IsBuiltInNodePool(p.Name) {
			del = append(del, p.Name)
		}
	}
	sort.Slice(upsert, func(i, j int) bool { return upsert[i].Name < upsert[j].Name })
	sort.Strings(del)
	return upsert, del
}

// sameIgnoringIndexes reports whether a and b encode alike once clear has
// blanked what each region numbers itself (a copy of a is cleared).
func sameIgnoringIndexes[T any](a, b *T, clear func(*T)) bool {
	ca, cb := *a, *b
	clear(&ca)
	clear(&cb)
	ja, errA := json.Marshal(&ca)
	jb, errB := json.Marshal(&cb)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// DiffACL compares a region's policies, roles and tokens with the
// authoritative region's: every policy the authority has and this region
// lacks or holds otherwise is upserted, every other policy deleted; roles
// as DiffRoles; every global token likewise, while tokens that are not
// global (this region's own) are left alone. A token's links to roles
// replicate with it, but those to a role this region will not hold (one
// the authority deleted: the token keeps the link there, granting
// nothing). Indexes are not compared: each region numbers its own log.
func DiffACL(policies []*structs.ACLPolicy, roles []*structs.ACLRole, tokens []*structs.ACLToken, auth *structs.ACLReplication) ACLDiff {
	var d ACLDiff
	if auth == nil {
		return d
	}
	d.UpsertRoles, d.DeleteRoles = DiffRoles(roles, auth.Roles)
	roleIDs := map[string]bool{}
	if auth.Roles != nil {
		for _, r := range auth.Roles {
			if r != nil && r.ID != "" && r.Name != "" {
				roleIDs[r.ID] = true
			}
		}
	} else {
		for _, r := range roles {
			roleIDs[r.ID] = true
		}
	}
	local := map[string]*structs.ACLPolicy{}
	for _, p := range policies {
		local[p.Name] = p
	}
	want := map[string]bool{}
	for _, p := range auth.Policies {
		if p == nil || p.Name == "" {
			continue
		}
		want[p.Name] = true
		if old := local[p.Name]; old == nil || !samePolicy(old, p) {
			c := *p
			c.CreateIndex, c.ModifyIndex = 0, 0
			d.UpsertPolicies = append(d.UpsertPolicies, &c)
		}
	}
	for _, p := range policies {
		if !want[p.Name] {
			d.DeletePolicies = append(d.DeletePolicies, p.Name)
		}
	}
	localTokens := map[string]*structs.ACLToken{}
	for _, t := range tokens {
		localTokens[t.AccessorID] = t
	}
	wantTokens := map[string]bool{}
	for _, rt := range auth.Tokens {
		if rt == nil || rt.Token == nil || rt.Token.AccessorID == "" || rt.SecretHash == "" || !rt.Token.Global {
			continue
		}
		t := rt.Token.Copy()
		t.SecretHash, t.SecretID, t.CreateIndex, t.ModifyIndex, t.Sealed = rt.SecretHash, "", 0, 0, nil
		t.Roles = replicatedRoleLinks(t.Roles, roleIDs)
		wantTokens[t.AccessorID] = true
		if old := localTokens[t.AccessorID]; old == nil || !sameToken(old, t) {
			d.UpsertTokens = append(d.UpsertTokens, t)
		}
	}
	for _, t := range tokens {
		if t.Global && !wantTokens[t.AccessorID] {
			d.DeleteTokens = append(d.DeleteTokens, t.AccessorID)
		}
	}
	sort.Slice(d.UpsertPolicies, func(i, j int) bool { return d.UpsertPolicies[i].Name < d.UpsertPolicies[j].Name })
	sort.Slice(d.UpsertTokens, func(i, j int) bool { return d.UpsertTokens[i].AccessorID < d.UpsertTokens[j].AccessorID })
	sort.Strings(d.DeletePolicies)
	sort.Strings(d.DeleteTokens)
	return d
}

func samePolicy(a, b *structs.ACLPolicy) bool {
	if a.Name != b.Name || a.Description != b.Description || a.Rules != b.Rules {
		return false
	}
	switch {
	case a.JobACL == nil || b.JobACL == nil:
		return a.JobACL == nil && b.JobACL == nil
	default:
		return *a.JobACL == *b.JobACL
	}
}

func sameToken(a, b *structs.ACLToken) bool {
	timeEq := func(x, y *time.Time) bool { return x == nil && y == nil || x != nil && y != nil && x.Equal(*y) }
	return a.Name == b.Name && a.Type == b.Type && a.Global == b.Global && a.SecretHash == b.SecretHash &&
		slices.Equal(a.Policies, b.Policies) && timeEq(a.ExpirationTime, b.ExpirationTime) && sameRoleLinks(a.Roles, b.Roles)
}

// Run replicates until ctx ends (a leader service: it runs while this
// server leads).
func (r *ACLReplicator) Run(ctx context.Context) {
	logger := r.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	retryMin, retryMax := r.RetryMin, r.RetryMax
	if retryMin <= 0 {
		retryMin = 500 * time.Millisecond
	}
	if retryMax <= 0 {
		retryMax = 10 * time.Second
	}
	var index uint64
	wait := retryMin
	lastErr := ""
	for ctx.Err() == nil {
		idx, err := r.round(ctx, index)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if err.Error() != lastErr {
				logger.Warn("ACL replication from the authoritative region failed; retrying", "error", err)
				lastErr = err.Error()
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, retryMax)
			continue
		}
		if lastErr != "" {
			logger.Info("ACL replication from the authoritative region resumed")
		}
		index, wait, lastErr = idx, retryMin, ""
	}
}

// round reads the authority once past index, writes the difference and
// returns the authority's index.
func (r *ACLReplicator) round(ctx context.Context, index uint64) (uint64, error) {
	auth, idx, err := r.Source.ACLReplication(ctx, index)
	if err != nil {
		return 0, err
	}
	snap := r.State().Snapshot()
	policies, err := snap.ACLPolicies()
	if err != nil {
		return 0, err
	}
	tokens, err := snap.ACLTokens()
	if err != nil {
		return 0, err
	}
	roles, err := snap.ACLRoles("")
	if err != nil {
		return 0, err
	}
	d := DiffACL(policies, roles, tokens, auth)
	namespaces, err := snap.Namespaces()
	if err != nil {
		return 0, err
	}
	pools, err := snap.NodePools()
	if err != nil {
		return 0, err
	}
	d.UpsertNamespaces, d.DeleteNamespaces = DiffNamespaces(namespaces, auth.Namespaces)
	d.UpsertNodePools, d.DeleteNodePools = DiffNodePools(pools, auth.NodePools)
	methods, err := snap.ACLAuthMethods()
	if err != nil {
		return 0, err
	}
	rules, err := snap.ACLBindingRules("")
	if err != nil {
		return 0, err
	}
	d.UpsertAuthMethods, d.DeleteAuthMethods = DiffAuthMethods(methods, auth.AuthMethods)
	d.UpsertBindingRules, d.DeleteBindingRules = DiffBindingRules(rules, auth.BindingRules)
	if d.Empty() {
		return idx, nil
	}
	if err := r.apply(ctx, d); err != nil {
		return 0, fmt.Errorf("writing %s: %w", d, err)
	}
	if r.Applied != nil {
		r.Applied(d)
	}
	return idx, nil
}

// apply writes d through Raft: upserts first, so that a token never names
// a policy missing for longer than the write; roles before tokens (this
// region's state refuses a link to a role it does not hold), the roles'
// deletions before their upserts (names are unique: see DiffRoles);
// binding rules deleted before auth methods, auth methods upserted before
// binding rules (a rule names its method).
func (r *ACLReplicator) apply(ctx context.Context, d ACLDiff) error {
	var errs []error
	write := func(t fsm.MessageType, req any) {
		if _, _, err := r.Raft.Apply(ctx, t, req); err != nil {
			errs = append(errs, err)
		}
	}
	if len(d.UpsertPolicies) > 0 {
		write(fsm.ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: d.UpsertPolicies})
	}
	if len(d.DeleteRoles) > 0 {
		write(fsm.ACLRoleDeleteRequestType, &structs.ACLRoleDeleteRequest{IDs: d.DeleteRoles})
	}
	if len(d.UpsertRoles) > 0 {
		write(fsm.ACLRoleUpsertRequestType, &structs.ACLRoleUpsertRequest{Roles: d.UpsertRoles})
	}
	if len(d.UpsertTokens) > 0 {
		write(fsm.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: d.UpsertTokens})
	}
	if len(d.DeleteTokens) > 0 {
		write(fsm.ACLTokenDeleteRequestType, &structs.ACLTokenDeleteRequest{AccessorIDs: d.DeleteTokens})
	}
	if len(d.DeletePolicies) > 0 {
		write(fsm.ACLPolicyDeleteRequestType, &structs.ACLPolicyDeleteRequest{Names: d.DeletePolicies})
	}
	if len(d.DeleteBindingRules) > 0 {
		write(fsm.ACLBindingRuleDeleteRequestType, &structs.ACLBindingRuleDeleteRequest{IDs: d.DeleteBindingRules})
	}
	if len(d.DeleteAuthMethods) > 0 {
		write(fsm.ACLAuthMethodDeleteRequestType, &structs.ACLAuthMethodDeleteRequest{Names: d.DeleteAuthMethods})
	}
	if len(d.UpsertAuthMethods) > 0 {
		write(fsm.ACLAuthMethodUpsertRequestType, &structs.ACLAuthMethodUpsertRequest{Methods: d.UpsertAuthMethods})
	}
	if len(d.UpsertBindingRules) > 0 {
		write(fsm.ACLBindingRuleUpsertRequestType, &structs.ACLBindingRuleUpsertRequest{Rules: d.UpsertBindingRules})
	}
	// Node pools before namespaces (a namespace may name a pool), each
	// deletion alone: one still in use here must not keep the others.
	if len(d.UpsertNodePools) > 0 {
		write(fsm.NodePoolUpsertRequestType, &structs.NodePoolUpsertRequest{NodePools: d.UpsertNodePools})
	}
	if len(d.UpsertNamespaces) > 0 {
		write(fsm.NamespaceUpsertRequestType, &structs.NamespaceUpsertRequest{Namespaces: d.UpsertNamespaces})
	}
	for _, n := range d.DeleteNamespaces {
		write(fsm.NamespaceDeleteRequestType, &structs.NamespaceDeleteRequest{Namespaces: []string{n}})
	}
	for _, p := range d.DeleteNodePools {
		write(fsm.NodePoolDeleteRequestType, &structs.NodePoolDeleteRequest{Names: []string{p}, Region: r.Region})
	}
	return errors.Join(errs...)
}
