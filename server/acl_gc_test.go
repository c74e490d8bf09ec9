package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// Tokens are deleted an hour after they expire; the collector wakes for
// the next one due; tokens without an expiry are never due.
func TestDueExpiredTokens(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	toks := []*structs.ACLToken{
		{AccessorID: "forever"},
		{AccessorID: "long-gone", ExpirationTime: at(-2 * time.Hour)},
		{AccessorID: "just-due", ExpirationTime: at(-time.Hour)},
		{AccessorID: "recent", ExpirationTime: at(-10 * time.Minute)},
		{AccessorID: "live", ExpirationTime: at(time.Minute)},
	}
	due, wake := dueExpiredTokens(toks, now, time.Hour)
	if !slices.Equal(due, []string{"long-gone", "just-due"}) {
		t.Errorf("due: %v", due)
	}
	if !wake.Equal(now.Add(50 * time.Minute)) {
		t.Errorf("wake: %v, want in 50 minutes", wake)
	}
	if due, wake := dueExpiredTokens(toks[:1], now, time.Hour); len(due) != 0 || !wake.IsZero() {
		t.Errorf("a token without expiry: %v %v", due, wake)
	}
}

// The leader deletes a token an hour after it expired, and not before;
// a new term picks the deadline up from the replicated state.
func TestLeaderDeletesExpiredTokens(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	exp := h.clock.Now().Add(time.Minute)
	if _, _, err := h.raft.Apply(ctx, fsm.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{
		{AccessorID: "short", SecretHash: structs.HashSecret("s1"), Type: structs.ACLTokenTypeClient, Policies: []string{"p"}, ExpirationTime: &exp},
		{AccessorID: "forever", SecretHash: structs.HashSecret("s2"), Type: structs.ACLTokenTypeClient, Policies: []string{"p"}},
	}}); err != nil {
		t.Fatal(err)
	}
	present := func(s *state.Snapshot, id string) bool {
		tok, _ := s.ACLTokenByAccessor(id)
		return tok != nil
	}
	h.start()
	h.clock.Advance(30 * time.Minute) // expired, within the threshold
	h.stop()
	if !present(h.store().Snapshot(), "short") {
		t.Fatal("deleted within the threshold")
	}
	h.clock.Advance(31 * time.Minute)
	h.start()
	h.waitFor("the expired token's deletion", func(s *state.Snapshot) bool { return !present(s, "short") })
	if !present(h.store().Snapshot(), "forever") {
		t.Fatal("a token without expiry was deleted")
	}
}
