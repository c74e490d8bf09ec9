package state

import (
	"errors"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// varLock applies one lock operation at index, at now (seconds).
func varLock(s *Store, index uint64, op, path, lockID string, now int64, v *structs.VariableEncrypted) (*structs.VarApplyResult, error) {
	if v == nil {
		v = &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: path}}
	}
	var res *structs.VarApplyResult
	err := s.update(index, func(txn *WriteTxn) error {
		var err error
		res, err = s.VarLockTxn(txn, &structs.VarLockRequest{Op: op, Var: v, LockID: lockID, Now: now * int64(time.Second)})
		return err
	})
	return res, err
}

func lockedVar(path, id string, ttl, delay time.Duration) *structs.VariableEncrypted {
	v := sealedVar("default", path, "k1")
	v.Lock = &structs.VariableLock{ID: id, TTL: ttl, LockDelay: delay}
	return v
}

// TestVarLockLifecycle walks a lock through Nomad's operations on the
// leader's clock (seconds, as Now): acquire, a holder's write, others
// refused, renewal within the TTL (the variable's ModifyIndex kept),
// renewal after it refused, the leader's release only once lease and
// delay have passed, and then another caller's acquire.
func TestVarLockLifecycle(t *testing.T) {
	s := newStore(t)
	upsertKey(t, s, 1, testRootKey("k1", structs.RootKeyStateActive), true)
	applyVar(t, s, 2, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealedVar("default", "a", "k1")})

	res, err := varLock(s, 3, structs.VarLockOpAcquire, "a", "L1", 100, lockedVar("a", "L1", 10*time.Second, 5*time.Second))
	if err != nil || res.Conflicted || res.Written.ModifyIndex != 3 || res.Written.CreateIndex != 2 {
		t.Fatalf("acquire: %+v %v", res, err)
	}
	if got := res.Written.LockExpires; got != 110*int64(time.Second) {
		t.Fatalf("lease until %d, want 110 s", got)
	}

	// Another ID can neither acquire nor write nor delete.
	if res, err := varLock(s, 4, structs.VarLockOpAcquire, "a", "L2", 101, lockedVar("a", "L2", 10*time.Second, 0)); err != nil || !res.Conflicted || res.Conflict.KeyID != "" {
		t.Fatalf("second acquire: %+v %v", res, err)
	}
	if res := applyVar(t, s, 5, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealedVar("default", "a", "k1")}); !res.Conflicted {
		t.Fatalf("write without the lock: %+v", res)
	}
	if res := applyVar(t, s, 6, &structs.VarApplyRequest{Op: structs.VarOpDelete, Var: sealedVar("default", "a", "k1")}); !res.Conflicted {
		t.Fatalf("delete without the lock: %+v", res)
	}
	// The holder writes, and the lock stays.
	w := sealedVar("default", "a", "k1")
	w.Lock = &structs.VariableLock{ID: "L1"}
	if res := applyVar(t, s, 7, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: w}); res.Conflicted || res.Written.Lock == nil || res.Written.Lock.TTL != 10*time.Second || res.Written.LockExpires != 110*int64(time.Second) {
		t.Fatalf("holder's write: %+v", res)
	}

	// Renewal within the TTL moves the lease, not the ModifyIndex.
	res, err = varLock(s, 8, structs.VarLockOpRenew, "a", "L1", 105, nil)
	if err != nil || res.Written.ModifyIndex != 7 || res.Written.LockExpires != 115*int64(time.Second) {
		t.Fatalf("renew: %+v %v", res, err)
	}
	if _, err := varLock(s, 9, structs.VarLockOpRenew, "a", "L2", 106, nil); !errors.Is(err, ErrVarLocked) || !errors.Is(err, ErrConflict) {
		t.Fatalf("renew by another: %v", err)
	}
	if _, err := varLock(s, 9, structs.VarLockOpRenew, "a", "L1", 115, nil); !errors.Is(err, ErrVarLocked) {
		t.Fatalf("renew after the lease: %v", err)
	}

	// The leader's release: a no-op before lease + delay (120 s), and
	// for another ID; then the lock goes and the items stay.
	for _, c := range []struct {
		id  string
		now int64
	}{{"L1", 119}, {"L2", 130}} {
		if _, err := varLock(s, 10, structs.VarLockOpExpire, "a", c.id, c.now, nil); err != nil {
			t.Fatal(err)
		}
		if v, _ := s.Snapshot().VarGet("default", "a"); v.Lock == nil {
			t.Fatalf("expire %s at %d released the lock", c.id, c.now)
		}
	}
	if lv, _ := s.Snapshot().LockedVars(); len(lv) != 1 {
		t.Fatalf("locked vars: %d", len(lv))
	}
	if _, err := varLock(s, 11, structs.VarLockOpExpire, "a", "L1", 120, nil); err != nil {
		t.Fatal(err)
	}
	v, _ := s.Snapshot().VarGet("default", "a")
	if v.Lock != nil || v.LockExpires != 0 || v.ModifyIndex != 11 || string(v.Data) != "sealed:a" {
		t.Fatalf("after expiry: %+v", v)
	}
	if lv, _ := s.Snapshot().LockedVars(); len(lv) != 0 {
		t.Fatalf("locked vars after expiry: %d", len(lv))
	}
	if res, err := varLock(s, 12, structs.VarLockOpAcquire, "a", "L2", 121, lockedVar("a", "L2", 10*time.Second, 0)); err != nil || res.Conflicted {
		t.Fatalf("acquire after expiry: %+v %v", res, err)
	}
}

