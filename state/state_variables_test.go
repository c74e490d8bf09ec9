package state

import (
	"context"
	"errors"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/structs"
)

func testRootKey(id, st string) *structs.RootKey {
	k := &structs.RootKey{Key: make([]byte, 32)}
	k.KeyID, k.State, k.Algorithm = id, st, structs.EncryptionAlgorithmAES256GCM
	return k
}

func sealedVar(ns, path, key string) *structs.VariableEncrypted {
	v := &structs.VariableEncrypted{KeyID: key, Nonce: []byte("123456789012"), Data: []byte("sealed:" + path)}
	v.Namespace, v.Path, v.CreateTime, v.ModifyTime = ns, path, 10, 10
	return v
}

func applyVar(t *testing.T, s *Store, index uint64, req *structs.VarApplyRequest) *structs.VarApplyResult {
	t.Helper()
	var res *structs.VarApplyResult
	must(t, s.update(index, func(txn *WriteTxn) error {
		var err error
		res, err = s.ApplyVarTxn(txn, req)
		return err
	}))
	return res
}

func upsertKey(t *testing.T, s *Store, index uint64, k *structs.RootKey, onlyIfNone bool) bool {
	t.Helper()
	var added bool
	must(t, s.update(index, func(txn *WriteTxn) error {
		var err error
		added, err = s.UpsertRootKeyTxn(txn, &structs.RootKeyUpsertRequest{Key: k, OnlyIfNone: onlyIfNone})
		return err
	}))
	return added
}

func TestVarCRUDAndCAS(t *testing.T) {
	s := newStore(t)
	upsertKey(t, s, 1, testRootKey("k1", structs.RootKeyStateActive), true)

	// A key the keyring does not hold cannot seal a variable.
	err := s.update(2, func(txn *WriteTxn) error {
		_, err := s.ApplyVarTxn(txn, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealedVar("default", "a", "nope")})
		return err
	})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown key: %v", err)
	}

	res := applyVar(t, s, 3, &structs.VarApplyRequest{Op: structs.VarOpCAS, CheckIndex: 0, Var: sealedVar("default", "app/db", "k1")})
	if res.Conflicted || res.Written == nil || res.Written.CreateIndex != 3 || res.Written.ModifyIndex != 3 {
		t.Fatalf("create: %+v", res)
	}
	// cas=0 on an existing variable is a conflict carrying the current one.
	res = applyVar(t, s, 4, &structs.VarApplyRequest{Op: structs.VarOpCAS, CheckIndex: 0, Var: sealedVar("default", "app/db", "k1")})
	if !res.Conflicted || res.Conflict == nil || res.Conflict.ModifyIndex != 3 {
		t.Fatalf("cas 0 on existing: %+v", res)
	}
	upd := sealedVar("default", "app/db", "k1")
	upd.CreateTime, upd.ModifyTime = 99, 20
	res = applyVar(t, s, 5, &structs.VarApplyRequest{Op: structs.VarOpCAS, CheckIndex: 3, Var: upd})
	if res.Conflicted || res.Written.CreateIndex != 3 || res.Written.ModifyIndex != 5 || res.Written.CreateTime != 10 || res.Written.ModifyTime != 20 {
		t.Fatalf("cas update: %+v", res.Written)
	}
	applyVar(t, s, 6, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealedVar("default", "app/web", "k1")})
	applyVar(t, s, 7, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealedVar("prod", "app/db", "k1")})
	applyVar(t, s, 8, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealedVar("default", "other", "k1")})

	snap := s.Snapshot()
	paths := func(vs []*structs.VariableEncrypted, err error) (out []string) {
		must(t, err)
		for _, v := range vs {
			out = append(out, v.Namespace+":"+v.Path)
		}
		return out
	}
	if got := paths(snap.VarsByPrefix("default", "app/")); len(got) != 2 || got[0] != "default:app/db" || got[1] != "default:app/web" {
		t.Fatalf("prefix in default: %v", got)
	}
	if got := paths(snap.VarsByPrefix("*", "app/")); len(got) != 3 {
		t.Fatalf("prefix across namespaces: %v", got)
	}
	if got := paths(snap.VarsByPrefix("default", "")); len(got) != 3 {
		t.Fatalf("all in default: %v", got)
	}

	// A stale delete-cas conflicts; the right index deletes.
	res = applyVar(t, s, 9, &structs.VarApplyRequest{Op: structs.VarOpDeleteCAS, CheckIndex: 3, Var: sealedVar("default", "app/db", "")})
	if !res.Conflicted || res.Conflict.ModifyIndex != 5 {
		t.Fatalf("stale delete-cas: %+v", res)
	}
	applyVar(t, s, 10, &structs.VarApplyRequest{Op: structs.VarOpDeleteCAS, CheckIndex: 5, Var: sealedVar("default", "app/db", "")})
	if v, _ := s.Snapshot().VarGet("default", "app/db"); v != nil {
		t.Fatalf("deleted variable still there: %+v", v)
	}
	// Deleting what is not there is a no-op, not an error.
	applyVar(t, s, 11, &structs.VarApplyRequest{Op: structs.VarOpDelete, Var: sealedVar("default", "app/db", "")})
	if idx, _ := s.Snapshot().Index(TableVariables); idx != 10 {
		t.Fatalf("variables index = %d, want 10 (the no-op delete changes nothing)", idx)
	}
}

