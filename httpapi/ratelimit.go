package httpapi

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/droverhq/drover/structs"
)

// Each remote address may send at most WriteLimit.Rate writes a second,
// in bursts of WriteLimit.Burst (a token bucket per address), so that a
// flood of writes from one client cannot fill the Raft log and starve
// the scheduler. A write over the limit is answered 429 Too Many
// Requests with Retry-After (whole seconds). Reads are not limited.
//
// Not counted: the client routes (/v1/internal/ and a node's allocations)
// of a client node that presents the secret of a registered node, or of
// any client when ACLs are off (clients are not authenticated then, and
// thousands of them heartbeat through few addresses); and requests that
// a follower forwards signed with the join token (the follower counted
// them against their sender). Without a join token, forwarded writes
// count against the follower's address.

// WriteLimit is the per-address write limit; Rate <= 0 turns it off.
type WriteLimit struct {
	Rate  float64 // writes per second
	Burst int     // writes at once; at least 1
}

// DefaultWriteLimit is generous: far above what a person or a CI system
// sends, well below what would keep the Raft log busy.
var DefaultWriteLimit = WriteLimit{Rate: 100, Burst: 200}

// WithWriteLimit sets the per-address write limit.
func WithWriteLimit(l WriteLimit) Option {
	return func(s *Server) { s.writes = newRateLimiter(l) }
}

// rateLimiter holds one token bucket per address.
type rateLimiter struct {
	limit WriteLimit

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// maxBuckets bounds the addresses remembered; past it, full buckets are
// forgotten (they would be full again anyway).
const maxBuckets = 10000

func newRateLimiter(l WriteLimit) *rateLimiter {
	if l.Burst < 1 {
		l.Burst = 1
	}
	return &rateLimiter{limit: l, buckets: map[string]*bucket{}}
}

// take spends one write of host's bucket at now, or says how long until
// one is available.
func (l *rateLimiter) take(host string, now time.Time) (ok bool, retryAfter time.Duration) {
	if l == nil || l.limit.Rate <= 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[host]
	if b == nil {
		if len(l.buckets) >= maxBuckets {
			l.sweep(now)
		}
		b = &bucket{tokens: float64(l.limit.Burst), last: now}
		l.buckets[host] = b
	}
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = math.Min(float64(l.limit.Burst), b.tokens+elapsed.Seconds()*l.limit.Rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.limit.Rate * float64(time.Second))
}

// sweep forgets the buckets that have refilled.
func (l *rateLimiter) sweep(now time.Time) {
	for h, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.limit.Rate >= float64(l.limit.Burst) {
			delete(l.buckets, h)
		}
	}
	if len(l.buckets) >= maxBuckets {
		clear(l.buckets)
	}
}

// allowWrite spends one write of the sender's bucket for a write route,
// or answers 429 and reports false.
func (s *Server) allowWrite(w http.ResponseWriter, r *http.Request, rt route) bool {
	if rt.kind != writeRoute || s.writeExempt(r, rt) {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ok, wait := s.writes.take(host, s.now())
	if ok {
		return true
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, Errorf(http.StatusTooManyRequests,
		"too many writes from %s: at most %g a second in bursts of %d (limits.http_write_rate, http_write_burst); retry in %ds",
		host, s.writes.limit.Rate, s.writes.limit.Burst, secs))
	return false
}

// writeExempt reports whether a write does not count: a client node's
// (see the comment at the top), or one a server forwarded, signed over
// its body (which this reads, leaving a copy: see forwardSigned).
func (s *Server) writeExempt(r *http.Request, rt route) bool {
	switch rt.need.kind {
	case needNodeRegister, needNodeSelf, needNodeAny, needNodeReadOrSelf:
		if !s.aclConfig.Enabled {
			return true
		}
		if secret := TokenFromRequest(r); secret != "" {
			n, err := s.backend.State().Snapshot().NodeBySecretHash(structs.HashSecret(secret))
			if err == nil && n != nil {
				return true
			}
		}
	}
	// A body that cannot be read is the handler's to refuse.
	ok, _ := s.forwardSigned(r)
	return ok
}
