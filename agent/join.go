package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/structs"
)

// ErrNotServer: a join address answered, but not as a drover server.
var ErrNotServer = errors.New("not a drover server")

// Discovery rounds: fast until this server has Raft state, then slow (to
// keep HTTP addresses fresh and to be added back by a new leader).
const (
	formingInterval = 300 * time.Millisecond
	formedInterval  = 3 * time.Second
	joinTimeout     = 2 * time.Second
)

// discover exchanges member lists with the -retry-join addresses and every
// server learned of, and bootstraps once BootstrapExpect servers agree.
//
// Bootstrap rule: every server of a new cluster calls BootstrapCluster with
// the same configuration (all BootstrapExpect servers, as voters), which
// Raft accepts as one cluster. A server bootstraps only when (1) it has no
// Raft state, (2) it knows exactly BootstrapExpect servers, (3) each of the
// others answered it in this round, reporting the very same set of servers
// and no Raft state. Any server that reports Raft state disables bootstrap:
// the cluster exists, and its leader adds a newcomer that announces itself
// (a signed join, see httpapi's access.go) as a non-voter, which autopilot
// promotes once it has caught up (see package autopilot). So the
// configurations cannot differ, and a restarted server never bootstraps.
// The alternative, only the lowest ID bootstrapping, makes one server a
// single point of failure during formation.
func (a *Agent) discover(ctx context.Context) {
	errLogged := map[string]string{}
	for {
		formed := a.joinRound(ctx, errLogged)
		interval := formedInterval
		if !formed {
			interval = formingInterval
		}
		jitter := time.Duration(rand.Int64N(int64(interval) / 4))
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval + jitter):
		}
	}
}

// joinRound runs one exchange and reports whether this server has Raft
// state.
func (a *Agent) joinRound(ctx context.Context, errLogged map[string]string) bool {
	answers := map[string]*structs.ServerJoinResponse{}
	for _, addr := range a.joinTargets() {
		resp, err := a.JoinServer(ctx, addr)
		if err != nil {
			// Log each distinct failure of an address once.
			if errLogged[addr] != err.Error() {
				a.logger.Warn("join failed", "address", addr, "error", err)
				errLogged[addr] = err.Error()
			}
			continue
		}
		delete(errLogged, addr)
		if a.fed.Foreign(resp.Self) {
			// A server of another region (federation.go) has no say in
			// this region's bootstrap.
			continue
		}
		answers[resp.Self.ID] = resp
	}
	has, err := a.raft.HasState()
	if err != nil || has {
		return has
	}
	a.maybeBootstrap(answers)
	has, _ = a.raft.HasState()
	return has
}

// joinTargets are the retry-join addresses and the HTTP addresses of known
// members, without this server.
func (a *Agent) joinTargets() []string {
	seen := map[string]bool{a.HTTPAddr(): true, a.advertiseHTTP(): true}
	var out []string
	add := func(addr string) {
		addr = strings.TrimPrefix(strings.TrimPrefix(addr, "http://"), "https://")
		if !seen[addr] {
			seen[addr] = true
			out = append(out, addr)
		}
	}
	for _, addr := range a.cfg.RetryJoin {
		add(addr)
	}
	for _, m := range a.members.list() {
		add(m.HTTPAddr)
	}
	return out
}

// JoinServer announces this server to the server at addr (host:port) and
// records what it answers. A server that is not drover's answers with
// ErrNotServer.
func (a *Agent) JoinServer(ctx context.Context, addr string) (*structs.ServerJoinResponse, error) {
	return a.joinServerIn(ctx, addr, a.cfg.Region)
}

// joinServerIn is JoinServer for a server of region, whose certificate
// must name it with verify_server_hostname ("": of any region, for an
// address whose region is not known yet; federation.go).
func (a *Agent) joinServerIn(ctx context.Context, addr, region string) (*structs.ServerJoinResponse, error) {
	c, err := a.federationClient(addr, region)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, joinTimeout)
	defer cancel()
	resp, err := c.Join(ctx, &structs.ServerJoinRequest{Self: a.members.self, Known: a.members.list(),
		Federation: a.federationList()}, a.cfg.JoinToken)
	var se *apiclient.StatusError
	switch {
	case errors.As(err, &se) && (se.Code == 404 || se.Code == 405):
		return nil, fmt.Errorf("%s: %w (no join endpoint: %w)", addr, ErrNotServer, err)
	case errors.Is(err, apiclient.ErrUnexpectedResponse):
		return nil, fmt.Errorf("%s: %w: %w", addr, ErrNotServer, err)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", addr, err)
	case resp.Self.ID == "" || resp.Self.RaftAddr == "":
		return nil, fmt.Errorf("%s: %w: the answer names no server ID or Raft address", addr, ErrNotServer)
	case resp.Self.ID == a.raft.ID():
		return nil, fmt.Errorf("%s: this is the server itself", addr)
	}
	a.fed.Learn(resp.Federation, time.Now())
	if a.fed.Foreign(resp.Self) {
		// A server of another region: federated, never a member
		// (federation.go).
		a.fed.LearnDirect(resp.Self, time.Now())
		return resp, nil
	}
	// A server forced out and joined again by address is let back
	// (force_leave.go).
	a.left.clear(resp.Self.ID)
	a.members.learnDirect(resp.Self)
	a.members.learnIndirect(resp.Known)
	return resp, nil
}

// maybeBootstrap applies the bootstrap rule of discover to this round's
// answers.
func (a *Agent) maybeBootstrap(answers map[string]*structs.ServerJoinResponse) {
	expect := a.cfg.BootstrapExpect
	if expect <= 0 {
		return
	}
	for _, resp := range answers {
		if resp.Bootstrapped {
			a.logger.Debug("a peer already has Raft state; waiting to be added by the leader", "peer", resp.Self.ID)
			return
		}
	}
	known := a.members.list()
	if len(known) < expect {
		return
	}
	if len(known) > expect {
		a.logger.Error("more servers known than -bootstrap-expect; not bootstrapping", "known", len(known), "expect", expect)
		return
	}
	ids := memberIDs(known)
	for _, m := range known {
		if m.ID == a.raft.ID() {
			continue
		}
		resp, ok := answers[m.ID]
		if !ok || !slices.Equal(memberIDs(resp.Known), ids) {
			return
		}
	}
	peers := make([]cluster.Peer, 0, len(known))
	for _, m := range known {
		peers = append(peers, cluster.Peer{ID: m.ID, Address: m.RaftAddr, Voter: true})
	}
	err := a.raft.Bootstrap(peers)
	switch {
	case err == nil:
		a.logger.Info("bootstrapped the cluster", "servers", len(peers))
	case errors.Is(err, cluster.ErrAlreadyBootstrapped):
	default:
		a.logger.Error("bootstrap failed", "error", err)
	}
}

func memberIDs(ms []structs.ServerMember) []string {
	ids := make([]string, 0, len(ms))
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return ids
}
