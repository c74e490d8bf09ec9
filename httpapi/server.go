package httpapi

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/internal/wire"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// MaxBodyBytes bounds every request body.
const MaxBodyBytes = 8 << 20

// Backend is what the API needs from the server it runs in: the local
// state for reads, the replicated log for writes, and cluster facts.
type Backend interface {
	// State returns the local replicated state.
	State() *state.Store
	// Apply writes one entry through Raft (leader only); see cluster.Server.Apply.
	Apply(ctx context.Context, t fsm.MessageType, req any) (any, uint64, error)
	// IsLeader reports whether this server is the Raft leader.
	IsLeader() bool
	// Leader returns the leader's Raft address and ID, empty if none.
	Leader() (raftAddr, id string)
	// LeaderHTTPAddr returns the leader's HTTP address (host:port), or an
	// error wrapping cluster.ErrNoLeader.
	LeaderHTTPAddr() (string, error)
	// LastContact is the time since the leader was last heard from.
	LastContact() time.Duration
	// RaftConfiguration returns the Raft configuration with node names.
	RaftConfiguration() (*structs.RaftConfiguration, error)
	// Self describes this agent.
	Self() *structs.AgentSelf
	// Join records a server's announcement and answers with what this
	// server knows (POST /v1/internal/join).
	Join(ctx context.Context, req *structs.ServerJoinRequest) (*structs.ServerJoinResponse, error)
}

// Server serves the HTTP API of one agent.
type Server struct {
	backend Backend
	logger  hclog.Logger
	now     func() time.Time
	mux     *http.ServeMux
	proxy   *forwarder
	access  Access
	// agentTLS is the TLS of calls to other servers (tls.go); nil: HTTP.
	agentTLS *tls.Config
	// refusedJoins limits the warnings about refused joins.
	refusedJoins logLimiter
	// aclConfig turns ACL enforcement on (acl_enforce.go); policies
	// caches parsed policy rules.
	aclConfig ACLConfig
	policies  policyCache
	// intro is the client_introduction block (node_identity.go).
	intro structs.ClientIntroductionConfig
	// writes limits each remote address's writes (ratelimit.go).
	writes *rateLimiter
	// syncMarks are the last allocs-sync answers to each node
	// (client_sync.go).
	syncMarks syncMarks
	// events serves GET /v1/event/stream (event_stream.go).
	events EventStreamConfig
	// metrics serves GET /v1/metrics (metrics_route.go).
	metrics http.Handler
	// forwardHold bounds how long a request for the leader waits out an
	// election (forward.go).
	forwardHold time.Duration
	// leaving is set by Leave: this server no longer serves as the
	// leader; localWrites counts the writes it serves as the leader.
	leaving     atomic.Bool
	localWrites atomic.Int64
	// prometheusAddress is the servers' analysis { prometheus_address }
	// (analysis.go).
	prometheusAddress string
	// regionProxies forward requests to the servers of other regions
	// (regions.go).
	regionProxies regionProxies
	// streamsEnd is closed by CloseStreams: the event streams end
	// (event_stream.go).
	streamsEnd       chan struct{}
	closeStreamsOnce sync.Once
}

// Option configures a Server.
type Option func(*Server)

// WithClock sets the clock write handlers stamp into requests (tests).
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// New returns the API for backend with every registered route.
func New(backend Backend, logger hclog.Logger, opts ...Option) *Server {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	s := &Server{backend: backend, logger: logger.Named("http"), now: time.Now, mux: http.NewServeMux(),
		forwardHold: DefaultForwardHold, streamsEnd: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	s.proxy = newForwarder(s.logger, s.access.JoinToken, s.agentTLS)
	if s.writes == nil {
		s.writes = newRateLimiter(DefaultWriteLimit)
	}
	for _, rt := range routes {
		s.mux.Handle(rt.pattern, s.wrap(rt))
	}
	return s
}

// Handler returns the API's root handler.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

// serve is the outermost layer: it bounds the body and turns a panic into
// a 500.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.logger.Error("panic in handler", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			writeError(w, Errorf(http.StatusInternalServerError, "internal error: %v", v))
		}
	}()
	r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	if err := checkVarPathInURL(r); err != nil {
		writeError(w, err)
		return
	}
	if s.toRegion(w, r) {
		// Another region's request: forwarded there (regions.go).
		return
	}
	routePath(r)
	s.mux.ServeHTTP(w, r)
}

// routeKind says where a route is served.
type routeKind int

const (
	localRoute routeKind = iota // always served by the receiving agent
	readRoute                   // the leader, or the local copy with ?stale
	writeRoute                  // the leader
)

// HandlerFunc handles one request: it returns the value to send as JSON,
// or an error.
type HandlerFunc func(s *Server, w http.ResponseWriter, r *http.Request) (any, error)

// route is one endpoint: its pattern, where it is served, what a caller
// needs to be let in once ACLs are on (see acl_enforce.go; a test walks
// the table and fails on a route that declares nothing), and its handler.
type route struct {
	pattern string
	kind    routeKind
	need    need
	handle  HandlerFunc
}

// routes is filled by the init functions of the endpoint files.
var routes []route

func register(rs ...route) { routes = append(routes, rs...) }

