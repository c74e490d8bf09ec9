package server

import (
	"slices"
	"sort"
	"time"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// ACL roles, auth methods and binding rules replicate as policies do, as
// Nomad's: every one of them (an auth method's TokenLocality says only
// where the tokens of its logins live), with its ID kept — a role's ID is
// what tokens link to, a binding rule's what its API names — and indexes
// ignored. An auth method travels without its sealed secrets: they stay
// in the authoritative region, whose keyring sealed them (drover uses
// them for nothing a login needs: it has no OIDC browser flow).

// ACLReplicationOf is what the authoritative region's snapshot replicates
// (the answer of `GET /v1/acl/replication`), and the highest index of the
// tables it reads. Every list is non-nil: an empty one deletes, nil (an
// older server) changes nothing.
func ACLReplicationOf(snap *state.Snapshot) (*structs.ACLReplication, uint64, error) {
	ps, err := snap.ACLPolicies()
	if err != nil {
		return nil, 0, err
	}
	ts, err := snap.ACLTokens()
	if err != nil {
		return nil, 0, err
	}
	out := &structs.ACLReplication{
		Policies: append([]*structs.ACLPolicy{}, ps...), Tokens: []*structs.ReplicatedACLToken{},
		Namespaces: []*structs.Namespace{}, NodePools: []*structs.NodePool{},
		Roles: []*structs.ACLRole{}, AuthMethods: []*structs.ACLAuthMethod{}, BindingRules: []*structs.ACLBindingRule{},
	}
	for _, t := range ts {
		if t.Global {
			out.Tokens = append(out.Tokens, &structs.ReplicatedACLToken{Token: t, SecretHash: t.SecretHash})
		}
	}
	nss, err := snap.Namespaces()
	if err != nil {
		return nil, 0, err
	}
	out.Namespaces = append(out.Namespaces, nss...)
	pools, err := snap.NodePools()
	if err != nil {
		return nil, 0, err
	}
	for _, p := range pools {
		if !structs.IsBuiltInNodePool(p.Name) {
			out.NodePools = append(out.NodePools, p)
		}
	}
	roles, err := snap.ACLRoles("")
	if err != nil {
		return nil, 0, err
	}
	out.Roles = append(out.Roles, roles...)
	methods, err := snap.ACLAuthMethods()
	if err != nil {
		return nil, 0, err
	}
	for _, m := range methods {
		c := m.Copy()
		c.Sealed = nil
		out.AuthMethods = append(out.AuthMethods, c)
	}
	rules, err := snap.ACLBindingRules("")
	if err != nil {
		return nil, 0, err
	}
	out.BindingRules = append(out.BindingRules, rules...)
	var idx uint64 = 1
	for _, table := range []string{state.TableACLPolicies, state.TableACLTokens, state.TableNamespaces, state.TableNodePools,
		state.TableACLRoles, state.TableACLAuthMethods, state.TableACLBindingRules} {
		i, err := snap.Index(table)
		if err != nil {
			return nil, 0, err
		}
		idx = max(idx, i)
	}
	return out, idx, nil
}

// DiffRoles compares a region's roles with the authoritative region's, by
// ID: those it lacks or holds otherwise are upserted, those the authority
// does not have deleted. A role this region holds under a name that
// another of the authority's roles now has (a rename, or two roles that
// swapped names) is deleted too, and upserted again under its new name
// with its ID: role names are unique, and the deletions are written
// before the upserts. A nil want (a source that sends no roles) changes
// nothing.
func DiffRoles(have, want []*structs.ACLRole) (upsert []*structs.ACLRole, del []string) {
	if want == nil {
		return nil, nil
	}
	local := map[string]*structs.ACLRole{}
	for _, r := range have {
		local[r.ID] = r
	}
	nameOwner := map[string]string{}
	wanted := map[string]bool{}
	for _, r := range want {
		if r == nil || r.ID == "" || r.Name == "" {
			continue
		}
		wanted[r.ID] = true
		nameOwner[r.Name] = r.ID
		c := r.Copy()
		c.CreateIndex, c.ModifyIndex = 0, 0
		if old := local[r.ID]; old == nil || !sameIgnoringIndexes(old, c, func(x *structs.ACLRole) { x.CreateIndex, x.ModifyIndex = 0, 0 }) {
			upsert = append(upsert, c)
		}
	}
	for _, r := range have {
		if owner, taken := nameOwner[r.Name]; !wanted[r.ID] || taken && owner != r.ID {
			del = append(del, r.ID)
		}
	}
	sort.Slice(upsert, func(i, j int) bool { return upsert[i].ID < upsert[j].ID })
	sort.Strings(del)
	return upsert, del
}

// replicatedRoleLinks returns the role links of a token as it replicates:
// those to roles this region holds once the round is written (the
// authority's roles, or this region's own when the source sends none).
// The others grant nothing where the token comes from either (a token
// keeps the link to a deleted role), and this region's state would refuse
// them.
func replicatedRoleLinks(links []*structs.ACLTokenRoleLink, roles map[string]bool) []*structs.ACLTokenRoleLink {
	var out []*structs.ACLTokenRoleLink
	for _, l := range links {
		if l != nil && l.ID != "" && roles[l.ID] {
			out = append(out, &structs.ACLTokenRoleLink{ID: l.ID, Name: l.Name})
		}
	}
	return out
}

// sameRoleLinks reports whether two tokens link the same roles (by ID:
// a link's name follows its role).
func sameRoleLinks(a, b []*structs.ACLTokenRoleLink) bool {
	ids := func(ls []*structs.ACLTokenRoleLink) []string {
		out := make([]string, 0, len(ls))
		for _, l := range ls {
			if l != nil {
				out = append(out, l.ID)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return slices.Equal(ids(a), ids(b))
}

// DiffAuthMethods compares a region's auth methods with the authoritative
// region's, by name, as DiffNamespaces; the creation time (the state
// keeps a method's first) and the sealed secrets (which stay in the
// authoritative region) are not compared.
// Upserts come with the methods that are not the default of their type
// first, so that a default that moved from one method to another is
// written in one pass.
func DiffAuthMethods(have, want []*structs.ACLAuthMethod) (upsert []*structs.ACLAuthMethod, del []string) {
	if want == nil {
		return nil, nil
	}
	blank := func(x *structs.ACLAuthMethod) {
		x.CreateIndex, x.ModifyIndex, x.Sealed, x.CreateTime, x.ModifyTime = 0, 0, nil, time.Time{}, x.ModifyTime.UTC()
	}
	local := map[string]*structs.ACLAuthMethod{}
	for _, m := range have {
		local[m.Name] = m
	}
	keep := map[string]bool{}
	for _, m := range want {
		if m == nil || m.Name == "" {
			continue
		}
		keep[m.Name] = true
		c := m.Copy()
		c.CreateIndex, c.ModifyIndex, c.Sealed = 0, 0, nil
		if old := local[m.Name]; old == nil || !sameIgnoringIndexes(old, c, blank) {
			upsert = append(upsert, c)
		}
	}
	for _, m := range have {
		if !keep[m.Name] {
			del = append(del, m.Name)
		}
	}
	sort.Slice(upsert, func(i, j int) bool {
		if upsert[i].Default != upsert[j].Default {
			return !upsert[i].Default
		}
		return upsert[i].Name < upsert[j].Name
	})
	sort.Strings(del)
	return upsert, del
}

// DiffBindingRules compares a region's binding rules with the
// authoritative region's, by ID, as DiffNamespaces; the creation time is
// not compared. Deletions are written before the auth methods', which
// would delete a method's rules with it.
func DiffBindingRules(have, want []*structs.ACLBindingRule) (upsert []*structs.ACLBindingRule, del []string) {
	if want == nil {
		return nil, nil
	}
	blank := func(x *structs.ACLBindingRule) {
		x.CreateIndex, x.ModifyIndex, x.CreateTime, x.ModifyTime = 0, 0, time.Time{}, x.ModifyTime.UTC()
	}
	local := map[string]*structs.ACLBindingRule{}
	for _, r := range have {
		local[r.ID] = r
	}
	keep := map[string]bool{}
	for _, r := range want {
		if r == nil || r.ID == "" {
			continue
		}
		keep[r.ID] = true
		c := *r
		c.CreateIndex, c.ModifyIndex = 0, 0
		if old := local[r.ID]; old == nil || !sameIgnoringIndexes(old, &c, blank) {
			upsert = append(upsert, &c)
		}
	}
	for _, r := range have {
		if !keep[r.ID] {
			del = append(del, r.ID)
		}
	}
	sort.Slice(upsert, func(i, j int) bool { return upsert[i].ID < upsert[j].ID })
	sort.Strings(del)
	return upsert, del
}
