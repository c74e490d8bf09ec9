package state

import (
	"errors"
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
// A variable that holds a lock is written only by a request that names
// the lock's ID (req.Var.Lock), and keeps its lock; any other write or
// delete is a conflict whose Conflict names only the namespace and path,
// as Nomad's. The items stay sealed: the store never sees them in the
// clear.
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
	if old != nil && lockedAgainst(old, v.Lock) {
		return &structs.VarApplyResult{Conflicted: true, Conflict: bareVar(old)}, nil
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
	c.Lock, c.LockExpires = nil, 0
	if old != nil {
		c.CreateIndex, c.CreateTime = old.CreateIndex, old.CreateTime
		c.Lock, c.LockExpires = old.Lock.Copy(), old.LockExpires
	}
	if err := t.insert(TableVariables, c); err != nil {
		return nil, err
	}
	return &structs.VarApplyResult{Written: c}, nil
}

// Refusals of variable lock operations; each wraps ErrConflict (the HTTP
// API answers 409) and, for an unknown variable, ErrNotFound.
var (
	// ErrVarLockNotHeld: the variable holds no lock to renew or release.
	ErrVarLockNotHeld = errors.New("variable doesn't hold a lock")
	// ErrVarLocked: the lock is another's, or ran out and waits for its
	// delay to pass.
	ErrVarLocked = errors.New("attempting to modify locked variable")
	// ErrVarNotFound: no variable at the path.
	ErrVarNotFound = errors.New("variable not found")
)

// lockedAgainst reports whether v holds a lock that lock (the caller's;
// nil for none) does not name.
func lockedAgainst(v *structs.VariableEncrypted, lock *structs.VariableLock) bool {
	return v.Lock != nil && (lock == nil || lock.ID != v.Lock.ID)
}

// bareVar is what a refused caller learns of a locked variable: its
// namespace and path, as Nomad's.
func bareVar(v *structs.VariableEncrypted) *structs.VariableEncrypted {
	return &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Namespace: v.Namespace, Path: v.Path}}
}

// VarLockTxn performs one lock operation inside t (structs.VarLockRequest;
// structs.VarLockOp…), at req.Now, the leader's clock:
//
//   - acquire writes req.Var (its sealed items, replacing any stored) with
//     its lock, leased until Now + TTL; a variable locked by another ID is
//     a conflict (Conflicted, Conflict naming only namespace and path).
//   - renew extends the lease of the lock req.LockID holds to Now + TTL,
//     without changing the variable's ModifyIndex: ErrVarNotFound,
//     ErrVarLockNotHeld, or ErrVarLocked when the ID is another's or the
//     lease ran out (the lock is then only waiting for its delay).
//   - release removes the lock req.LockID holds, keeping the items:
//     ErrVarNotFound, ErrVarLockNotHeld, or a conflict for another ID.
//   - expire removes the lock req.LockID holds when its lease and delay
//     have passed at Now (the leader's release); otherwise, and when the
//     variable or its lock is gone or another, it changes nothing.
func (s *Store) VarLockTxn(t *WriteTxn, req *structs.VarLockRequest) (*structs.VarApplyResult, error) {
	if req == nil || req.Var == nil || req.Var.Path == "" || req.Var.Namespace == "" {
		return nil, fmt.Errorf("state: variable lock without namespace or path: %w", ErrInvalid)
	}
	v := req.Var
	old, err := t.reader().VarGet(v.Namespace, v.Path)
	if err != nil {
		return nil, err
	}
	switch req.Op {
	case structs.VarLockOpAcquire:
		return s.acquireVarLockTxn(t, req, old)
	case structs.VarLockOpRenew, structs.VarLockOpRelease:
		switch {
		case old == nil:
			return nil, fmt.Errorf("%w: %w", ErrNotFound, ErrVarNotFound)
		case old.Lock == nil:
			return nil, fmt.Errorf("%w: %w", ErrConflict, ErrVarLockNotHeld)
		case old.Lock.ID != req.LockID && req.Op == structs.VarLockOpRelease:
			c := bareVar(old)
			c.Lock = &structs.VariableLock{}
			return &structs.VarApplyResult{Conflicted: true, Conflict: c}, nil
		case old.Lock.ID != req.LockID, req.Op == structs.VarLockOpRenew && req.Now >= old.LockExpires:
			return nil, fmt.Errorf("%w: %w", ErrConflict, ErrVarLocked)
		}
		c := old.Copy()
		if req.Op == structs.VarLockOpRenew {
			c.LockExpires = req.Now + int64(old.Lock.TTL)
		} else {
			c.Lock, c.LockExpires, c.ModifyIndex = nil, 0, t.index
		}
		if err := t.insert(TableVariables, c); err != nil {
			return nil, err
		}
		return &structs.VarApplyResult{Written: c}, nil
	case structs.VarLockOpExpire:
		if old == nil || old.Lock == nil || old.Lock.ID != req.LockID || req.Now < old.VariableLockRelease() {
			return &structs.VarApplyResult{}, nil
		}
		c := old.Copy()
		c.Lock, c.LockExpires, c.ModifyIndex = nil, 0, t.index
		if err := t.insert(TableVariables, c); err != nil {
			return nil, err
		}
		return &structs.VarApplyResult{Written: c}, nil
	}
	return nil, fmt.Errorf("state: unknown variable lock operation %q: %w", req.Op, ErrInvalid)
}

func (s *Store) acquireVarLockTxn(t *WriteTxn, req *structs.VarLockRequest, old *structs.VariableEncrypted) (*structs.VarApplyResult, error) {
	v := req.Var
	switch {
	case v.Lock == nil || v.Lock.ID == "":
		return nil, fmt.Errorf("state: variable %q: lock without an ID: %w", v.Path, ErrInvalid)
	case v.Lock.TTL <= 0 || v.Lock.LockDelay < 0:
		return nil, fmt.Errorf("state: variable %q: lock with TTL %s, delay %s: %w", v.Path, v.Lock.TTL, v.Lock.LockDelay, ErrInvalid)
	case v.KeyID == "" || len(v.Data) == 0:
		return nil, fmt.Errorf("state: variable %q without sealed items: %w", v.Path, ErrInvalid)
	}
	if old != nil && lockedAgainst(old, v.Lock) {
		return &structs.VarApplyResult{Conflicted: true, Conflict: bareVar(old)}, nil
	}
	if k, err := t.reader().RootKeyByID(v.KeyID); err != nil {
		return nil, err
	} else if k == nil {
		return nil, fmt.Errorf("state: variable %q sealed with unknown key %s: %w", v.Path, v.KeyID, ErrInvalid)
	}
	c := v.Copy()
	c.CreateIndex, c.ModifyIndex = t.index, t.index
	if old != nil {
		c.CreateIndex, c.CreateTime = old.CreateIndex, old.CreateTime
	}
	c.LockExpires = req.Now + int64(c.Lock.TTL)
	if err := t.insert(TableVariables, c); err != nil {
		return nil, err
	}
	return &structs.VarApplyResult{Written: c}, nil
}

// LockedVars returns the variables that hold a lock, for the leader's
// release of those whose lease and delay have passed.
func (s *Snapshot) LockedVars() ([]*structs.VariableEncrypted, error) {
	all, err := list[*structs.VariableEncrypted](s, TableVariables, "id")
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, v := range all {
		if v.Lock != nil {
			out = append(out, v)
		}
	}
	return out, nil
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
