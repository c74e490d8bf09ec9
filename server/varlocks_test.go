package server

import (
	"context"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

func lockedTestVar(path string, expires time.Time, delay time.Duration) *structs.VariableEncrypted {
	v := &structs.VariableEncrypted{LockExpires: expires.UnixNano()}
	v.Namespace, v.Path = "default", path
	v.Lock = &structs.VariableLock{ID: "L-" + path, TTL: 15 * time.Second, LockDelay: delay}
	return v
}

func TestDueVarLocks(t *testing.T) {
	now := time.Unix(1000, 0)
	vars := []*structs.VariableEncrypted{
		lockedTestVar("past-delay", now.Add(-10*time.Second), 10*time.Second), // due exactly now
		lockedTestVar("in-delay", now.Add(-time.Second), 5*time.Second),       // due in 4 s
		lockedTestVar("leased", now.Add(30*time.Second), 0),                   // due in 30 s
		{VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: "unlocked"}},
	}
	due, wake := dueVarLocks(vars, now)
	if len(due) != 1 || due[0].Path != "past-delay" {
		t.Fatalf("due: %v", due)
	}
	if want := now.Add(4 * time.Second); !wake.Equal(want) {
		t.Fatalf("wake %v, want %v", wake, want)
	}
	if due, wake := dueVarLocks(nil, now); len(due) != 0 || !wake.IsZero() {
		t.Fatalf("no locks: %v %v", due, wake)
	}
}

// TestLeaderReleasesRunOutVarLocks: a lock that is not renewed is
// released by the leader once its TTL and delay have passed on the
// leader's clock, and a new term (a new leader) keeps the deadline the
// log holds rather than starting one of its own.
func TestLeaderReleasesRunOutVarLocks(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	k := &structs.RootKey{Key: make([]byte, 32)}
	k.KeyID, k.State, k.Algorithm = "k1", structs.RootKeyStateActive, structs.EncryptionAlgorithmAES256GCM
	if _, _, err := h.raft.Apply(ctx, fsm.RootKeyUpsertRequestType, &structs.RootKeyUpsertRequest{Key: k}); err != nil {
		t.Fatal(err)
	}
	v := &structs.VariableEncrypted{KeyID: "k1", Nonce: make([]byte, 12), Data: []byte("sealed")}
	v.Namespace, v.Path = "default", "app/lock"
	v.Lock = &structs.VariableLock{ID: "L1", TTL: 15 * time.Second, LockDelay: 5 * time.Second}
	start := h.clock.Now()
	if _, _, err := h.raft.Apply(ctx, fsm.VarLockRequestType, &structs.VarLockRequest{Op: structs.VarLockOpAcquire, Var: v, LockID: "L1", Now: start.UnixNano()}); err != nil {
		t.Fatal(err)
	}
	locked := func(s *state.Snapshot) bool {
		got, _ := s.VarGet("default", "app/lock")
		return got != nil && got.Lock != nil
	}

	h.start()
	h.clock.Advance(10 * time.Second)
	// Renewed at 10 s: the lease now runs to 25 s, the release to 30 s.
	bare := &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: "app/lock"}}
	if _, _, err := h.raft.Apply(ctx, fsm.VarLockRequestType, &structs.VarLockRequest{Op: structs.VarLockOpRenew, Var: bare, LockID: "L1", Now: h.clock.Now().UnixNano()}); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(12 * time.Second) // 22 s: within the lease
	h.stop()
	if !locked(h.store().Snapshot()) {
		t.Fatal("released within the lease")
	}

	// A new term at 27 s: past the lease, within the delay.
	h.clock.Advance(5 * time.Second)
	h.start()
	if !locked(h.store().Snapshot()) {
		t.Fatal("released within the delay")
	}
	h.clock.Advance(3 * time.Second) // 30 s
	h.waitFor("the lock's release", func(s *state.Snapshot) bool { return !locked(s) })
	got, _ := h.store().Snapshot().VarGet("default", "app/lock")
	if string(got.Data) != "sealed" {
		t.Fatalf("release changed the items: %+v", got)
	}
}
