package server

import (
	"context"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// aclTokenGCThreshold is how long an expired token is kept before the
// leader deletes it, Nomad's acl_token_gc_threshold default: until then
// it is listed, and refused as "ACL token expired".
const aclTokenGCThreshold = time.Hour

// aclTokenGCBatch bounds the tokens one log entry deletes.
const aclTokenGCBatch = 256

// aclTokenGCRetry is how long the collector waits after a failed pass.
const aclTokenGCRetry = 5 * time.Second

// runACLTokenGC deletes, for one term, the ACL tokens that expired more
// than aclTokenGCThreshold ago (logins' tokens all expire): each pass
// reads the tokens, deletes those due at the leader's clock
// (dueExpiredTokens), and sleeps until the tokens change or the next one
// is due. The expiration times are in the replicated state, so a new
// leader deletes a token when the old one would have.
func (l *Leader) runACLTokenGC(t *term) {
	log := l.logger.Named("acl_gc")
	for {
		ws := memdb.NewWatchSet()
		wake, err := l.aclTokenGCPass(t.ctx, ws)
		if t.ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Error("expired token pass", "error", err)
			wake = l.clock.Now().Add(aclTokenGCRetry)
		}
		if !l.drainWait(t.ctx, ws, wake) {
			return
		}
	}
}

// aclTokenGCPass deletes the tokens due now and answers when the next
// one is due (zero for none).
func (l *Leader) aclTokenGCPass(ctx context.Context, ws memdb.WatchSet) (time.Time, error) {
	store := l.store()
	ws.Add(store.AbandonCh())
	toks, err := store.Snapshot().WithWatch(ws).ACLTokens()
	if err != nil {
		return time.Time{}, err
	}
	due, wake := dueExpiredTokens(toks, l.clock.Now(), aclTokenGCThreshold)
	for len(due) > 0 {
		n := min(len(due), aclTokenGCBatch)
		if _, _, err := l.apply(ctx, fsm.ACLTokenDeleteRequestType, &structs.ACLTokenDeleteRequest{AccessorIDs: due[:n]}); err != nil {
			return time.Time{}, err
		}
		due = due[n:]
	}
	return wake, nil
}

// dueExpiredTokens returns the accessors of the tokens that expired more
// than threshold before now, and when the next one will be (zero for
// none).
func dueExpiredTokens(toks []*structs.ACLToken, now time.Time, threshold time.Duration) (due []string, wake time.Time) {
	for _, tok := range toks {
		if tok.ExpirationTime == nil {
			continue
		}
		at := tok.ExpirationTime.Add(threshold)
		if !now.Before(at) {
			due = append(due, tok.AccessorID)
			continue
		}
		if wake.IsZero() || at.Before(wake) {
			wake = at
		}
	}
	return due, wake
}
