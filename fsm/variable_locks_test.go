package fsm

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/internal/keyring"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// TestVariableLocksAreAppliedAndSnapshotted applies lock entries as the
// leader writes them (times stamped in the request), replays them on a
// second FSM to the same state, and carries a held lock, with its lease,
// through a snapshot.
func TestVariableLocksAreAppliedAndSnapshotted(t *testing.T) {
	f := newTestFSM(t)
	random := bytes.NewReader(bytes.Repeat([]byte{5, 4, 3, 2}, 64))
	k, err := keyring.NewRootKey("key-1", time.Unix(100, 0), random)
	if err != nil {
		t.Fatal(err)
	}
	nonce, _ := keyring.NewNonce(random)
	lock := &structs.VariableLock{ID: "lock-1", TTL: 15 * time.Second, LockDelay: 5 * time.Second}
	sealed, err := keyring.Seal(k, nonce, &structs.Variable{Namespace: "default", Path: "app/leader", Items: structs.VariableItems{"who": "a"}, Lock: lock})
	if err != nil {
		t.Fatal(err)
	}
	bare := func() *structs.VariableEncrypted {
		return &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: "app/leader"}}
	}
	at := func(s int64) int64 { return s * int64(time.Second) }
	var log [][]byte
	apply := func(index uint64, mt MessageType, req any) any {
		log = append(log, entry(t, mt, req))
		return applyOK(t, f, index, mt, req)
	}
	apply(1, RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{Key: k, OnlyIfNone: true})
	res, ok := apply(2, VarLockRequestType, &structs.VarLockRequest{Op: structs.VarLockOpAcquire, Var: sealed, LockID: "lock-1", Now: at(1000)}).(*structs.VarApplyResult)
	if !ok || res.Written == nil || res.Written.LockExpires != at(1015) {
		t.Fatalf("acquire: %#v", res)
	}
	apply(3, VarLockRequestType, &structs.VarLockRequest{Op: structs.VarLockOpRenew, Var: bare(), LockID: "lock-1", Now: at(1010)})

	// A refusal is the store's answer, not a broken entry.
	resp := f.Apply(&raft.Log{Index: 4, Type: raft.LogCommand, Data: entry(t, VarLockRequestType,
		&structs.VarLockRequest{Op: structs.VarLockOpRenew, Var: bare(), LockID: "lock-2", Now: at(1011)})})
	if err, _ := resp.(error); !errors.Is(err, state.ErrVarLocked) {
		t.Fatalf("renew by another: %v", resp)
	}

	h := newTestFSM(t)
	for i, e := range log {
		if resp := h.Apply(&raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: e}); resp != nil {
			if err, ok := resp.(error); ok {
				t.Fatal(err)
			}
		}
	}
	if dump(t, f) != dump(t, h) {
		t.Fatal("the same entries made different states")
	}

	fs, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fs.(*fsmSnapshot).write(&buf); err != nil {
		t.Fatal(err)
	}
	g := newTestFSM(t)
	if err := g.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	if dump(t, f) != dump(t, g) {
		t.Fatal("restored state differs")
	}
	v, _ := g.State().Snapshot().VarGet("default", "app/leader")
	if v == nil || v.Lock == nil || *v.Lock != *lock || v.LockExpires != at(1025) || v.ModifyIndex != 2 {
		t.Fatalf("restored lock: %+v", v)
	}
	// The restored lease decides the leader's release.
	applyOK(t, g, 5, VarLockRequestType, &structs.VarLockRequest{Op: structs.VarLockOpExpire, Var: bare(), LockID: "lock-1", Now: at(1029)})
	if v, _ := g.State().Snapshot().VarGet("default", "app/leader"); v.Lock == nil {
		t.Fatal("released before lease and delay passed")
	}
	applyOK(t, g, 6, VarLockRequestType, &structs.VarLockRequest{Op: structs.VarLockOpExpire, Var: bare(), LockID: "lock-1", Now: at(1030)})
	if v, _ := g.State().Snapshot().VarGet("default", "app/leader"); v.Lock != nil || v.ModifyIndex != 6 {
		t.Fatalf("not released at lease + delay: %+v", v)
	}
}

// The lock entry's number is part of the log format, and the leader
// writes it only once every server runs build 2.
func TestVariableLockMessageType(t *testing.T) {
	if VarLockRequestType != 63 || TypeBuild(VarLockRequestType) != 2 {
		t.Fatalf("VarLock %d, build %d", VarLockRequestType, TypeBuild(VarLockRequestType))
	}
	if err := CheckWritable(VarLockRequestType, 1); !errors.Is(err, ErrServersTooOld) {
		t.Fatalf("written while a server runs build 1: %v", err)
	}
}
