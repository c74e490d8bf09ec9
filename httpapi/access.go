package httpapi

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/droverhq/drover/internal/joinauth"
)

// The routes that hand out or replace the whole state, or change the
// cluster's membership, answer only to requests that come from this
// machine (a loopback remote address) or from another server of the
// cluster, with ACLs or without (with ACLs, the snapshot routes also need
// a management token):
//
//   - GET and PUT /v1/operator/snapshot (a full copy of the state; a
//     restore replaces it): loopback, or forwarded by a follower that signs
//     the forwarded request, its body's hash included, with the join
//     secret (forwardSigned), or any address when the agent is configured
//     with allow_remote_operator.
//   - POST /v1/internal/join: a request signed with the cluster's join
//     secret (server.join_token); when the server has none, loopback (or
//     allow_remote_operator) as above. A dev agent refuses every join.
//
// The client endpoints under /v1/internal/ (node registration, heartbeats,
// allocation updates, token resolution) are open here: clients run on
// other machines; with ACLs on they present their node secret, checked
// with every other route's need (acl_enforce.go). The agent guards
// /debug/pprof/ with LocalOnly. Without ACLs everything else is open, as
// Nomad's API; with ACLs these guards apply on top of the token checks.
//
// routeAccess is the table; a test walks the route table against it: every
// /v1/internal/ route must be listed, open or not.
var routeAccess = map[string]access{
	"GET /v1/operator/snapshot": localOnly,
	"PUT /v1/operator/snapshot": localOnly,
	"POST /v1/internal/join":    serverOnly,

	"PUT /v1/internal/node/register":          open,
	"PUT /v1/internal/node/{id}/heartbeat":    open,
	"GET /v1/internal/node/{id}/allocs-index": open,
	"PUT /v1/internal/allocs/get":             open,
	"PUT /v1/internal/node/{id}/allocs-sync":  open,
	"PUT /v1/internal/allocs/update":          open,
	"PUT /v1/internal/acl/resolve":            open,
	"PUT /v1/internal/alloc/{id}/identity":    open,
	"PUT /v1/internal/node/{id}/identity":     open,
}

type access int

const (
	open       access = iota
	localOnly         // loopback, a server's forward, or allow_remote_operator
	serverOnly        // signed with the join secret (or, without one, as localOnly)
)

// Access configures who may use the guarded routes.
type Access struct {
	// JoinToken is the cluster's join secret; joins must be signed with
	// it (package joinauth), and followers sign what they forward with it.
	JoinToken string
	// RefuseJoins, when not empty, refuses every join with this reason (a
	// dev agent, a one-server cluster by definition).
	RefuseJoins string
	// AllowRemote serves the local-only routes to any address.
	AllowRemote bool
}

// WithAccess sets who may use the guarded routes.
func WithAccess(a Access) Option { return func(s *Server) { s.access = a } }

// ErrForbidden: the request is refused for who sent it (403).
var ErrForbidden = errors.New("forbidden")

