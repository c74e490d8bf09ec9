package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/server"
	"github.com/droverhq/drover/structs"
	"github.com/droverhq/drover/tlsutil"
)

// Federation: the servers of several regions join over the same exchange
// as the servers of one region (POST /v1/internal/join, signed with the
// join token, which federated regions share). A server of another region
// is never a member of this region's Raft: it lands in the federation view
// (cluster.Federation), which each server keeps current by exchanging with
// every server of the other regions it knows every few seconds, and by
// passing on what it knows, with ages, in every exchange, its own region's
// included. A server nobody hears from for the federation TTL drops out.
//
// Requests for another region are forwarded to one of its servers
// (httpapi/regions.go); ACL policies, roles, auth methods, binding rules,
// global tokens, namespaces and node pools replicate from the
// authoritative region (server/replication.go).

var _ httpapi.Federator = (*Agent)(nil)

// LocalRegion is this server's region (httpapi.Federator).
func (a *Agent) LocalRegion() string { return a.cfg.Region }

// Regions lists this region and every other region with a known server,
// sorted (httpapi.Federator).
func (a *Agent) Regions() []string {
	return sortedUnique(append(a.fed.Regions(), a.cfg.Region))
}

// RegionServers lists the known servers of another region, freshest first,
// and, when none is known, whether the region was known once
// (httpapi.Federator).
func (a *Agent) RegionServers(region string) (servers []structs.ServerMember, gone bool) {
	servers = a.fed.Servers(region)
	if len(servers) == 0 {
		_, gone = a.fed.Gone(region)
	}
	return servers, gone
}

// AuthoritativeRegion is server.authoritative_region, or this region when
// it is not set (httpapi.Federator).
func (a *Agent) AuthoritativeRegion() string {
	if a.cfg.AuthoritativeRegion != "" {
		return a.cfg.AuthoritativeRegion
	}
	return a.cfg.Region
}

// JoinAddresses announces this server to the server at each address (a
// server of this region or of another), as `drover server join` and
// POST /v1/agent/join ask, and returns how many answered; the error joins
// every failure. A server of this region joined so is exchanged with from
// then on, as a -retry-join address; one of another region federates the
// two regions.
func (a *Agent) JoinAddresses(ctx context.Context, addrs []string) (int, error) {
	var errs []error
	n := 0
	for _, addr := range addrs {
		addr = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(addr), "http://"), "https://")
		if addr == "" {
			continue
		}
		// Its region is not known yet: a server of any region of the CA.
		resp, err := a.joinServerIn(ctx, addr, "")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
		if a.fed.Foreign(resp.Self) {
			a.logger.Info("federated with a server of another region", "region", resp.Self.Region,
				"server", resp.Self.Name, "http", resp.Self.HTTPAddr)
		}
	}
	return n, errors.Join(errs...)
}

// federationList is what this server tells the others of the federation:
// the other regions' servers it knows, with their ages, and its own
// region's servers of the Raft configuration (as it knows it), with age 0.
func (a *Agent) federationList() []structs.FederatedServer {
	out := a.fed.List(time.Now())
	inConfig := map[string]bool{a.raft.ID(): true}
	if peers, _, err := a.raft.Configuration(); err == nil {
		for _, p := range peers {
			inConfig[p.ID] = true
		}
	}
	for _, m := range a.members.list() {
		if inConfig[m.ID] && !a.fed.Foreign(m) {
			if m.Region == "" {
				m.Region = a.cfg.Region
			}
			out = append(out, structs.FederatedServer{ServerMember: m})
		}
	}
	return out
}

// joinForeign answers the join of a server of another region: it is
// recorded in the federation view, never as a member nor a Raft peer.
func (a *Agent) joinForeign(req *structs.ServerJoinRequest) *structs.ServerJoinResponse {
	now := time.Now()
	a.fed.LearnDirect(req.Self, now)
	a.fed.Learn(req.Federation, now)
	_, leaderID := a.raft.Leader()
	has, _ := a.raft.HasState()
	return &structs.ServerJoinResponse{
		Self: a.members.self, Bootstrapped: has, LeaderID: leaderID, Federation: a.federationList(),
	}
}

// federate exchanges with every known server of the other regions, every
// few seconds, until ctx ends; servers unheard of for the TTL drop out.
func (a *Agent) federate(ctx context.Context) {
	errLogged := map[string]string{}
	var mu sync.Mutex
	for {
		jitter := time.Duration(rand.Int64N(int64(formedInterval) / 4))
		select {
		case <-ctx.Done():
			return
		case <-time.After(formedInterval + jitter):
		}
		for _, m := range a.fed.Expire(time.Now()) {
			a.logger.Warn("a server of another region was not heard from in time; dropped", "region", m.Region,
				"server", m.Name, "http", m.HTTPAddr)
		}
		var wg sync.WaitGroup
		for _, region := range a.fed.Regions() {
			for _, m := range a.fed.Servers(region) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := a.joinServerIn(ctx, m.HTTPAddr, m.Region)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						if errLogged[m.ID] != err.Error() {
							a.logger.Warn("exchange with a server of another region failed", "region", m.Region,
								"http", m.HTTPAddr, "error", err)
							errLogged[m.ID] = err.Error()
						}
						return
					}
					delete(errLogged, m.ID)
				}()
			}
		}
		wg.Wait()
	}
}

