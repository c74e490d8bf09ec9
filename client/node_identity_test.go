package client

import (
	"context"
	"crypto/rand"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/internal/keyring"
	"github.com/droverhq/drover/structs"
)

// waitIdentity polls cond (real time, bounded) until it holds.
func waitIdentity(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// The keeper gets the identity once the node registered, renews it when
// two thirds of its TTL have passed (fake clock), at once when asked, and
// retries a failed request while keeping the identity in hand.
func TestIdentityKeeper_Renewal(t *testing.T) {
	key, err := keyring.NewRootKey("k1", time.Unix(0, 0), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	fc := clock.NewFake(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	node := &structs.Node{ID: "n1", Datacenter: "dc1", NodePool: "default"}
	var calls atomic.Int32
	var fail atomic.Bool
	fetch := func(context.Context) (string, error) {
		calls.Add(1)
		if fail.Load() {
			return "", errors.New("servers unreachable")
		}
		return keyring.SignNodeIdentity(key, keyring.NewNodeIdentityClaims(node, "global", structs.GenerateUUID(), fc.Now(), 24*time.Hour))
	}
	k := newIdentityKeeper(fetch, fc, hclog.NewNullLogger(), time.Second)
	if _, err := k.Claims(); !errors.Is(err, ErrNoNodeIdentity) {
		t.Fatalf("before: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	registered := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); k.run(ctx, registered) }()
	defer func() { cancel(); <-done }()

	if calls.Load() != 0 {
		t.Fatal("fetched before the node registered")
	}
	close(registered)
	waitIdentity(t, "the first identity", func() bool { return fc.Pending() == 1 && k.Token() != "" })
	c, err := k.Claims()
	if err != nil || c["nomad_node_id"] != "n1" || len(c) != 9 {
		t.Fatalf("claims = %v, %v", c, err)
	}
	first := k.Token()

	fc.Advance(16*time.Hour - time.Minute)
	time.Sleep(10 * time.Millisecond)
	if calls.Load() != 1 {
		t.Fatalf("renewed too early: %d calls", calls.Load())
	}
	fc.Advance(time.Minute) // two thirds of 24h
	waitIdentity(t, "the renewal", func() bool { return calls.Load() == 2 && fc.Pending() == 1 })
	if k.Token() == first {
		t.Fatal("identity not replaced")
	}

	// Asked to renew: at once; a failure keeps the identity and retries.
	fail.Store(true)
	second := k.Token()
	k.Renew()
	waitIdentity(t, "the forced renewal", func() bool { return calls.Load() == 3 && fc.Pending() == 1 })
	if k.Token() != second {
		t.Fatal("a failed renewal dropped the identity")
	}
	fail.Store(false)
	fc.Advance(time.Second)
	waitIdentity(t, "the retry", func() bool { return calls.Load() == 4 && fc.Pending() == 1 && k.Token() != second })
}

func TestRenewAfter(t *testing.T) {
	key, err := keyring.NewRootKey("k1", time.Unix(0, 0), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_000_000, 0)
	node := &structs.Node{ID: "n1", Datacenter: "dc1"}
	tok, _ := keyring.SignNodeIdentity(key, keyring.NewNodeIdentityClaims(node, "global", "j", now, 3*time.Hour))
	if d, err := renewAfter(tok, now.Add(time.Hour)); err != nil || d != time.Hour {
		t.Fatalf("renewAfter = %v, %v", d, err)
	}
	if d, _ := renewAfter(tok, now.Add(5*time.Hour)); d != 0 {
		t.Fatalf("past due: %v", d)
	}
	never, _ := keyring.SignNodeIdentity(key, keyring.NewNodeIdentityClaims(node, "global", "j", now, 0))
	if d, _ := renewAfter(never, now); d >= 0 {
		t.Fatalf("no expiry: %v", d)
	}
	if _, err := renewAfter("garbage", now); err == nil {
		t.Fatal("garbage parsed")
	}
}