// IsLoopback reports whether the request came over a loopback address.
func IsLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LocalOnly serves h only to loopback addresses, unless allowRemote.
func LocalOnly(h http.Handler, allowRemote bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowRemote && !IsLoopback(r) {
			writeError(w, Errorf(http.StatusForbidden, "%s is served to loopback addresses only (see allow_remote_operator): %w", r.URL.Path, ErrForbidden))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// checkLocal refuses a localOnly request that came from elsewhere.
func (s *Server) checkLocal(r *http.Request) error {
	if s.access.AllowRemote || IsLoopback(r) {
		return nil
	}
	ok, err := s.forwardSigned(r)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	return Errorf(http.StatusForbidden, "%s %s is served to loopback addresses only (see allow_remote_operator): %w",
		r.Method, r.URL.Path, ErrForbidden)
}

// forwardSigned reports whether r carries a server's signature with the
// cluster's join token (joinauth.ForwardHeader) over its method, URI and
// body, within the signature's window. To hash the body as received, it
// reads it (bounded by MaxBodyBytes, see serve) and leaves in r.Body an
// unread copy for the handler; the copy keeps the sum, so that a second
// check of the same request (the write limit after the loopback check)
// reads nothing again. Without a join token or a signature it reads
// nothing. The error is the body's read error (413 past MaxBodyBytes);
// the handler's copy then fails with that error too.
func (s *Server) forwardSigned(r *http.Request) (bool, error) {
	f, err := s.forwardFormat(r)
	return f != 0, err
}

// forwardFormat is forwardSigned's check, returning the layout of the
// signature (joinauth.ForwardV2, ForwardV3) or 0 when r carries none that
// verifies. Every layout the previous release sends is accepted (the
// version-skew rule, website/production.md#upgrading).
func (s *Server) forwardFormat(r *http.Request) (int, error) {
	h := r.Header.Get(joinauth.ForwardHeader)
	if s.access.JoinToken == "" || h == "" {
		return 0, nil
	}
	b, ok := r.Body.(*hashedBody)
	if !ok {
		b = readHashed(r)
		r.Body = b
	}
	if b.err != nil {
		var mbe *http.MaxBytesError
		if errors.As(b.err, &mbe) {
			return 0, Errorf(http.StatusRequestEntityTooLarge, "request body too large: %w", b.err)
		}
		return 0, Errorf(http.StatusBadRequest, "reading the request body: %w", b.err)
	}
	return joinauth.VerifyForwardAny(s.access.JoinToken, h, time.Now().Unix(), r.Method, r.URL.RequestURI(), b.sum,
		r.Header.Get(joinauth.OriginHeader)), nil
}

// hashedBody is a request body read in full and hashed: the handler
// reads the copy, and then the read's error, if any.
type hashedBody struct {
	io.Reader
	sum [sha256.Size]byte
	err error
}

func (*hashedBody) Close() error { return nil }

// readHashed reads r's body to its end or its first error.
func readHashed(r *http.Request) *hashedBody {
	if r.Body == nil {
		return &hashedBody{Reader: bytes.NewReader(nil), sum: joinauth.EmptyBody}
	}
	data, err := readBody(r)
	r.Body.Close()
	b := &hashedBody{Reader: bytes.NewReader(data), sum: sha256.Sum256(data), err: err}
	if err != nil {
		b.Reader = errorReader{err}
	}
	return b
}

// errorReader fails every read with err.
type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) { return 0, e.err }

// checkJoin refuses a join that does not prove it comes from a server of
// the cluster. body is the request's body, as signed.
func (s *Server) checkJoin(r *http.Request, body []byte) error {
	switch {
	case s.access.RefuseJoins != "" && (s.access.JoinToken == "" || !s.foreignJoin(body)):
		return Errorf(http.StatusForbidden, "join refused: %s: %w", s.access.RefuseJoins, ErrForbidden)
	case s.access.JoinToken != "":
		if !joinauth.Verify(s.access.JoinToken, body, r.Header.Get(joinauth.Header)) {
			return Errorf(http.StatusForbidden, "join refused: missing or wrong join token: %w", ErrForbidden)
		}
		return nil
	}
	if err := s.checkLocal(r); err != nil {
		return Errorf(http.StatusForbidden, "join refused: this server has no join_token, and then accepts joins from loopback addresses only: %w", ErrForbidden)
	}
	return nil
}

// logLimiter says whether an event from a host is the first in a minute,
// so that a misconfigured server retrying its join every 300ms is logged
// once a minute, not three times a second.
type logLimiter struct {
	mu   sync.Mutex
	last map[string]time.Time
}

func (l *logLimiter) first(remoteAddr string, now time.Time) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]time.Time{}
	}
	if t, ok := l.last[host]; ok && now.Sub(t) < time.Minute {
		return false
	}
	if len(l.last) > 1024 {
		clear(l.last)
	}
	l.last[host] = now
	return true
}
