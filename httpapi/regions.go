package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/internal/joinauth"
	"github.com/droverhq/drover/server"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// Regions, as Nomad's federation:
//
//	GET /v1/regions → every region of the federation, sorted.
//	PUT|POST /v1/agent/join?address=HOST:PORT[&address=…] → {"num_joined",
//	    "error"}: this server joins the servers at those addresses, of its
//	    region or of another (which federates the two regions; agent
//	    { policy = "write" }).
//	GET /v1/acl/replication → what the authoritative region
//	    replicates to the others (ACL policies, roles, auth methods,
//	    binding rules, global tokens with their secrets' hashes, namespaces,
//	    node pools), as a blocking query; a management token (the other
//	    regions' replication_token).
//
// Every other request that names another region (?region=, or, for a
// job's registration, plan or validation, the job's Region) is forwarded
// to a server of that region, once (forwardRegion); the server it reaches
// serves it as any request of its own region (forwarding it to its leader
// when the route asks). A region no server of the federation belongs to
// is a 400 ("No path to region", Nomad's text); a region known whose
// servers do not answer within the hold is a 503 naming it.

func init() {
	register(
		route{"GET /v1/regions", localRoute, public, (*Server).regions},
		route{"PUT /v1/agent/join", localRoute, agentWrite, (*Server).agentJoin},
		route{"POST /v1/agent/join", localRoute, agentWrite, (*Server).agentJoin},
		route{"GET /v1/acl/replication", readRoute, management, (*Server).aclReplication},
	)
}

// Federator is implemented by a Backend whose server can federate with
// other regions (the agent).
type Federator interface {
	// LocalRegion is this server's region.
	LocalRegion() string
	// Regions lists every region known, this one included, sorted.
	Regions() []string
	// RegionServers lists the known servers of another region, freshest
	// first; when none is known, gone reports whether some were once.
	RegionServers(region string) (servers []structs.ServerMember, gone bool)
	// AuthoritativeRegion is the region ACL policies and global tokens
	// replicate from (this region when none is configured).
	AuthoritativeRegion() string
	// JoinAddresses joins the servers at addrs and returns how many
	// answered; the error joins every failure.
	JoinAddresses(ctx context.Context, addrs []string) (int, error)
}

// RegionForwardedHeader marks a request a server of another region
// forwarded here (its value is that region): it is never forwarded to
// another region again.
const RegionForwardedHeader = "X-Drover-Forwarded-Region"

// PeerRegionHeader is set by the agent, on a join whose TLS certificate is
// of a server of another region, to that region: the join must name it
// (the agent strips it from every request first).
const PeerRegionHeader = "X-Drover-Peer-Region"

// regionProxies are the forwarders to the servers of other regions: with
// TLS, one per region, whose connections check that region's server name.
type regionProxies struct {
	tlsFor func(region string) *tls.Config
	mu     sync.Mutex
	byName map[string]*forwarder
}

// WithRegionTLS sets the TLS configuration of the calls to the servers of
// each other region (tlsutil.ServerHTTPClientFor); nil, or a nil
// configuration, keeps the forwarder to the leader's.
func WithRegionTLS(f func(region string) *tls.Config) Option {
	return func(s *Server) { s.regionProxies.tlsFor = f }
}

