package state

import (
	"errors"
	"fmt"

	"github.com/droverhq/drover/structs"
)

// ACLMetaRecord is the single row of the acl_meta table: the index of the
// entry that bootstrapped the ACL system (0: never bootstrapped).
type ACLMetaRecord struct {
	Key            string // always aclMetaKey
	BootstrapIndex uint64
}

const aclMetaKey = "acl"

// ErrACLBootstrapped: the ACL system was bootstrapped already. The
// error that wraps it names the reset index, as Nomad's message.
var ErrACLBootstrapped = errors.New("ACL bootstrap already done")

// ACLBootstrapIndex returns the index of the ACL bootstrap, 0 if none.
func (s *Snapshot) ACLBootstrapIndex() (uint64, error) {
	r, err := getOne[*ACLMetaRecord](s, TableACLMeta, "id", aclMetaKey)
	if err != nil || r == nil {
		return 0, err
	}
	return r.BootstrapIndex, nil
}

// BootstrapACLTxn writes the bootstrap management token inside t, once:
// when the ACL system was bootstrapped already it refuses (an error
// wrapping ErrACLBootstrapped and naming the reset index) unless
// req.ResetIndex is that bootstrap's index.
func (s *Store) BootstrapACLTxn(t *WriteTxn, req *structs.ACLTokenBootstrapRequest) error {
	if req.Token == nil || !req.Token.Management() {
		return fmt.Errorf("state: bootstrap without a management token: %w", ErrInvalid)
	}
	done, err := t.reader().ACLBootstrapIndex()
	if err != nil {
		return err
	}
	if done != 0 && req.ResetIndex != done {
		return fmt.Errorf("%w (reset index: %d)", ErrACLBootstrapped, done)
	}
	if err := s.UpsertACLTokensTxn(t, []*structs.ACLToken{req.Token}); err != nil {
		return err
	}
	return t.insert(TableACLMeta, &ACLMetaRecord{Key: aclMetaKey, BootstrapIndex: t.index})
}

// UpsertACLPoliciesTxn creates or replaces policies inside t; a
// replacement keeps its CreateIndex.
func (s *Store) UpsertACLPoliciesTxn(t *WriteTxn, policies []*structs.ACLPolicy) error {
	for _, p := range policies {
		if p == nil || p.Name == "" {
			return fmt.Errorf("state: policy without a name: %w", ErrInvalid)
		}
		old, err := t.reader().ACLPolicyByName(p.Name)
		if err != nil {
			return err
		}
		c := *p
		c.CreateIndex, c.ModifyIndex = t.index, t.index
		if old != nil {
			c.CreateIndex = old.CreateIndex
		}
		if err := t.insert(TableACLPolicies, &c); err != nil {
			return err
		}
	}
	return nil
}

// DeleteACLPoliciesTxn deletes policies by name inside t; an unknown name
// is ErrNotFound and nothing is deleted. Tokens that name a deleted
// policy keep the name, which grants nothing until a policy of that name
// exists again (as Nomad's).
func (s *Store) DeleteACLPoliciesTxn(t *WriteTxn, names []string) error {
	for _, n := range names {
		p, err := t.reader().ACLPolicyByName(n)
		if err != nil {
			return err
		}
		if p == nil {
			return fmt.Errorf("ACL policy %q: %w", n, ErrNotFound)
		}
		if err := t.delete(TableACLPolicies, p); err != nil {
			return err
		}
	}
	return nil
}

