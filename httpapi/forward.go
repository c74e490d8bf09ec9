package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/internal/joinauth"
)

// ForwardedHeader marks a request a follower forwarded to the leader; a
// server never forwards such a request again.
const ForwardedHeader = "X-Drover-Forwarded"

// NotLeaderHeader marks the answer of a server that received a forwarded
// request while it did not serve as the leader (it stepped down, or was
// just elected and still applies the log): it served nothing, and the
// forwarding follower looks for the leader again instead of passing the
// 500 on.
const NotLeaderHeader = "X-Drover-Not-Leader"

// errNotLeaderAnswer is what the forwarder makes of an answer marked with
// NotLeaderHeader.
var errNotLeaderAnswer = fmt.Errorf("the server it was sent to does not lead any more: %w", cluster.ErrNotLeader)

// forward serves the request from the leader when its route and this
// server's role ask for it, and reports whether it did (the caller then
// does nothing more).
func (s *Server) forward(w http.ResponseWriter, r *http.Request, kind routeKind) bool {
	switch {
	case kind == localRoute:
		return false
	case kind == readRoute && r.URL.Query().Has("stale"):
		return false
	case s.backend.IsLeader() && !s.leaving.Load():
		return false
	}
	return s.toLeader(w, r)
}

// Leave makes this server stop serving as the leader, before it hands its
// leadership over and stops (the agent's shutdown): from now on it sends
// every request for the leader on to the next one, holding it while the
// leadership moves, and Leave returns once the writes it was serving as
// the leader have been answered (or ctx is done), so that the handover
// cuts none of them off.
func (s *Server) Leave(ctx context.Context) error { return s.leave(ctx, 0) }

// LeaveFromWrite is Leave called while serving a write as the leader (a
// leader asked to remove itself): that write is not waited for.
func (s *Server) LeaveFromWrite(ctx context.Context) error { return s.leave(ctx, 1) }

