package server

import (
	"context"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// varLockRetry is how long the lock releaser waits after a failed pass.
const varLockRetry = 5 * time.Second

// runVarLocks releases, for one term, the variable locks whose holders
// stopped renewing them: each pass reads the locked variables, releases
// those whose lease and delay have passed at the leader's clock
// (dueVarLocks), and sleeps until the variables change or the next
// release comes. The deadlines are in the replicated state (each
// variable's LockExpires, renewed through the log), so a new leader
// releases a lock when the old one would have.
func (l *Leader) runVarLocks(t *term) {
	log := l.logger.Named("varlocks")
	for {
		ws := memdb.NewWatchSet()
		wake, err := l.varLockPass(t.ctx, ws)
		if t.ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Error("variable lock pass", "error", err)
			wake = l.clock.Now().Add(varLockRetry)
		}
		if !l.drainWait(t.ctx, ws, wake) {
			return
		}
	}
}

// varLockPass releases the locks due now and answers when the next one
// is due (zero for none).
func (l *Leader) varLockPass(ctx context.Context, ws memdb.WatchSet) (time.Time, error) {
	store := l.store()
	ws.Add(store.AbandonCh())
	vars, err := store.Snapshot().WithWatch(ws).LockedVars()
	if err != nil {
		return time.Time{}, err
	}
	now := l.clock.Now()
	due, wake := dueVarLocks(vars, now)
	for _, v := range due {
		req := &structs.VarLockRequest{Op: structs.VarLockOpExpire, LockID: v.Lock.ID, Now: now.UnixNano(),
			Var: &structs.VariableEncrypted{VariableMetadata: structs.VariableMetadata{Namespace: v.Namespace, Path: v.Path}}}
		if _, _, err := l.apply(ctx, fsm.VarLockRequestType, req); err != nil {
			return time.Time{}, err
		}
	}
	return wake, nil
}

// dueVarLocks splits the locked variables into those whose lock is due
// for release at now (lease and delay passed) and the instant the next
// of the others is (zero when none).
func dueVarLocks(vars []*structs.VariableEncrypted, now time.Time) (due []*structs.VariableEncrypted, wake time.Time) {
	for _, v := range vars {
		at := v.VariableLockRelease()
		if v.Lock == nil || at == 0 {
			continue
		}
		if now.UnixNano() >= at {
			due = append(due, v)
			continue
		}
		if t := time.Unix(0, at); wake.IsZero() || t.Before(wake) {
			wake = t
		}
	}
	return due, wake
}