// UpsertACLTokensTxn creates or replaces tokens inside t. A token must
// come with its AccessorID and SecretHash, no SecretID (the state never
// holds a secret in the clear); a replacement keeps its CreateIndex,
// CreateTime, SecretHash and sealed secret. Its role links are resolved
// (structs.ACLTokenRoleLink gets the role's ID and name): a link to a
// role that does not exist is ErrNotFound.
func (s *Store) UpsertACLTokensTxn(t *WriteTxn, tokens []*structs.ACLToken) error {
	for _, tok := range tokens {
		switch {
		case tok == nil || tok.AccessorID == "":
			return fmt.Errorf("state: token without AccessorID: %w", ErrInvalid)
		case tok.SecretID != "":
			return fmt.Errorf("state: token %s carries its secret; only its hash is stored: %w", tok.AccessorID, ErrInvalid)
		case tok.Type != structs.ACLTokenTypeClient && tok.Type != structs.ACLTokenTypeManagement:
			return fmt.Errorf("state: token %s of type %q: %w", tok.AccessorID, tok.Type, ErrInvalid)
		}
		old, err := t.reader().ACLTokenByAccessor(tok.AccessorID)
		if err != nil {
			return err
		}
		c := tok.Copy()
		c.CreateIndex, c.ModifyIndex = t.index, t.index
		if old != nil {
			c.CreateIndex, c.CreateTime, c.SecretHash = old.CreateIndex, old.CreateTime, old.SecretHash
			if c.Sealed == nil {
				c.Sealed = old.Sealed
			}
		}
		if c.Roles, err = t.reader().resolveRoleLinks(c.Roles); err != nil {
			return err
		}
		if c.SecretHash == "" {
			return fmt.Errorf("state: token %s without a secret hash: %w", tok.AccessorID, ErrInvalid)
		}
		if other, err := t.reader().ACLTokenBySecretHash(c.SecretHash); err != nil {
			return err
		} else if other != nil && other.AccessorID != c.AccessorID {
			return fmt.Errorf("state: token %s: secret already in use: %w", tok.AccessorID, ErrConflict)
		}
		if err := t.insert(TableACLTokens, c); err != nil {
			return err
		}
	}
	return nil
}

// DeleteACLTokensTxn deletes tokens by AccessorID inside t; an unknown
// one is ErrNotFound and nothing is deleted.
func (s *Store) DeleteACLTokensTxn(t *WriteTxn, accessorIDs []string) error {
	for _, id := range accessorIDs {
		tok, err := t.reader().ACLTokenByAccessor(id)
		if err != nil {
			return err
		}
		if tok == nil {
			return fmt.Errorf("ACL token %q: %w", id, ErrNotFound)
		}
		if err := t.delete(TableACLTokens, tok); err != nil {
			return err
		}
	}
	return nil
}

// ACLPolicyByName returns the policy, or nil.
func (s *Snapshot) ACLPolicyByName(name string) (*structs.ACLPolicy, error) {
	return getOne[*structs.ACLPolicy](s, TableACLPolicies, "id", name)
}

// ACLPolicies returns every policy, by name.
func (s *Snapshot) ACLPolicies() ([]*structs.ACLPolicy, error) {
	return list[*structs.ACLPolicy](s, TableACLPolicies, "id")
}

// ACLPoliciesByPrefix returns the policies whose name starts with prefix.
func (s *Snapshot) ACLPoliciesByPrefix(prefix string) ([]*structs.ACLPolicy, error) {
	return list[*structs.ACLPolicy](s, TableACLPolicies, "id_prefix", prefix)
}

// ACLTokenByAccessor returns the token, or nil.
func (s *Snapshot) ACLTokenByAccessor(id string) (*structs.ACLToken, error) {
	return getOne[*structs.ACLToken](s, TableACLTokens, "id", id)
}

// ACLTokenBySecretHash returns the token whose secret hashes to hash
// (structs.HashSecret), or nil.
func (s *Snapshot) ACLTokenBySecretHash(hash string) (*structs.ACLToken, error) {
	if hash == "" {
		return nil, nil
	}
	return getOne[*structs.ACLToken](s, TableACLTokens, "secret", hash)
}

// ACLTokens returns every token, by AccessorID.
func (s *Snapshot) ACLTokens() ([]*structs.ACLToken, error) {
	return list[*structs.ACLToken](s, TableACLTokens, "id")
}

// ACLTokensByPrefix returns the tokens whose AccessorID starts with prefix.
func (s *Snapshot) ACLTokensByPrefix(prefix string) ([]*structs.ACLToken, error) {
	return list[*structs.ACLToken](s, TableACLTokens, "id_prefix", prefix)
}

// NodeBySecretHash returns the node whose secret hashes to hash, or nil.
func (s *Snapshot) NodeBySecretHash(hash string) (*structs.Node, error) {
	if hash == "" {
		return nil, nil
	}
	return getOne[*structs.Node](s, TableNodes, "secret", hash)
}