// leave is Leave, waiting until at most own writes are being served.
func (s *Server) leave(ctx context.Context, own int64) error {
	s.leaving.Store(true)
	for s.localWrites.Load() > own {
		select {
		case <-ctx.Done():
			return fmt.Errorf("writes still being served: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// Stay undoes Leave: the server serves as the leader again while it leads
// (its leadership could not be handed over).
func (s *Server) Stay() { s.leaving.Store(false) }

// enterLocal counts a write this server serves as the leader, for Leave
// to wait for; false, counting nothing, once Leave was called.
func (s *Server) enterLocal() bool {
	s.localWrites.Add(1)
	if s.leaving.Load() {
		s.localWrites.Add(-1)
		return false
	}
	return true
}

// forwardUnknown sends a request whose credential this follower does not
// know yet to the leader, which may (a node that just registered), and
// reports whether it did: never for a local route, on the leader, or for
// a request forwarded already.
func (s *Server) forwardUnknown(w http.ResponseWriter, r *http.Request, kind routeKind) bool {
	if kind == localRoute || s.backend.IsLeader() || r.Header.Get(ForwardedHeader) != "" {
		return false
	}
	return s.toLeader(w, r)
}

// DefaultForwardHold is how long a follower holds a request for the
// leader while it knows no leader, or while the leader it knows does not
// answer a read, before it answers with an error: an election takes about
// a second (cluster's timing), and a request held through it is answered
// by the new leader instead of failing. Nomad's servers hold their RPCs
// likewise (rpc_hold_timeout, 5 s). A write is sent again only when its
// forwarding failed before any of it left (the address refused the
// connection, as a killed leader's does); otherwise it may have reached
// the old leader, and the caller gets the error.
const DefaultForwardHold = 5 * time.Second

// A request still looking for the leader when its hold runs
// out, because no leader is known or because the leader's address refuses
// connections, is held once more for half as long (7.5 s in all by
// default): an election after a leader stopped takes its detection and a
// vote or two (p50 0.88 s, at most 2.7 s measured on a loaded machine;
// 0.1 s after a leader that hands its leadership over), and a request held
// through it is answered by the next leader rather than failed. A server
// cut off from the others answers within that bound too, never hangs. A
// leader that does not answer at all is not waited for longer.

// WithForwardHold sets how long a request for the leader waits out an
// election (DefaultForwardHold).
func WithForwardHold(d time.Duration) Option { return func(s *Server) { s.forwardHold = d } }

// Waits between a held request's looks for the leader.
const (
	forwardRetryMin = 20 * time.Millisecond
	forwardRetryMax = 100 * time.Millisecond
)

// toLeader proxies the request to the leader, one hop, and reports
// whether it answered it: false when this server became the leader while
// the request waited, for the caller to serve it.
func (s *Server) toLeader(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get(ForwardedHeader) != "" {
		w.Header().Set(NotLeaderHeader, "1")
		writeError(w, Errorf(http.StatusInternalServerError,
			"request forwarded to a server that is not the leader (leadership changed); retry: %w", cluster.ErrNotLeader))
		return true
	}
	// With a join token the signature covers the body's hash (see
	// forwardSigned). A write's body is read once, bounded by MaxBodyBytes,
	// and each attempt sends a copy: a write a deposed leader refused is
	// sent again whole to the new one.
	var body []byte
	var sum *[sha256.Size]byte
	switch {
	case s.access.JoinToken != "" && r.ContentLength == 0:
		sum = &joinauth.EmptyBody
	case s.access.JoinToken != "" || !resendable(r) && r.Body != nil && r.Body != http.NoBody:
		var err error
		if body, err = readBody(r); err != nil {
			s.proxy.failed(w, r, err)
			return true
		}
		if s.access.JoinToken != "" {
			h := sha256.Sum256(body)
			sum = &h
		}
		r.ContentLength, r.TransferEncoding = int64(len(body)), nil
	}
	// The hold covers an election (see WithForwardHold): when it runs out while
	// no leader is known, or while the leader known refuses connections
	// (it stopped; the others elect the next), it is held once more.
	deadline, extended := time.Now().Add(s.forwardHold), false
	for wait := forwardRetryMin; ; wait = min(2*wait, forwardRetryMax) {
		if body != nil {
			// A fresh copy for this attempt, or for the handler when this
			// server became the leader meanwhile.
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if s.backend.IsLeader() {
			if !s.leaving.Load() {
				return false
			}
			// Leaving: held until the leadership has moved.
			if !holdOn(r, deadline, wait) {
				writeError(w, Errorf(http.StatusInternalServerError,
					"this server is stopping and its leadership has not moved yet: %w", cluster.ErrNoLeader))
				return true
			}
			continue
		}
		addr, err := s.backend.LeaderHTTPAddr()
		if err == nil {
			var sig *forwardSig
			if sum != nil {
				sig = &forwardSig{sum: *sum, format: joinauth.ForwardFormatFor(s.leaderBuild()), origin: remoteHost(r)}
			}
			ferr := s.proxy.serve(w, r, addr, sig, deadline.Add(forwardSlack+blockingWait(r)))
			if ferr == nil {
				return true
			}
			s.proxy.dropIdle(ferr)
			if !(resendable(r) || notSent(ferr)) {
				s.proxy.failed(w, r, ferr)
				return true
			}
			if !holdOn(r, deadline, wait) {
				if extended || !refused(ferr) {
					s.proxy.failed(w, r, ferr)
					return true
				}
				// The leader's address still refuses connections: it
				// stopped, and its followers are electing the next one.
				deadline, extended = deadline.Add(s.forwardHold/2), true
			}
			s.logger.Debug("forwarding to the leader failed; looking for the leader again", "path", r.URL.Path, "error", ferr)
			continue
		}
		if !holdOn(r, deadline, wait) {
			if extended || !errors.Is(err, cluster.ErrNoLeader) {
				writeError(w, err)
				return true
			}
			// No leader yet: an election is on; it is waited for once
			// more (see the comment above WithForwardHold).
			deadline, extended = deadline.Add(s.forwardHold/2), true
		}
	}
}

// refused reports whether a forwarding failed because the leader's
// address refused the connection (a stopped leader's does).
func refused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" && !errors.Is(err, context.DeadlineExceeded) && !op.Timeout()
}

// forwardSlack is how long past the hold a forwarded request may wait for
// the leader's answer (a blocking read: past its wait as well). A leader
// cut off from this server drops the packets instead of refusing them;
// without a bound, a request sent to it waited for TCP to give up, which
// took minutes (a read to a cut-off follower had not answered after six).
const forwardSlack = 2 * time.Second

// forwardDialTimeout bounds one connection to the leader, so that a
// request whose leader went silent looks again for the new one within the
// hold.
const forwardDialTimeout = time.Second

// blockingWait is how long the leader may hold r as a blocking query: its
// wait, and up to a sixteenth more (the jitter Nomad's servers add), or 0
// for a request that does not block.
func blockingWait(r *http.Request) time.Duration {
	if !r.URL.Query().Has("index") {
		return 0
	}
	o, err := parseQuery(r)
	if err != nil || o.MinIndex == 0 {
		return 0
	}
	return o.Wait + o.Wait/16
}

// resendable reports whether a request whose forwarding failed may be
// sent again whatever the failure: a read, which changes nothing and has
// no body to replay.
func resendable(r *http.Request) bool {
	return r.Method == http.MethodGet || r.Method == http.MethodHead
}

// notSent reports whether a forwarding failed before the request was
// served: the leader's address refused the connection (a killed leader's
// does), the leader closed the connection while the request was still
// being written to it (a stopping leader closes its idle keep-alive
// connections; a peer that breaks the pipe or resets has not read the
// whole body, so no handler acted on it), or the server it reached
// answered that it does not lead (it served nothing): a write may be sent
// to the next leader.
func notSent(err error) bool {
	var op *net.OpError
	if !errors.As(err, &op) {
		return errors.Is(err, errNotLeaderAnswer)
	}
	switch op.Op {
	case "dial":
		return true
	case "write", "readfrom":
		return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
	}
	return false
}

// holdOn waits d, or less when the deadline is sooner, and reports whether
// the request may look for the leader again: not past the deadline, nor
// once its caller has gone.
func holdOn(r *http.Request, deadline time.Time, d time.Duration) bool {
	left := time.Until(deadline)
	if left <= 0 {
		return false
	}
	t := time.NewTimer(min(d, left))
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-t.C:
		return true
	}
}

// forwardIdleConns is how many idle connections to the leader a
// follower keeps for forwarding.
const forwardIdleConns = 1024

// forwarder proxies requests to the leader, one hop.
type forwarder struct {
	logger    hclog.Logger
	proxy     *httputil.ReverseProxy
	transport *http.Transport
}

// dropIdle closes the idle connections to the leader after a forwarding
// failed on the network: they lead to a server that is gone, and each
// would fail a request (a write taken from the pool then cannot be sent
// again, part of it having left).
func (f *forwarder) dropIdle(err error) {
	var op *net.OpError
	if errors.As(err, &op) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		f.transport.CloseIdleConnections()
	}
}

type leaderAddrKey struct{}

// forwardBodyKey holds, in a forwarded request's context, its
// forwardSig, for the proxy to sign.
type forwardBodyKey struct{}

// forwardSig is what the proxy signs a forwarded request with: its body's
// SHA-256, the layout the leader accepts (joinauth.ForwardFormatFor its
// build) and, in ForwardV3, the caller's address.
type forwardSig struct {
	sum    [sha256.Size]byte
	format int
	origin string
}

// LeaderBuilder is implemented by a Backend that knows the servers'
// builds (the agent, from their announcements): LeaderBuild is the
// leader's structs.ServerBuild, 0 when not known or announced.
type LeaderBuilder interface {
	LeaderBuild() int
}

// leaderBuild is the leader's build as the backend knows it, 0 if not.
func (s *Server) leaderBuild() int {
	if lb, ok := s.backend.(LeaderBuilder); ok {
		return lb.LeaderBuild()
	}
	return 0
}

// remoteHost is the host of r's remote address.
func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// forwardErrKey holds, in a forwarded request's context, where the proxy
// leaves an error it met before answering anything, for toLeader to
// decide whether to try again.
type forwardErrKey struct{}

func newForwarder(logger hclog.Logger, joinToken string, tc *tls.Config) *forwarder {
	f := &forwarder{logger: logger, transport: &http.Transport{
		Proxy:           nil,
		DialContext:     (&net.Dialer{Timeout: forwardDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig: tc,
		// Every client write a follower receives goes to the leader;
		// with thousands of clients, hundreds are in flight at once,
		// and an idle pool smaller than that closed and reopened a
		// connection for most of them (hundreds of sockets in
		// TIME_WAIT during a 1,000-node rollout).
		MaxIdleConnsPerHost: forwardIdleConns,
		IdleConnTimeout:     90 * time.Second,
	}}
	scheme := "http"
	if tc != nil {
		scheme = "https"
	}
	f.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			addr, _ := pr.In.Context().Value(leaderAddrKey{}).(string)
			pr.SetURL(&url.URL{Scheme: scheme, Host: addr})
			markForwarded(pr.In, pr.Out.Header)
			pr.Out.Header.Del(joinauth.ForwardHeader)
			pr.Out.Header.Del(joinauth.OriginHeader)
			if sig, ok := pr.In.Context().Value(forwardBodyKey{}).(*forwardSig); ok && joinToken != "" {
				// Proves to the leader that a server forwards the request
				// with this body (the local-only routes, the write limit;
				// see access.go), in the layout the leader's build
				// accepts; with ForwardV3, received from this caller.
				now, uri := time.Now().Unix(), pr.Out.URL.RequestURI()
				if sig.format >= joinauth.ForwardV3 {
					pr.Out.Header.Set(joinauth.OriginHeader, sig.origin)
					pr.Out.Header.Set(joinauth.ForwardHeader,
						joinauth.SignForwardV3(joinToken, now, pr.Out.Method, uri, sig.sum, sig.origin))
				} else {
					pr.Out.Header.Set(joinauth.ForwardHeader,
						joinauth.SignForwardBody(joinToken, now, pr.Out.Method, uri, sig.sum))
				}
			}
		},
		Transport: f.transport,
		// A server that no longer leads (the follower's view of the
		// leader lags an election by up to a heartbeat) answers a
		// forwarded request with a marked 500; under load, when elections
		// happen, 1-2 % of forwarded reads were answered so (issue 37).
		// The marked answer is kept from the caller: toLeader looks for
		// the leader again within the hold.
		ModifyResponse: func(resp *http.Response) error {
			if resp.Header.Get(NotLeaderHeader) != "" {
				return errNotLeaderAnswer
			}
			return nil
		},
		FlushInterval: -1,
		ErrorHandler:  f.keepError,
		// Without a pool the proxy allocates a 32 KB buffer to copy each
		// answer: a sixth of what a follower allocated during a
		// 1,000-node rollout, every client write being forwarded.
		BufferPool: &proxyBuffers{},
	}
	return f
}

// proxyBuffers lends the forwarder's proxy its copy buffers.
type proxyBuffers struct{ pool sync.Pool }

// proxyBufferSize is the size io.Copy would allocate.
const proxyBufferSize = 32 << 10

// Get implements httputil.BufferPool.
func (p *proxyBuffers) Get() []byte {
	if b, ok := p.pool.Get().([]byte); ok {
		return b
	}
	return make([]byte, proxyBufferSize)
}

// Put implements httputil.BufferPool.
func (p *proxyBuffers) Put(b []byte) {
	if cap(b) == proxyBufferSize {
		// Boxing the slice costs a small allocation per Put, against 32 KB
		// per answer without the pool.
		p.pool.Put(b[:proxyBufferSize])
	}
}

// serve proxies r to the leader at leaderAddr, signed with the join token
// as sig says (nil: not signed), giving up at deadline, and returns the
// error that kept the proxy from answering, if any; it has then written
// nothing.
func (f *forwarder) serve(w http.ResponseWriter, r *http.Request, leaderAddr string, sig *forwardSig, deadline time.Time) error {
	var ferr error
	dctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	ctx := context.WithValue(context.WithValue(dctx, leaderAddrKey{}, leaderAddr), forwardErrKey{}, &ferr)
	if sig != nil {
		ctx = context.WithValue(ctx, forwardBodyKey{}, sig)
	}
	f.proxy.ServeHTTP(w, r.WithContext(ctx))
	return ferr
}

// keepError is the proxy's error handler: it hands the error to serve's
// caller; a request not sent through serve gets its error answer at once.
func (f *forwarder) keepError(w http.ResponseWriter, r *http.Request, err error) {
	if p, ok := r.Context().Value(forwardErrKey{}).(*error); ok {
		*p = err
		return
	}
	f.failed(w, r, err)
}

func (f *forwarder) failed(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeError(w, Errorf(http.StatusRequestEntityTooLarge, "request body too large: %w", err))
		return
	}
	f.logger.Warn("forwarding to the leader failed", "path", r.URL.Path, "error", err)
	if errors.Is(err, errNotLeaderAnswer) {
		writeError(w, Errorf(http.StatusInternalServerError,
			"forwarding to the leader: no leader answered in time (%w): %w", err, cluster.ErrNoLeader))
		return
	}
	if errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil {
		writeError(w, Errorf(http.StatusInternalServerError,
			"forwarding to the leader: no answer in time (%w): %w", err, cluster.ErrNoLeader))
		return
	}
	writeError(w, Errorf(http.StatusInternalServerError, "forwarding to the leader: %w", err))
}