func TestVarBlockingQueryWakesOnWrite(t *testing.T) {
	s := newStore(t)
	upsertKey(t, s, 1, testRootKey("k1", structs.RootKeyStateActive), true)
	applyVar(t, s, 2, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealedVar("default", "a", "k1")})
	done := make(chan uint64)
	go func() {
		_, idx, _ := s.BlockingQuery(context.Background(), 2, time.Minute, func(_ memdb.WatchSet, snap *Snapshot) (any, uint64, error) {
			v, err := snap.VarGet("default", "a")
			if v == nil || err != nil {
				return nil, 0, err
			}
			return v, v.ModifyIndex, nil
		})
		done <- idx
	}()
	select {
	case idx := <-done:
		t.Fatalf("returned at %d before any change", idx)
	case <-time.After(50 * time.Millisecond):
	}
	applyVar(t, s, 3, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealedVar("default", "a", "k1")})
	select {
	case idx := <-done:
		if idx != 3 {
			t.Fatalf("woke at %d, want 3", idx)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the blocking read did not wake on the write")
	}
}

func TestRootKeyRotation(t *testing.T) {
	s := newStore(t)
	if !upsertKey(t, s, 1, testRootKey("k1", structs.RootKeyStateActive), true) {
		t.Fatal("first key not added")
	}
	// A second leader's first key is a no-op.
	if upsertKey(t, s, 2, testRootKey("k0", structs.RootKeyStateActive), true) {
		t.Fatal("OnlyIfNone added a key to a keyring that has one")
	}
	upsertKey(t, s, 3, testRootKey("k2", structs.RootKeyStateActive), false)
	keys, err := s.Snapshot().RootKeys()
	must(t, err)
	if len(keys) != 2 || keys[0].KeyID != "k1" || keys[0].State != structs.RootKeyStateInactive || keys[0].ModifyIndex != 3 ||
		keys[1].State != structs.RootKeyStateActive {
		t.Fatalf("keyring after rotation: %v", keys)
	}
	if a, _ := s.Snapshot().ActiveRootKey(); a == nil || a.KeyID != "k2" {
		t.Fatalf("active key: %v", a)
	}
	bad := testRootKey("k3", structs.RootKeyStateActive)
	bad.Key = []byte("short")
	if err := s.update(4, func(txn *WriteTxn) error {
		_, err := s.UpsertRootKeyTxn(txn, &structs.RootKeyUpsertRequest{Key: bad})
		return err
	}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("short key: %v", err)
	}
}

func TestRootKeyDelete(t *testing.T) {
	s := newStore(t)
	upsertKey(t, s, 1, testRootKey("k1", structs.RootKeyStateActive), true)
	applyVar(t, s, 2, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealedVar("default", "a", "k1")})
	upsertKey(t, s, 3, testRootKey("k2", structs.RootKeyStateActive), false)
	del := func(index uint64, id string, force bool) error {
		return s.update(index, func(txn *WriteTxn) error {
			return s.DeleteRootKeyTxn(txn, &structs.RootKeyDeleteRequest{KeyID: id, Force: force})
		})
	}
	if err := del(4, "k2", false); !errors.Is(err, ErrInvalid) {
		t.Fatalf("delete of the active key: %v", err)
	}
	if err := del(4, "k1", false); !errors.Is(err, ErrConflict) {
		t.Fatalf("delete of a key in use: %v", err)
	}
	if err := del(4, "nope", false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete of an unknown key: %v", err)
	}
	must(t, del(5, "k1", true))
	if k, _ := s.Snapshot().RootKeyByID("k1"); k != nil {
		t.Fatal("forced delete left the key")
	}
}
