package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/droverhq/drover/structs"
)

// The ACL roles, auth methods, binding rules and one-time tokens, Nomad's
// objects (website/api/acl.md). Each write is one transaction at the
// entry's index; the leader stamps IDs and times into the request.

// UpsertACLRolesTxn creates or replaces roles inside t, by ID; a
// replacement keeps its CreateIndex. Role names are unique (ErrConflict).
// A role links its policies by name and may name one that does not exist.
func (s *Store) UpsertACLRolesTxn(t *WriteTxn, roles []*structs.ACLRole) error {
	for _, r := range roles {
		if r == nil || r.ID == "" || r.Name == "" {
			return fmt.Errorf("state: ACL role without an ID or a name: %w", ErrInvalid)
		}
		byName, err := t.reader().ACLRoleByName(r.Name)
		if err != nil {
			return err
		}
		if byName != nil && byName.ID != r.ID {
			return fmt.Errorf("ACL role with name %q already exists: %w", r.Name, ErrConflict)
		}
		old, err := t.reader().ACLRoleByID(r.ID)
		if err != nil {
			return err
		}
		c := r.Copy()
		c.CreateIndex, c.ModifyIndex = t.index, t.index
		if old != nil {
			c.CreateIndex = old.CreateIndex
		}
		if err := t.insert(TableACLRoles, c); err != nil {
			return err
		}
	}
	return nil
}

// DeleteACLRolesTxn deletes roles by ID inside t; an unknown one is
// ErrNotFound and nothing is deleted. Tokens that link a deleted role
// keep the link, which grants nothing and is left out of their answers
// (FixTokenRoleLinks), as Nomad's.
func (s *Store) DeleteACLRolesTxn(t *WriteTxn, ids []string) error {
	for _, id := range ids {
		r, err := t.reader().ACLRoleByID(id)
		if err != nil {
			return err
		}
		if r == nil {
			return fmt.Errorf("ACL role %q: %w", id, ErrNotFound)
		}
		if err := t.delete(TableACLRoles, r); err != nil {
			return err
		}
	}
	return nil
}

// ACLRoleByID returns the role, or nil.
func (s *Snapshot) ACLRoleByID(id string) (*structs.ACLRole, error) {
	return getOne[*structs.ACLRole](s, TableACLRoles, "id", id)
}

// ACLRoleByName returns the role, or nil.
func (s *Snapshot) ACLRoleByName(name string) (*structs.ACLRole, error) {
	return getOne[*structs.ACLRole](s, TableACLRoles, "name", name)
}

// ACLRoles returns every role whose ID starts with prefix, by ID.
func (s *Snapshot) ACLRoles(prefix string) ([]*structs.ACLRole, error) {
	return list[*structs.ACLRole](s, TableACLRoles, "id_prefix", prefix)
}

// resolveRoleLinks fills in the ID and Name of each of a token's role
// links from the role it names (by ID, else by name): ErrNotFound for a
// role that does not exist. Duplicate links are dropped.
func (s *Snapshot) resolveRoleLinks(links []*structs.ACLTokenRoleLink) ([]*structs.ACLTokenRoleLink, error) {
	var out []*structs.ACLTokenRoleLink
	for _, l := range links {
		if l == nil {
			continue
		}
		var r *structs.ACLRole
		var err error
		switch {
		case l.ID != "":
			r, err = s.ACLRoleByID(l.ID)
		case l.Name != "":
			r, err = s.ACLRoleByName(l.Name)
		default:
			return nil, fmt.Errorf("state: role link without an ID or a name: %w", ErrInvalid)
		}
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, fmt.Errorf("cannot find role %s%s: %w", l.ID, l.Name, ErrNotFound)
		}
		if !slices.ContainsFunc(out, func(o *structs.ACLTokenRoleLink) bool { return o.ID == r.ID }) {
			out = append(out, &structs.ACLTokenRoleLink{ID: r.ID, Name: r.Name})
		}
	}
	return out, nil
}

// FixTokenRoleLinks returns tok with its role links as they stand: the
// links to deleted roles dropped, the names of renamed ones updated (tok
// itself when nothing changes), as Nomad's.
func (s *Snapshot) FixTokenRoleLinks(tok *structs.ACLToken) (*structs.ACLToken, error) {
	if tok == nil || len(tok.Roles) == 0 {
		return tok, nil
	}
	var links []*structs.ACLTokenRoleLink
	changed := false
	for _, l := range tok.Roles {
		r, err := s.ACLRoleByID(l.ID)
		if err != nil {
			return nil, err
		}
		if r == nil {
			changed = true
			continue
		}
		if r.Name != l.Name {
			changed = true
		}
		links = append(links, &structs.ACLTokenRoleLink{ID: r.ID, Name: r.Name})
	}
	if !changed {
		return tok, nil
	}
	c := tok.Copy()
	c.Roles = links
	return c, nil
}