// regionProxy is the forwarder to the servers of region.
func (s *Server) regionProxy(region string) *forwarder {
	p := &s.regionProxies
	if p.tlsFor == nil {
		return s.proxy
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.byName[region]; ok {
		return f
	}
	tc := p.tlsFor(region)
	if tc == nil {
		return s.proxy
	}
	if p.byName == nil {
		p.byName = map[string]*forwarder{}
	}
	f := newForwarder(s.logger, s.access.JoinToken, tc)
	p.byName[region] = f
	return f
}

// probeClientFor is probeClient for a server of another region: with TLS,
// its certificate must name that region's server (WithRegionTLS).
func (s *Server) probeClientFor(region string) *http.Client {
	c := s.probeClient()
	if s.regionProxies.tlsFor != nil {
		if tc := s.regionProxies.tlsFor(region); tc != nil {
			c.Transport = &http.Transport{Proxy: nil, TLSClientConfig: tc, DisableKeepAlives: true}
		}
	}
	return c
}

// ErrNoRegionPath: no server of the region a request names is known.
var ErrNoRegionPath = errors.New("No path to region")

// ErrRegionUnreachable: no server of the region a request names answered.
var ErrRegionUnreachable = errors.New("region unreachable")

// localRegion is this server's region.
func (s *Server) localRegion() string {
	if f, ok := s.backend.(Federator); ok && f.LocalRegion() != "" {
		return f.LocalRegion()
	}
	if self := s.backend.Self(); self != nil && self.Config.Region != "" {
		return self.Config.Region
	}
	return structs.DefaultRegion
}

func (s *Server) regions(_ http.ResponseWriter, _ *http.Request) (any, error) {
	if f, ok := s.backend.(Federator); ok {
		return f.Regions(), nil
	}
	return []string{s.localRegion()}, nil
}

// joinAnswer is Nomad's answer to /v1/agent/join.
type joinAnswer struct {
	NumJoined int    `json:"num_joined"`
	Error     string `json:"error"`
}

// maxJoinAddresses bounds the addresses of one /v1/agent/join.
const maxJoinAddresses = 64

func (s *Server) agentJoin(_ http.ResponseWriter, r *http.Request) (any, error) {
	addrs := r.URL.Query()["address"]
	switch {
	case len(addrs) == 0:
		return nil, Errorf(http.StatusBadRequest, "address: at least one address (host:port of a server's HTTP API) is required")
	case len(addrs) > maxJoinAddresses:
		return nil, Errorf(http.StatusBadRequest, "address: at most %d addresses in one join, got %d", maxJoinAddresses, len(addrs))
	}
	for _, a := range addrs {
		if strings.TrimSpace(a) == "" {
			return nil, Errorf(http.StatusBadRequest, "address: an empty address")
		}
	}
	f, ok := s.backend.(Federator)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "this agent runs no server that can join others")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	n, err := f.JoinAddresses(ctx, addrs)
	out := joinAnswer{NumJoined: n}
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}

// aclReplication answers what the authoritative region replicates
// (server.ACLReplicationOf): every ACL policy, role, auth method (without
// its secrets) and binding rule, every global token with its secret's
// hash, every namespace and every node pool but the built-ins.
func (s *Server) aclReplication(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		return server.ACLReplicationOf(snap)
	})
}

// regionLocalPaths are served by the agent that receives them whatever
// region they name: what concerns the agent itself, and the list of
// regions.
var regionLocalPaths = []string{"/v1/agent/", "/v1/regions", "/v1/internal/join"}

