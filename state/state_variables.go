package state

import (
	"fmt"
	"strings"

	"github.com/droverhq/drover/structs"
)

// ApplyVarTxn performs one variable operation inside t (structs.VarOp…).
// A check-and-set whose CheckIndex is not the stored variable's
// ModifyIndex (0: there must be none) changes nothing and answers with
// the current variable and Conflicted set; it is not an error, so that
// the caller can show the conflict. A write keeps the stored variable's
// CreateIndex and CreateTime; a delete of an absent variable is a no-op.
// The items stay sealed: the store never sees them in the clear.
func (s *Store) ApplyVarTxn(t *WriteTxn, req *structs.VarApplyRequest) (*structs.VarApplyResult, error) {
	if req == nil || req.Var == nil || req.Var.Path == "" || req.Var.Namespace == "" {
		return nil, fmt.Errorf("state: variable without namespace or path: %w", ErrInvalid)
	}
	v := req.Var
	old, err := t.reader().VarGet(v.Namespace, v.Path)
	if err != nil {
		return nil, err
	}
	switch req.Op {
	case structs.VarOpCAS, structs.VarOpDeleteCAS:
		current := uint64(0)
		if old != nil {
			current = old.ModifyIndex
		}
		if current != req.CheckIndex {
			return &structs.VarApplyResult{Conflicted: true, Conflict: old}, nil
		}
	case structs.VarOpSet, structs.VarOpDelete:
	default:
		return nil, fmt.Errorf("state: unknown variable operation %q: %w", req.Op, ErrInvalid)
	}
	if req.Op == structs.VarOpDelete || req.Op == structs.VarOpDeleteCAS {
		if old != nil {
			if err := t.delete(TableVariables, old); err != nil {
				return nil, err
			}
		}
		return &structs.VarApplyResult{}, nil
	}
	if v.KeyID == "" || len(v.Data) == 0 {
		return nil, fmt.Errorf("state: variable %q without sealed items: %w", v.Path, ErrInvalid)
	}
	if k, err := t.reader().RootKeyByID(v.KeyID); err != nil {
		return nil, err
	} else if k == nil {
		return nil, fmt.Errorf("state: variable %q sealed with unknown key %s: %w", v.Path, v.KeyID, ErrInvalid)
	}
	if err := t.ensureNamespace(v.Namespace); err != nil {
		return nil, err
	}
	c := v.Copy()
	c.CreateIndex, c.ModifyIndex = t.index, t.index
	if old != nil {
		c.CreateIndex, c.CreateTime = old.CreateIndex, old.CreateTime
	}
	if err := t.insert(TableVariables, c); err != nil {
		return nil, err
	}
	return &structs.VarApplyResult{Written: c}, nil
}

// VarGet returns the variable at ns and path, or nil.
func (s *Snapshot) VarGet(ns, path string) (*structs.VariableEncrypted, error) {
	return getOne[*structs.VariableEncrypted](s, TableVariables, "id", ns, path)
}

// VarsByPrefix returns the variables of namespace ns ("*": every
// namespace) whose path starts with prefix, by namespace and path.
func (s *Snapshot) VarsByPrefix(ns, prefix string) ([]*structs.VariableEncrypted, error) {
	if ns != "*" {
		return list[*structs.VariableEncrypted](s, TableVariables, "id_prefix", ns, prefix)
	}
	all, err := list[*structs.VariableEncrypted](s, TableVariables, "id")
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, v := range all {
		if strings.HasPrefix(v.Path, prefix) {
			out = append(out, v)
		}
	}
	return out, nil
}

// UpsertRootKeyTxn adds req.Key to the keyring inside t. An active key
// makes the others inactive; with OnlyIfNone nothing is written when the
// keyring holds a key already (the answer is then false).
func (s *Store) UpsertRootKeyTxn(t *WriteTxn, req *structs.RootKeyUpsertRequest) (bool, error) {
	k := req.Key
	switch {
	case k == nil || k.KeyID == "":
		return false, fmt.Errorf("state: root key without an ID: %w", ErrInvalid)
	case len(k.Key) != 32:
		return false, fmt.Errorf("state: root key %s is not 32 bytes: %w", k.KeyID, ErrInvalid)
	case k.State != structs.RootKeyStateActive && k.State != structs.RootKeyStateInactive:
		return false, fmt.Errorf("state: root key %s in state %q: %w", k.KeyID, k.State, ErrInvalid)
	}
	keys, err := t.reader().RootKeys()
	if err != nil {
		return false, err
	}
	if req.OnlyIfNone && len(keys) > 0 {
		return false, nil
	}
	for _, o := range keys {
		if o.KeyID == k.KeyID {
			return false, fmt.Errorf("state: root key %s exists: %w", k.KeyID, ErrConflict)
		}
		if k.Active() && o.Active() {
			c := *o
			c.State, c.ModifyIndex = structs.RootKeyStateInactive, t.index
			if err := t.insert(TableRootKeys, &c); err != nil {
				return false, err
			}
		}
	}
	c := *k
	c.Key = append([]byte(nil), k.Key...)
	c.RSAKey = append([]byte(nil), k.RSAKey...)
	c.CreateIndex, c.ModifyIndex = t.index, t.index
	if err := t.insert(TableRootKeys, &c); err != nil {
		return false, err
	}
	return true, nil
}

// RootKeys returns the keyring, by key ID.
func (s *Snapshot) RootKeys() ([]*structs.RootKey, error) {
	return list[*structs.RootKey](s, TableRootKeys, "id")
}

// RootKeyByID returns a root key, or nil.
func (s *Snapshot) RootKeyByID(id string) (*structs.RootKey, error) {
	return getOne[*structs.RootKey](s, TableRootKeys, "id", id)
}

// ActiveRootKey returns the key that seals new writes, or nil when the
// keyring is empty.
func (s *Snapshot) ActiveRootKey() (*structs.RootKey, error) {
	keys, err := s.RootKeys()
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if k.Active() {
			return k, nil
		}
	}
	return nil, nil
}

// DeleteRootKeyTxn removes an inactive root key inside t: the active key
// is refused (ErrInvalid), an unknown one is ErrNotFound, and, without
// req.Force, a key that still seals a variable is ErrConflict.
func (s *Store) DeleteRootKeyTxn(t *WriteTxn, req *structs.RootKeyDeleteRequest) error {
	k, err := t.reader().RootKeyByID(req.KeyID)
	if err != nil {
		return err
	}
	switch {
	case k == nil:
		return fmt.Errorf("root key %q: %w", req.KeyID, ErrNotFound)
	case k.Active():
		return fmt.Errorf("root key %s is active; rotate first: %w", k.KeyID, ErrInvalid)
	}
	if !req.Force {
		vs, err := list[*structs.VariableEncrypted](t.reader(), TableVariables, "id")
		if err != nil {
			return err
		}
		n := 0
		for _, v := range vs {
			if v.KeyID == k.KeyID {
				n++
			}
		}
		if n > 0 {
			return fmt.Errorf("root key %s still encrypts %d variables (force removes it, and they can no longer be read): %w", k.KeyID, n, ErrConflict)
		}
	}
	return t.delete(TableRootKeys, k)
}