// otherRegion sends a request for another region there (the client
// endpoints, served beside the API: httpapi.ServeOtherRegion), and the
// others to next.
func (a *Agent) otherRegion(next http.Handler) http.Handler {
	if a.api == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.api.ServeOtherRegion(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// errNoRegion: a request named a region no server of this federation
// belongs to.
var errNoRegion = errors.New("no path to region")

// regionServer returns the HTTP address of a server of region, for the
// replication loop.
func (a *Agent) regionServer(region string) (string, error) {
	servers, _ := a.RegionServers(region)
	if len(servers) == 0 {
		return "", fmt.Errorf("%w %q: no server of it is known", errNoRegion, region)
	}
	return servers[rand.IntN(len(servers))].HTTPAddr, nil
}

func sortedUnique(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// aclReplicationWait is how long one replication read blocks on the
// authoritative region.
const aclReplicationWait = 30 * time.Second

// aclSource reads what the authoritative region replicates (its ACL
// objects, namespaces and node pools) from one of its servers, with the
// replication token (server.ACLSource).
type aclSource struct{ a *Agent }

func (s aclSource) ACLReplication(ctx context.Context, minIndex uint64) (*structs.ACLReplication, uint64, error) {
	region := s.a.AuthoritativeRegion()
	addr, err := s.a.regionServer(region)
	if err != nil {
		return nil, 0, err
	}
	c, err := s.a.federationClient(addr, region)
	if err != nil {
		return nil, 0, err
	}
	c.SetToken(s.a.cfg.ReplicationToken)
	ctx, cancel := context.WithTimeout(ctx, aclReplicationWait+10*time.Second)
	defer cancel()
	var out structs.ACLReplication
	qm, err := c.Get(ctx, "/v1/acl/replication",
		&apiclient.QueryOptions{WaitIndex: minIndex, WaitTime: aclReplicationWait, Params: map[string]string{"region": region}}, &out)
	if err != nil {
		return nil, 0, fmt.Errorf("reading region %q's ACLs from %s: %w", region, addr, err)
	}
	return &out, qm.LastIndex, nil
}

// startACLReplication runs the replication loop on this server's
// leadership terms when its region is not the authoritative one.
func (a *Agent) startACLReplication() {
	if a.cfg.AuthoritativeRegion == "" || a.cfg.AuthoritativeRegion == a.cfg.Region {
		return
	}
	if a.cfg.ReplicationToken == "" {
		a.logger.Warn("server.authoritative_region is another region, but acl.replication_token is empty: the " +
			"authoritative region answers nothing without a management token, and nothing replicates (ACL policies, roles, auth methods, binding rules, global tokens, namespaces, node pools)")
	}
	rep := &server.ACLReplicator{Source: aclSource{a}, Raft: a.raft, State: a.fsm.State, Logger: a.logger.Named("acl-replication"), Region: a.cfg.Region}
	a.raft.OnLeadership("acl-replication", rep.Run)
}

// federationClient returns an API client of the server at addr, a server
// of region: this region's through the agent's shared client; another
// region's, or any region's for "", over a client whose TLS checks that
// region's server name (tlsutil.ServerHTTPClientFor, ServerHTTPClientAnyRegion).
func (a *Agent) federationClient(addr, region string) (*apiclient.Client, error) {
	if region == a.cfg.Region || !a.tls.HTTPEnabled() {
		return a.serverClient(addr)
	}
	a.fedHTTPMu.Lock()
	hc, ok := a.fedHTTP[region]
	if !ok {
		tc := a.tls.ServerHTTPClientFor(region)
		if region == "" {
			tc = a.tls.ServerHTTPClientAnyRegion()
		}
		hc = &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSClientConfig:     tc,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 8,
			IdleConnTimeout:     90 * time.Second,
		}}
		if a.fedHTTP == nil {
			a.fedHTTP = map[string]*http.Client{}
		}
		a.fedHTTP[region] = hc
	}
	a.fedHTTPMu.Unlock()
	return apiclient.NewWithHTTPClient(apiclient.WithScheme(addr, a.tls.Scheme()), hc)
}

// federatedPeer reports whether a request whose certificate does not name
// a role of this region may still be served: with the server role needed,
// a certificate of a server of another region (server.<R>.nomad) is
// enough for what crosses regions — its join, whose body must then name R
// (PeerRegionHeader, checked by the API), and a request it forwarded here
// from R (httpapi.RegionForwardedHeader). Never for a forward to this
// region's leader or to a node.
func (a *Agent) federatedPeer(r *http.Request, roles []string) bool {
	if !slices.Contains(roles, tlsutil.RoleServer) {
		return false
	}
	region, err := a.tls.PeerServerRegion(r.TLS)
	if err != nil || region == a.cfg.Region {
		return false
	}
	switch {
	case r.URL.Path == "/v1/internal/join":
		r.Header.Set(httpapi.PeerRegionHeader, region)
		return true
	case r.Header.Get(httpapi.RegionForwardedHeader) == region && r.Header.Get(httpapi.ForwardedHeader) == "" &&
		r.Header.Get(ClientForwardedHeader) == "":
		return true
	}
	return false
}