// wrap measures the request (metrics.go), limits writes, forwards the
// request to the leader when the route asks for it, and otherwise checks
// the caller against what the route
// needs, runs the handler and writes its answer.
func (s *Server) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w, done := measure(w, rt.pattern)
		defer done()
		// As Nomad's, each request is logged at debug level (what
		// GET /v1/agent/monitor?log_level=debug shows); the path only,
		// never the query.
		start := time.Now()
		defer func() {
			s.logger.Debug("request complete", "method", r.Method, "path", r.URL.Path, "duration", time.Since(start))
		}()
		if routeAccess[rt.pattern] == localOnly {
			if err := s.checkLocal(r); err != nil {
				writeError(w, err)
				return
			}
		}
		if !s.allowWrite(w, r, rt) {
			return
		}
		r, err := resolveNamespace(r, rt)
		if err != nil {
			writeError(w, err)
			return
		}
		if s.forward(w, r, rt.kind) {
			return
		}
		if rt.kind == writeRoute && s.backend.IsLeader() {
			// Served here as the leader: counted for Leave, or, once this
			// server is leaving, sent on to the next leader.
			if s.enterLocal() {
				defer s.localWrites.Add(-1)
			} else if s.toLeader(w, r) {
				return
			}
		}
		checked, err := s.authorize(r, rt)
		if err != nil {
			if errors.Is(err, errUnknownNodeSecret) && s.forwardUnknown(w, r, rt.kind) {
				// A follower that does not know the node yet (it just
				// registered) lets the leader answer.
				return
			}
			writeError(w, err)
			return
		}
		out, err := rt.handle(s, w, checked)
		if err != nil {
			writeError(w, err)
			return
		}
		if _, done := out.(written); done {
			return
		}
		if wireAnswers[rt.pattern] && acceptsWire(r) {
			writeWire(w, out)
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// wireAnswers are the routes that answer in MessagePack (package wire) a
// request that accepts it: the clients' reads of their allocations, which
// carry only allocations and jobs. Other answers stay JSON: MessagePack
// writes every field, also those JSON leaves out (a node's SecretHash).
var wireAnswers = map[string]bool{
	"GET /v1/internal/node/{id}/allocs-index": true,
	"PUT /v1/internal/allocs/get":             true,
	"PUT /v1/internal/node/{id}/allocs-sync":  true,
}

// acceptsWire reports whether the request's Accept header names
// wire.ContentType (or application/msgpack, see wire.IsMediaType).
func acceptsWire(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && wire.IsMediaType(mt) {
				return true
			}
		}
	}
	return false
}

// writeWire answers v in MessagePack.
func writeWire(w http.ResponseWriter, v any) {
	b, err := wire.Encode(v)
	if err != nil {
		writeError(w, fmt.Errorf("encoding response: %w", err))
		return
	}
	w.Header().Set("Content-Type", wire.ContentType)
	// With its length stated, a client reads the answer into one buffer
	// of that size (apiclient.readAnswer).
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// written is what a handler returns when it wrote the response itself.
type written struct{}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, fmt.Errorf("encoding response: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// decodeEncodedBody decodes a body into v in the encoding its Content-Type
// names: MessagePack (wire.ContentType), which clients use for their
// reports, or JSON; 400 when malformed, 413 when over MaxBodyBytes.
func decodeEncodedBody(r *http.Request, v any) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || !wire.IsMediaType(mt) {
		return decodeBody(r, v)
	}
	b, err := readBody(r)
	if err != nil {
		if statusFor(err) == http.StatusRequestEntityTooLarge {
			return Errorf(http.StatusRequestEntityTooLarge, "request body too large: %w", err)
		}
		return Errorf(http.StatusBadRequest, "reading request body: %w", err)
	}
	if err := wire.Decode(b, v); err != nil {
		return Errorf(http.StatusBadRequest, "malformed request body: %w", err)
	}
	return nil
}

// readBody reads a request's body in one allocation when the request
// states its length (a client's report does), instead of growing a buffer
// by doubling; a body shorter than it stated is an error.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= MaxBodyBytes {
		b := make([]byte, n)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(r.Body)
}

// decodeBody decodes a JSON body into v: 400 when malformed, 413 when over
// MaxBodyBytes.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		if statusFor(err) == http.StatusRequestEntityTooLarge {
			return Errorf(http.StatusRequestEntityTooLarge, "request body too large: %w", err)
		}
		return Errorf(http.StatusBadRequest, "malformed request body: %w", err)
	}
	return nil
}

// RouteInfo describes one registered route, for tests that walk the route
// table from outside the package (every write against another namespace,
// agent/route_namespace_test.go).
type RouteInfo struct {
	// Pattern is the route's method and path ("POST /v1/job/{id}/scale").
	Pattern string
	// Writes is true for a route served by the leader as a write.
	Writes bool
	// Need names what a caller needs, as website/api/acl.md lists it.
	Need string
}

// Routes lists every route of the API.
func Routes() []RouteInfo {
	out := make([]RouteInfo, 0, len(routes))
	for _, rt := range routes {
		out = append(out, RouteInfo{Pattern: rt.pattern, Writes: rt.kind == writeRoute, Need: rt.need.String()})
	}
	return out
}
