package fsm

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/internal/keyring"
	"github.com/droverhq/drover/structs"
)

// TestVariablesAndKeyringAreAppliedAndSnapshotted applies a keyring and
// sealed variables, rotates, and checks that a restored FSM holds the
// same keys and opens the same items, and that no item is in the clear
// in the entries or the snapshot.
func TestVariablesAndKeyringAreAppliedAndSnapshotted(t *testing.T) {
	f := newTestFSM(t)
	random := bytes.NewReader(bytes.Repeat([]byte{7, 1, 9, 3}, 64))
	k1, err := keyring.NewRootKey("key-1", time.Unix(100, 0), random)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "hunter2-the-secret"
	seal := func(key *structs.RootKey, path string) *structs.VariableEncrypted {
		nonce, err := keyring.NewNonce(random)
		if err != nil {
			t.Fatal(err)
		}
		ve, err := keyring.Seal(key, nonce, &structs.Variable{Namespace: "default", Path: path, Items: structs.VariableItems{"password": secret}})
		if err != nil {
			t.Fatal(err)
		}
		return ve
	}
	var log [][]byte
	apply := func(index uint64, mt MessageType, req any) any {
		log = append(log, entry(t, mt, req))
		return applyOK(t, f, index, mt, req)
	}
	if added := apply(1, RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{Key: k1, OnlyIfNone: true}); added != true {
		t.Fatalf("first key: %v", added)
	}
	apply(2, VarApplyRequestType, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: seal(k1, "app/one")})
	k2, _ := keyring.NewRootKey("key-2", time.Unix(200, 0), random)
	apply(3, RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{Key: k2})
	apply(4, VarApplyRequestType, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: seal(k2, "app/two")})
	resp := apply(5, VarApplyRequestType, &structs.VarApplyRequest{Op: structs.VarOpCAS, CheckIndex: 0, Var: seal(k2, "app/two")})
	if res, ok := resp.(*structs.VarApplyResult); !ok || !res.Conflicted || res.Conflict.ModifyIndex != 4 {
		t.Fatalf("conflicting cas: %#v", resp)
	}
	for i, e := range log {
		if bytes.Contains(e, []byte(secret)) {
			t.Fatalf("entry %d holds the item in the clear", i)
		}
	}

	// The same entries make the same state: the state machine adds no
	// randomness and reads no clock.
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
	if bytes.Contains(buf.Bytes(), []byte(secret)) {
		t.Fatal("the snapshot holds the item in the clear")
	}
	g := newTestFSM(t)
	if err := g.Restore(nopCloser{bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	if dump(t, f) != dump(t, g) {
		t.Fatal("restored state differs")
	}
	s := g.State().Snapshot()
	if k, _ := s.RootKeyByID("key-1"); k == nil || k.State != structs.RootKeyStateInactive || !bytes.Equal(k.Key, k1.Key) {
		t.Fatalf("restored key-1: %v", k)
	}
	for _, path := range []string{"app/one", "app/two"} {
		ve, _ := s.VarGet("default", path)
		if ve == nil {
			t.Fatalf("restored %s missing", path)
		}
		v, err := keyring.Open(ve, s.RootKeyByID)
		if err != nil || v.Items["password"] != secret {
			t.Fatalf("open restored %s: %v %v", path, v, err)
		}
	}
	if !strings.Contains(dump(t, g), "key-2") {
		t.Fatal("dump lacks the keyring")
	}
}

// The new types' numbers are part of the log format.
func TestVariablesMessageTypeNumbers(t *testing.T) {
	if VarApplyRequestType != 23 || RootKeyUpsertRequestType != 24 || RootKeyDeleteRequestType != 25 {
		t.Fatalf("VarApply %d, RootKeyUpsert %d, RootKeyDelete %d", VarApplyRequestType, RootKeyUpsertRequestType, RootKeyDeleteRequestType)
	}
}