func TestVarLockRelease(t *testing.T) {
	s := newStore(t)
	upsertKey(t, s, 1, testRootKey("k1", structs.RootKeyStateActive), true)
	if _, err := varLock(s, 2, structs.VarLockOpRelease, "a", "L1", 1, nil); !errors.Is(err, ErrVarNotFound) || !errors.Is(err, ErrNotFound) {
		t.Fatalf("release of an absent variable: %v", err)
	}
	applyVar(t, s, 3, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealedVar("default", "a", "k1")})
	if _, err := varLock(s, 4, structs.VarLockOpRelease, "a", "L1", 1, nil); !errors.Is(err, ErrVarLockNotHeld) {
		t.Fatalf("release of an unlocked variable: %v", err)
	}
	if _, err := varLock(s, 5, structs.VarLockOpAcquire, "a", "L1", 1, lockedVar("a", "L1", 10*time.Second, time.Second)); err != nil {
		t.Fatal(err)
	}
	if res, err := varLock(s, 6, structs.VarLockOpRelease, "a", "L2", 2, nil); err != nil || !res.Conflicted || res.Conflict.Lock == nil || res.Conflict.Lock.ID != "" {
		t.Fatalf("release by another: %+v %v", res, err)
	}
	res, err := varLock(s, 7, structs.VarLockOpRelease, "a", "L1", 2, nil)
	if err != nil || res.Written.Lock != nil || res.Written.ModifyIndex != 7 || string(res.Written.Data) != "sealed:a" {
		t.Fatalf("release: %+v %v", res, err)
	}
	// Unlocked, anyone writes again.
	if res := applyVar(t, s, 8, &structs.VarApplyRequest{Op: structs.VarOpSet, Var: sealedVar("default", "a", "k1")}); res.Conflicted {
		t.Fatalf("write after release: %+v", res)
	}
}

func TestVarLockRefusesBadRequests(t *testing.T) {
	s := newStore(t)
	upsertKey(t, s, 1, testRootKey("k1", structs.RootKeyStateActive), true)
	for name, v := range map[string]*structs.VariableEncrypted{
		"no lock":    sealedVar("default", "a", "k1"),
		"no lock ID": lockedVar("a", "", 10*time.Second, 0),
		"no TTL":     lockedVar("a", "L", 0, 0),
		"no items":   {VariableMetadata: structs.VariableMetadata{Namespace: "default", Path: "a", Lock: &structs.VariableLock{ID: "L", TTL: time.Minute}}},
		"no path":    {VariableMetadata: structs.VariableMetadata{Namespace: "default"}},
	} {
		if _, err := varLock(s, 2, structs.VarLockOpAcquire, "a", "L", 1, v); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := varLock(s, 2, "lock-steal", "a", "L", 1, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown op: %v", err)
	}
}
