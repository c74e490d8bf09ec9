package structs

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Variable locks, as Nomad's: a variable may hold one lock, whose holder
// (the caller that knows its ID) alone may write, delete or release the
// variable, and which lasts as long as the holder renews it within its
// TTL. A lock that is not renewed in time is released by the leader
// LockDelay after it ran out, so that a holder that lost it (a partition,
// a pause) has that long to notice before another caller may take it.

// Nomad's bounds and defaults of a lock.
const (
	MinVariableLockTTL       = 10 * time.Second
	MaxVariableLockTTL       = 24 * time.Hour
	DefaultVariableLockTTL   = 15 * time.Second
	DefaultVariableLockDelay = 15 * time.Second
)

// VariableLock is a variable's lock (api.VariableLock): ID names the
// holder; TTL and LockDelay are Nomad's duration strings ("15s") in JSON.
type VariableLock struct {
	ID        string
	TTL       time.Duration
	LockDelay time.Duration
}

// Copy returns a copy of l (nil for nil).
func (l *VariableLock) Copy() *VariableLock {
	if l == nil {
		return nil
	}
	c := *l
	return &c
}

// Canonicalize fills Nomad's defaults: the TTL and delay of 15 s.
func (l *VariableLock) Canonicalize() {
	if l.TTL == 0 {
		l.TTL = DefaultVariableLockTTL
	}
	if l.LockDelay == 0 {
		l.LockDelay = DefaultVariableLockDelay
	}
}

// Validate checks the durations as Nomad's: neither negative, the TTL
// between 10 s and 24 h. The error names the fields.
func (l *VariableLock) Validate() error {
	var errs []error
	if l.TTL < 0 || l.LockDelay < 0 {
		errs = append(errs, errors.New("Lock: LockDelay and TTL must be positive"))
	}
	if l.TTL < MinVariableLockTTL || l.TTL > MaxVariableLockTTL {
		errs = append(errs, fmt.Errorf("Lock: TTL %s must be between %s and %s", l.TTL, MinVariableLockTTL, MaxVariableLockTTL))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrVariableInvalid, errors.Join(errs...))
	}
	return nil
}

// MarshalJSON writes the durations as Nomad's strings ("" for zero).
func (l VariableLock) MarshalJSON() ([]byte, error) {
	d := func(v time.Duration) string {
		if v == 0 {
			return ""
		}
		return v.String()
	}
	return json.Marshal(struct{ ID, TTL, LockDelay string }{l.ID, d(l.TTL), d(l.LockDelay)})
}

// UnmarshalJSON reads the durations as strings ("15s") or numbers of
// nanoseconds, as Nomad's.
func (l *VariableLock) UnmarshalJSON(b []byte) error {
	var aux struct {
		ID             string
		TTL, LockDelay any
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	l.ID = aux.ID
	for _, f := range []struct {
		name string
		in   any
		out  *time.Duration
	}{{"TTL", aux.TTL, &l.TTL}, {"LockDelay", aux.LockDelay, &l.LockDelay}} {
		switch v := f.in.(type) {
		case nil:
		case string:
			if v == "" {
				continue
			}
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("Lock.%s: %w", f.name, err)
			}
			*f.out = d
		case float64:
			*f.out = time.Duration(v)
		default:
			return fmt.Errorf("Lock.%s: want a duration, got %T", f.name, v)
		}
	}
	return nil
}

// Variable lock operations of a VarLockRequest (the HTTP API's
// ?lock-acquire, ?lock-renew and ?lock-release, and the leader's release
// of a lock that ran out).
const (
	VarLockOpAcquire = "lock-acquire"
	VarLockOpRenew   = "lock-renew"
	VarLockOpRelease = "lock-release"
	VarLockOpExpire  = "lock-expire"
)

// VarLockRequest is one lock operation on the variable Var names
// (Namespace and Path), stamped by the leader with Now (Unix
// nanoseconds):
//
//   - acquire: Var carries the sealed items, the times and the Lock (ID,
//     TTL, LockDelay); the variable is written with the lock, its lease
//     running until Now + TTL.
//   - renew: the lock LockID holds is extended to Now + TTL, if it has not
//     run out; the variable itself (its ModifyIndex) does not change.
//   - release: the lock LockID holds is removed; the items stay.
//   - expire: the leader's release of the lock LockID once its lease and
//     delay have passed at Now; a no-op when the lock is another by then,
//     or was renewed.
type VarLockRequest struct {
	Op     string
	Var    *VariableEncrypted
	LockID string
	Now    int64
}

// VariableLockRelease is when a variable's lock is released by the leader:
// the end of its lease plus its delay (0 when the variable holds none).
func (v *VariableEncrypted) VariableLockRelease() int64 {
	if v.Lock == nil || v.LockExpires == 0 {
		return 0
	}
	return v.LockExpires + int64(v.Lock.LockDelay)
}