// TokenPolicyNames returns the names of the policies a token is granted:
// its own and those of the roles it links, as they are now, without
// duplicates.
func (s *Snapshot) TokenPolicyNames(tok *structs.ACLToken) ([]string, error) {
	names := slices.Clone(tok.Policies)
	for _, l := range tok.Roles {
		if l == nil {
			continue
		}
		r, err := s.ACLRoleByID(l.ID)
		if err != nil {
			return nil, err
		}
		if r != nil {
			names = append(names, r.PolicyNames()...)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// UpsertACLAuthMethodsTxn creates or replaces auth methods inside t, by
// name; a replacement keeps its CreateIndex and CreateTime. At most one
// method of each type is the default (ErrConflict), as Nomad's.
func (s *Store) UpsertACLAuthMethodsTxn(t *WriteTxn, methods []*structs.ACLAuthMethod) error {
	for _, m := range methods {
		if m == nil || m.Name == "" {
			return fmt.Errorf("state: ACL auth method without a name: %w", ErrInvalid)
		}
		if m.Default {
			all, err := t.reader().ACLAuthMethods()
			if err != nil {
				return err
			}
			for _, o := range all {
				if o.Default && o.Type == m.Type && o.Name != m.Name {
					return fmt.Errorf("default method for type %s already exists: %s: %w", m.Type, o.Name, ErrConflict)
				}
			}
		}
		old, err := t.reader().ACLAuthMethodByName(m.Name)
		if err != nil {
			return err
		}
		c := m.Copy()
		c.CreateIndex, c.ModifyIndex = t.index, t.index
		if old != nil {
			c.CreateIndex, c.CreateTime = old.CreateIndex, old.CreateTime
		}
		if err := t.insert(TableACLAuthMethods, c); err != nil {
			return err
		}
	}
	return nil
}

// DeleteACLAuthMethodsTxn deletes auth methods by name inside t, with
// their binding rules; an unknown one is ErrNotFound and nothing is
// deleted.
func (s *Store) DeleteACLAuthMethodsTxn(t *WriteTxn, names []string) error {
	for _, n := range names {
		m, err := t.reader().ACLAuthMethodByName(n)
		if err != nil {
			return err
		}
		if m == nil {
			return fmt.Errorf("ACL auth-method %q: %w", n, ErrNotFound)
		}
		rules, err := t.reader().ACLBindingRulesByAuthMethod(n)
		if err != nil {
			return err
		}
		for _, r := range rules {
			if err := t.delete(TableACLBindingRules, r); err != nil {
				return err
			}
		}
		if err := t.delete(TableACLAuthMethods, m); err != nil {
			return err
		}
	}
	return nil
}

// ACLAuthMethodByName returns the auth method, or nil.
func (s *Snapshot) ACLAuthMethodByName(name string) (*structs.ACLAuthMethod, error) {
	return getOne[*structs.ACLAuthMethod](s, TableACLAuthMethods, "id", name)
}

// ACLAuthMethods returns every auth method, by name.
func (s *Snapshot) ACLAuthMethods() ([]*structs.ACLAuthMethod, error) {
	return list[*structs.ACLAuthMethod](s, TableACLAuthMethods, "id")
}

// UpsertACLBindingRulesTxn creates or replaces binding rules inside t, by
// ID; a replacement keeps its CreateIndex and CreateTime. The auth method
// a rule names must exist (ErrNotFound).
func (s *Store) UpsertACLBindingRulesTxn(t *WriteTxn, rules []*structs.ACLBindingRule) error {
	for _, r := range rules {
		if r == nil || r.ID == "" {
			return fmt.Errorf("state: ACL binding rule without an ID: %w", ErrInvalid)
		}
		m, err := t.reader().ACLAuthMethodByName(r.AuthMethod)
		if err != nil {
			return err
		}
		if m == nil {
			return fmt.Errorf("ACL auth-method %q: %w", r.AuthMethod, ErrNotFound)
		}
		old, err := t.reader().ACLBindingRuleByID(r.ID)
		if err != nil {
			return err
		}
		c := *r
		c.CreateIndex, c.ModifyIndex = t.index, t.index
		if old != nil {
			c.CreateIndex, c.CreateTime = old.CreateIndex, old.CreateTime
		}
		if err := t.insert(TableACLBindingRules, &c); err != nil {
			return err
		}
	}
	return nil
}

// DeleteACLBindingRulesTxn deletes binding rules by ID inside t; an
// unknown one is ErrNotFound and nothing is deleted.
func (s *Store) DeleteACLBindingRulesTxn(t *WriteTxn, ids []string) error {
	for _, id := range ids {
		r, err := t.reader().ACLBindingRuleByID(id)
		if err != nil {
			return err
		}
		if r == nil {
			return fmt.Errorf("ACL binding rule %q: %w", id, ErrNotFound)
		}
		if err := t.delete(TableACLBindingRules, r); err != nil {
			return err
		}
	}
	return nil
}

// ACLBindingRuleByID returns the binding rule, or nil.
func (s *Snapshot) ACLBindingRuleByID(id string) (*structs.ACLBindingRule, error) {
	return getOne[*structs.ACLBindingRule](s, TableACLBindingRules, "id", id)
}

// ACLBindingRules returns every binding rule whose ID starts with prefix,
// by ID.
func (s *Snapshot) ACLBindingRules(prefix string) ([]*structs.ACLBindingRule, error) {
	return list[*structs.ACLBindingRule](s, TableACLBindingRules, "id_prefix", prefix)
}

// ACLBindingRulesByAuthMethod returns the binding rules of an auth method.
func (s *Snapshot) ACLBindingRulesByAuthMethod(method string) ([]*structs.ACLBindingRule, error) {
	return list[*structs.ACLBindingRule](s, TableACLBindingRules, "auth_method", method)
}

// UpsertOneTimeTokenTxn writes a one-time token inside t, and deletes the
// one-time tokens that expired before req.Now.
func (s *Store) UpsertOneTimeTokenTxn(t *WriteTxn, req *structs.OneTimeTokenUpsertRequest) error {
	ott := req.Token
	switch {
	case ott == nil || ott.SecretHash == "" || ott.AccessorID == "":
		return fmt.Errorf("state: one-time token without a secret hash or an accessor: %w", ErrInvalid)
	case ott.OneTimeSecretID != "":
		return fmt.Errorf("state: one-time token carries its secret; only its hash is stored: %w", ErrInvalid)
	}
	all, err := list[*structs.OneTimeToken](t.reader(), TableACLOneTimeTokens, "id")
	if err != nil {
		return err
	}
	for _, o := range all {
		if o.ExpiresAt.Before(req.Now) {
			if err := t.delete(TableACLOneTimeTokens, o); err != nil {
				return err
			}
		}
	}
	c := *ott
	c.CreateIndex, c.ModifyIndex = t.index, t.index
	return t.insert(TableACLOneTimeTokens, &c)
}

// DeleteOneTimeTokenTxn deletes the one-time token of a secret hash inside
// t (its exchange uses it up): ErrNotFound when there is none, so that two
// exchanges of one secret cannot both succeed.
func (s *Store) DeleteOneTimeTokenTxn(t *WriteTxn, hash string) error {
	o, err := t.reader().OneTimeTokenBySecretHash(hash)
	if err != nil {
		return err
	}
	if o == nil {
		return fmt.Errorf("one-time token: %w", ErrNotFound)
	}
	return t.delete(TableACLOneTimeTokens, o)
}

// OneTimeTokenBySecretHash returns the one-time token whose secret hashes
// to hash, or nil.
func (s *Snapshot) OneTimeTokenBySecretHash(hash string) (*structs.OneTimeToken, error) {
	if hash == "" {
		return nil, nil
	}
	return getOne[*structs.OneTimeToken](s, TableACLOneTimeTokens, "id", hash)
}

// oneTimeTokenExpired reports whether o can no longer be exchanged at now.
func oneTimeTokenExpired(o *structs.OneTimeToken, now time.Time) bool {
	return !now.Before(o.ExpiresAt)
}

// UsableOneTimeToken returns the one-time token of a secret hash if it
// can still be exchanged at now, else nil.
func (s *Snapshot) UsableOneTimeToken(hash string, now time.Time) (*structs.OneTimeToken, error) {
	o, err := s.OneTimeTokenBySecretHash(hash)
	if err != nil || o == nil || oneTimeTokenExpired(o, now) {
		return nil, err
	}
	return o, nil
}