// regionOf returns the region r asks for, "" for this one: its ?region=,
// or for a job's registration, plan or validation without one, the
// request's or else the job's Region (Nomad registers a job in the region
// it names; "global", the default, is the region of the server asked). The body is
// read for that (bounded by MaxBodyBytes) and left in r.Body as it came.
func (s *Server) regionOf(r *http.Request) (string, error) {
	want := r.URL.Query().Get("region")
	if want == "" && carriesJob(r) {
		body, err := readBody(r)
		if err != nil {
			return "", err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		// As Nomad's (regionForJob): the envelope's Region, else the
		// job's; "global", the jobs' default region, is this one.
		var env struct {
			Region string
			Job    *struct{ Region string }
		}
		if json.Unmarshal(body, &env) == nil {
			want = env.Region
			if want == "" && env.Job != nil {
				want = env.Job.Region
			}
			if want == structs.DefaultRegion {
				want = ""
			}
		}
	}
	if want == "" {
		auth, err := s.aclAuthority(r)
		if err != nil {
			return "", err
		}
		want = auth
	}
	if want == s.localRegion() || want == "" {
		return "", nil
	}
	for _, p := range regionLocalPaths {
		if strings.HasPrefix(r.URL.Path, p) {
			return "", nil
		}
	}
	return want, nil
}

// aclAuthority returns the authoritative region for a write of what
// replicates from it — an ACL policy, role, auth method or binding rule,
// a global token, a namespace, a node pool — made in another region, and
// for a login with an auth method whose tokens are global, as Nomad's; ""
// for any other request. The body of a token's creation or update is read
// for its Global flag, a login's for its method, and left in r.Body.
func (s *Server) aclAuthority(r *http.Request) (string, error) {
	f, ok := s.backend.(Federator)
	if !ok || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return "", nil
	}
	auth := f.AuthoritativeRegion()
	if auth == "" || auth == s.localRegion() {
		return "", nil
	}
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/v1/acl/policy/"),
		p == "/v1/namespace", strings.HasPrefix(p, "/v1/namespace/"),
		p == "/v1/node/pools", strings.HasPrefix(p, "/v1/node/pool/"), strings.HasPrefix(p, "/v1/node-pool/"),
		p == "/v1/acl/role", strings.HasPrefix(p, "/v1/acl/role/"),
		p == "/v1/acl/auth-method", strings.HasPrefix(p, "/v1/acl/auth-method/"),
		p == "/v1/acl/binding-rule", strings.HasPrefix(p, "/v1/acl/binding-rule/"):
		return auth, nil
	case p == "/v1/acl/login":
		return s.loginAuthority(r, auth)
	}
	accessor, isToken := strings.CutPrefix(p, "/v1/acl/token/")
	if p != "/v1/acl/token" && (!isToken || accessor == "" || strings.Contains(accessor, "/")) {
		return "", nil
	}
	if accessor != "" {
		// An update or deletion of a token that replicated here.
		if t, err := s.backend.State().Snapshot().ACLTokenByAccessor(accessor); err == nil && t != nil && t.Global {
			return auth, nil
		}
	}
	if r.Method == http.MethodDelete || r.Body == nil || r.Body == http.NoBody {
		return "", nil
	}
	body, err := readBody(r)
	if err != nil {
		return "", err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var tok struct{ Global bool }
	if json.Unmarshal(body, &tok) == nil && tok.Global {
		return auth, nil
	}
	return "", nil
}

// loginAuthority returns auth for a login whose auth method (replicated
// here) makes global tokens, "" otherwise: Nomad logs in with such a
// method in the authoritative region, where global tokens are written.
// The body is left in r.Body.
func (s *Server) loginAuthority(r *http.Request, auth string) (string, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return "", nil
	}
	body, err := readBody(r)
	if err != nil {
		return "", err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct{ AuthMethodName string }
	if json.Unmarshal(body, &req) != nil {
		return "", nil
	}
	// A login that names no method uses the default JWT method (loginMethod).
	m, err := s.loginMethod(s.backend.State().Snapshot(), req.AuthMethodName)
	if err == nil && m.TokenLocality == structs.ACLAuthMethodTokenLocalityGlobal {
		return auth, nil
	}
	return "", nil
}

// carriesJob reports whether r registers, plans or validates a job given
// in its body.
func carriesJob(r *http.Request) bool {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		return false
	}
	p := r.URL.Path
	if p == "/v1/jobs" || p == "/v1/validate/job" {
		return true
	}
	rest, ok := strings.CutPrefix(p, "/v1/job/")
	return ok && rest != "" && (!strings.Contains(rest, "/") || strings.HasSuffix(rest, "/plan"))
}

// toRegion forwards r to a server of the region it names when that is
// not this one, and reports whether it answered r (the caller then does
// nothing more).
func (s *Server) toRegion(w http.ResponseWriter, r *http.Request) bool {
	region, err := s.regionOf(r)
	if err != nil {
		s.proxy.failed(w, r, err)
		return true
	}
	if region == "" {
		return false
	}
	local := s.localRegion()
	if from := r.Header.Get(RegionForwardedHeader); from != "" {
		writeError(w, Errorf(http.StatusBadRequest, "%v %q: the request was forwarded here from region %q, and this server is of region %q",
			ErrNoRegionPath, region, from, local))
		return true
	}
	f, ok := s.backend.(Federator)
	if !ok {
		writeError(w, Errorf(http.StatusBadRequest, "%v %q: this server is of region %q and federates with no other", ErrNoRegionPath, region, local))
		return true
	}
	servers, gone := f.RegionServers(region)
	if len(servers) == 0 {
		if gone {
			writeError(w, Errorf(http.StatusServiceUnavailable, "region %q: %w: no server of it has been heard from lately", region, ErrRegionUnreachable))
			return true
		}
		writeError(w, Errorf(http.StatusBadRequest, "%v %q: the regions known are %s", ErrNoRegionPath, region, strings.Join(f.Regions(), ", ")))
		return true
	}
	s.forwardRegion(w, r, f, region, servers)
	return true
}

