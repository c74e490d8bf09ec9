package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/internal/keyring"
)

// The node's identity: a JWT the servers sign for the node (see
// httpapi/node_identity.go). The agent asks for one once the node has
// registered, keeps it in memory, and asks for a new one once two thirds
// of its life have passed (keyring.RenewAt), or at once when an operator
// asks (PUT /v1/client/identity/renew). A failed request is retried with
// backoff; the identity in hand is kept meanwhile.

// nodeIdentityAPI is the optional part of a ServerAPI that gives node
// identities; a ServerAPI without it leaves the node without one.
type nodeIdentityAPI interface {
	NodeIdentity(ctx context.Context, nodeID string) (string, error)
}

// ErrNoNodeIdentity: the node has no identity (yet).
var ErrNoNodeIdentity = errors.New("node does not have a JWT identity token")

// NodeIdentity implements nodeIdentityAPI.
func (h *HTTPServers) NodeIdentity(ctx context.Context, nodeID string) (string, error) {
	r, err := h.nc.NodeIdentity(ctx, nodeID)
	if err != nil {
		return "", err
	}
	return r.JWT, nil
}

// NodeIdentity implements nodeIdentityAPI, as the node.
func (n nodeAuth) NodeIdentity(ctx context.Context, nodeID string) (string, error) {
	api, ok := n.api.(nodeIdentityAPI)
	if !ok {
		return "", fmt.Errorf("%w: the servers' API gives no node identities", ErrInvalidConfig)
	}
	return api.NodeIdentity(n.ctx(ctx), nodeID)
}

// identityKeeper holds the node's identity and renews it.
type identityKeeper struct {
	fetch  func(ctx context.Context) (string, error)
	clock  clock.Clock
	logger hclog.Logger
	retry  time.Duration // the first retry's delay

	renew chan struct{} // capacity 1: a renewal asked for
	ready chan struct{} // closed once the first identity is in hand

	mu    sync.Mutex
	token string
}

func newIdentityKeeper(fetch func(context.Context) (string, error), c clock.Clock, logger hclog.Logger, retry time.Duration) *identityKeeper {
	if retry <= 0 {
		retry = time.Second
	}
	return &identityKeeper{fetch: fetch, clock: c, logger: logger, retry: retry, renew: make(chan struct{}, 1), ready: make(chan struct{})}
}

// Token returns the identity in hand ("" for none).
func (k *identityKeeper) Token() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.token
}

// Renew asks for a new identity now.
func (k *identityKeeper) Renew() {
	select {
	case k.renew <- struct{}{}:
	default:
	}
}

// Claims returns the claims of the identity in hand, unverified (the
// node got it from the servers): what GET /v1/client/identity answers.
func (k *identityKeeper) Claims() (map[string]any, error) {
	tok := k.Token()
	if tok == "" {
		return nil, ErrNoNodeIdentity
	}
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(tok, claims); err != nil {
		return nil, fmt.Errorf("parsing the node identity: %w", err)
	}
	return claims, nil
}

// renewAfter is how long after now the identity tok is renewed.
func renewAfter(tok string, now time.Time) (time.Duration, error) {
	var c keyring.NodeIdentityClaims
	if _, _, err := jwt.NewParser().ParseUnverified(tok, &c); err != nil {
		return 0, fmt.Errorf("parsing the node identity: %w", err)
	}
	if c.ExpiresAt == nil {
		return -1, nil // never expires
	}
	iat := now
	if c.IssuedAt != nil {
		iat = c.IssuedAt.Time
	}
	return max(keyring.RenewAt(iat, c.ExpiresAt.Time).Sub(now), 0), nil
}

// run fetches the identity once registered has closed, then renews it
// until ctx ends.
func (k *identityKeeper) run(ctx context.Context, registered <-chan struct{}) {
	select {
	case <-ctx.Done():
		return
	case <-registered:
	}
	backoff := k.retry
	for {
		var wait time.Duration = -1
		tok, err := k.fetch(ctx)
		if err == nil {
			wait, err = renewAfter(tok, k.clock.Now())
		}
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			k.logger.Warn("getting the node identity failed; retrying", "error", err, "in", backoff)
			wait = jitter(backoff)
			backoff = min(2*backoff, MaxRetryInterval)
		default:
			k.mu.Lock()
			if k.token == "" {
				close(k.ready)
			}
			k.token = tok
			k.mu.Unlock()
			backoff = k.retry
			k.logger.Debug("node identity renewed", "renew_in", wait)
		}
		if !k.wait(ctx, wait) {
			return
		}
	}
}

// wait waits d (forever when d < 0) or until a renewal is asked for;
// false when ctx ended.
func (k *identityKeeper) wait(ctx context.Context, d time.Duration) bool {
	var fire <-chan time.Time
	if d >= 0 {
		t := k.clock.NewTimer(d)
		defer t.Stop()
		fire = t.C()
	}
	select {
	case <-ctx.Done():
		return false
	case <-fire:
	case <-k.renew:
	}
	return true
}

// NodeIdentityClaims returns the claims of the node's identity.
func (a *Agent) NodeIdentityClaims() (map[string]any, error) {
	return a.identity.Claims()
}

// WaitNodeIdentity waits until the node has an identity, at most until
// ctx ends; false when it has none.
func (a *Agent) WaitNodeIdentity(ctx context.Context) bool {
	select {
	case <-a.identity.ready:
		return true
	case <-ctx.Done():
		return false
	}
}

// RenewNodeIdentity asks the servers for a new identity of the node now.
func (a *Agent) RenewNodeIdentity() { a.identity.Renew() }

// newNodeIdentity returns the agent's identity keeper; it fetches nothing
// (fetch nil) when the servers' API gives no node identities.
func newNodeIdentity(a *Agent, raw ServerAPI) *identityKeeper {
	var fetch func(context.Context) (string, error)
	if _, ok := raw.(nodeIdentityAPI); ok {
		api := a.api.(nodeIdentityAPI)
		fetch = func(ctx context.Context) (string, error) { return api.NodeIdentity(ctx, a.node.ID) }
	}
	return newIdentityKeeper(fetch, a.clock, a.logger.Named("identity"), a.cfg.RetryInterval)
}

// introduce makes a registration present the client introduction token
// (Config.IntroToken), when there is one.
func (a *Agent) introduce(ctx context.Context) context.Context {
	if a.cfg.IntroToken == "" {
		return ctx
	}
	return apiclient.WithIntroToken(ctx, a.cfg.IntroToken)
}