// ServeOtherRegion forwards r to a server of the region it names when
// that is not this one, and reports whether it answered r: for the
// handlers the agent serves beside the API (the client endpoints under
// /v1/client/, which a server of the allocation's region routes to its
// node).
func (s *Server) ServeOtherRegion(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Query().Get("region") == "" {
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	return s.toRegion(w, r)
}

// forwardRegion sends r to a server of region, trying the next one while
// a server does not answer, within the forward hold; a write is sent again
// only when it did not leave (see notSent).
func (s *Server) forwardRegion(w http.ResponseWriter, r *http.Request, f Federator, region string, servers []structs.ServerMember) {
	var body []byte
	var sum *[sha256.Size]byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		if body, err = readBody(r); err != nil {
			s.proxy.failed(w, r, err)
			return
		}
		r.ContentLength, r.TransferEncoding = int64(len(body)), nil
	}
	if s.access.JoinToken != "" {
		h := sha256.Sum256(body)
		sum = &h
	}
	deadline := time.Now().Add(s.forwardHold)
	var last error
	proxy := s.regionProxy(region)
	order := rand.Perm(len(servers))
	for attempt := 0; ; attempt++ {
		if attempt > 0 && attempt%len(servers) == 0 {
			// Every server was tried: wait a little, then look again at
			// what is known of the region.
			if !holdOn(r, deadline, forwardRetryMax) {
				break
			}
			if fresh, _ := f.RegionServers(region); len(fresh) > 0 {
				servers, order = fresh, rand.Perm(len(fresh))
			}
		}
		m := servers[order[attempt%len(servers)]]
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		var sig *forwardSig
		if sum != nil {
			sig = &forwardSig{sum: *sum, format: joinauth.ForwardFormatFor(m.Build), origin: remoteHost(r)}
		}
		rctx := context.WithValue(r.Context(), regionForwardKey{}, s.localRegion())
		last = proxy.serve(w, r.WithContext(rctx), m.HTTPAddr, sig, deadline.Add(forwardSlack+blockingWait(r)))
		if last == nil {
			return
		}
		proxy.dropIdle(last)
		if !(resendable(r) || notSent(last)) || time.Now().After(deadline) || r.Context().Err() != nil {
			break
		}
		s.logger.Debug("forwarding to another region failed; trying another of its servers", "region", region,
			"server", m.HTTPAddr, "error", last)
	}
	s.logger.Warn("forwarding to another region failed", "region", region, "path", r.URL.Path, "error", last)
	writeError(w, Errorf(http.StatusServiceUnavailable, "region %q: %w: no server of it answered within %s: %v",
		region, ErrRegionUnreachable, s.forwardHold, last))
}

// regionForwardKey holds, in a request forwarded to another region, this
// server's region, for the proxy to mark the request with
// (RegionForwardedHeader) instead of ForwardedHeader: the server it
// reaches may forward it on to its own leader.
type regionForwardKey struct{}

// markForwarded sets on out the header of the hop it makes: to another
// region, or to this region's leader.
func markForwarded(in *http.Request, out http.Header) {
	if from, ok := in.Context().Value(regionForwardKey{}).(string); ok {
		out.Set(RegionForwardedHeader, from)
		return
	}
	out.Set(ForwardedHeader, "1")
}

// foreignJoin reports whether a join's body announces a server of another
// region: a dev agent, which refuses the servers of its own region, lets
// it federate when it has a join token to check it with.
func (s *Server) foreignJoin(body []byte) bool {
	var req struct{ Self struct{ Region string } }
	if json.Unmarshal(body, &req) != nil {
		return false
	}
	return req.Self.Region != "" && req.Self.Region != s.localRegion()
}
