package httpapi

import (
	"container/heap"
	"crypto/sha256"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/droverhq/drover/internal/joinauth"
	"github.com/droverhq/drover/structs"
)

// Each remote address, and each token, may send at most WriteLimit.Rate
// writes a second, in bursts of WriteLimit.Burst (a token bucket per
// address and one per token), so that a flood of writes from one client
// cannot fill the Raft log and starve the scheduler. A write is refused
// when either of its buckets is empty: a token is limited from whichever
// address it comes, and an address whatever tokens it presents. The
// refusal is 429 Too Many Requests with Retry-After (whole seconds).
// Reads are not limited. A token (X-Nomad-Token, or a Bearer
// Authorization) is kept only as its SHA-256, with ACLs on or off.
//
// Not counted: the client routes (/v1/internal/ and a node's allocations)
// of a client node that presents the secret of a registered node, or of
// any client when ACLs are off (clients are not authenticated then, and
// thousands of them heartbeat through few addresses).
//
// A write sent to a follower is counted once, against the address and the
// token of the caller that sent it, never against the follower's address:
//
//   - to a leader of ServerBuild 2 or later, the follower forwards it
//     uncounted, signed with the join token in joinauth.ForwardV3, which
//     carries the caller's address; the leader counts it against that
//     address and the request's token. A caller's writes then share one
//     allowance whichever servers they are sent to.
//   - to a leader of an earlier build, which verifies only ForwardV2, the
//     follower counts it against the caller and forwards it signed in
//     ForwardV2; the leader does not count it again. A leader of this
//     build takes a ForwardV2 forward (from a follower of the previous
//     build) the same way.
//
// Without a join token forwarded writes are not signed and count on the
// leader against the follower's address and the request's token.
//
// Each kind of bucket is bounded (maxBuckets). Past it, the least
// recently used of the buckets that have refilled is forgotten first —
// such a bucket holds nothing a new one would not —, and when none has,
// the one full again soonest: many addresses sending a write each cannot
// free a limited address or token from its limit.

// WriteLimit is the write limit of each address and of each token; Rate
// <= 0 turns it off.
type WriteLimit struct {
	Rate  float64 // writes per second
	Burst int     // writes at once; at least 1
}

// DefaultWriteLimit is generous: far above what a person or a CI system
// sends, well below what would keep the Raft log busy.
var DefaultWriteLimit = WriteLimit{Rate: 100, Burst: 200}

// WithWriteLimit sets the write limit of each address and each token.
func WithWriteLimit(l WriteLimit) Option {
	return func(s *Server) { s.writes = newRateLimiter(l) }
}

// maxBuckets bounds the addresses, and apart the tokens, remembered.
const maxBuckets = 10000

// rateLimiter holds one token bucket per address and one per token.
type rateLimiter struct {
	limit WriteLimit

	mu     sync.Mutex
	addrs  bucketSet
	tokens bucketSet // by the token's SHA-256
}

func newRateLimiter(l WriteLimit) *rateLimiter {
	if l.Burst < 1 {
		l.Burst = 1
	}
	return &rateLimiter{limit: l, addrs: newBucketSet(maxBuckets), tokens: newBucketSet(maxBuckets)}
}

// verdict is a write's fate: allowed, or refused for its address's
// bucket, its token's, or both, with the wait until both have a write.
type verdict struct {
	addrEmpty, tokenEmpty bool
	retryAfter            time.Duration
}

func (v verdict) ok() bool { return !v.addrEmpty && !v.tokenEmpty }

// take spends one write of host's bucket and of tokenKey's (none when
// empty) at now, or spends none and says which is empty and how long
// until both have a write.
func (l *rateLimiter) take(host, tokenKey string, now time.Time) verdict {
	if l == nil || l.limit.Rate <= 0 {
		return verdict{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.addrs.get(host, now, l.limit)
	var t *bucket
	if tokenKey != "" {
		t = l.tokens.get(tokenKey, now, l.limit)
	}
	v := verdict{addrEmpty: a.tokens < 1, tokenEmpty: t != nil && t.tokens < 1}
	if !v.ok() {
		v.retryAfter = a.wait(l.limit)
		if t != nil {
			v.retryAfter = max(v.retryAfter, t.wait(l.limit))
		}
		return v
	}
	l.addrs.spend(a, l.limit)
	if t != nil {
		l.tokens.spend(t, l.limit)
	}
	return v
}

// bucket is one address's or token's writes.
type bucket struct {
	key    string
	tokens float64
	last   time.Time
	// fullAt is when the bucket is full again if nothing is spent, or
	// its last use when later: the set forgets the earliest first.
	fullAt time.Time
	index  int // in bucketSet.order
}

// wait is how long until the bucket holds a write.
func (b *bucket) wait(l WriteLimit) time.Duration {
	return seconds((1 - b.tokens) / l.Rate)
}

// seconds converts s seconds to a Duration, bounded to about 30 years.
func seconds(s float64) time.Duration {
	return time.Duration(math.Min(math.Max(s, 0), 1e9) * float64(time.Second))
}

// bucketSet holds up to max buckets by key, ordered for eviction by
// fullAt.
type bucketSet struct {
	max   int
	byKey map[string]*bucket
	order bucketHeap
}

func newBucketSet(capacity int) bucketSet {
	return bucketSet{max: capacity, byKey: map[string]*bucket{}}
}

// get returns key's bucket refilled to now; a new one is full, and takes
// the place of the first in order when the set is full.
func (s *bucketSet) get(key string, now time.Time, l WriteLimit) *bucket {
	b := s.byKey[key]
	if b == nil {
		for len(s.order) >= s.max {
			old := heap.Pop(&s.order).(*bucket)
			delete(s.byKey, old.key)
		}
		b = &bucket{key: key, tokens: float64(l.Burst), last: now, fullAt: now}
		s.byKey[key] = b
		heap.Push(&s.order, b)
		return b
	}
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = math.Min(float64(l.Burst), b.tokens+elapsed.Seconds()*l.Rate)
		b.last = now
		if b.fullAt.Before(now) {
			b.fullAt = now
		}
		heap.Fix(&s.order, b.index)
	}
	return b
}

// spend takes one write of b, which holds one.
func (s *bucketSet) spend(b *bucket, l WriteLimit) {
	b.tokens--
	b.fullAt = b.last.Add(seconds((float64(l.Burst) - b.tokens) / l.Rate))
	heap.Fix(&s.order, b.index)
}

// bucketHeap orders buckets by fullAt: the least recently used of the
// full ones first, then those full again soonest.
type bucketHeap []*bucket

func (h bucketHeap) Len() int           { return len(h) }
func (h bucketHeap) Less(i, j int) bool { return h[i].fullAt.Before(h[j].fullAt) }
func (h bucketHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *bucketHeap) Push(x any) {
	b := x.(*bucket)
	b.index = len(*h)
	*h = append(*h, b)
}
func (h *bucketHeap) Pop() any {
	old := *h
	b := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return b
}

// tokenKey is the key of a token's bucket: its SHA-256, so that the
// limiter never holds a secret. Empty without a token.
func tokenKey(token string) string {
	if token == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(token))
	return string(sum[:])
}

// allowWrite spends one write of the sender's buckets (its address's and
// its token's) for a write route, or answers 429 and reports false.
func (s *Server) allowWrite(w http.ResponseWriter, r *http.Request, rt route) bool {
	if rt.kind != writeRoute || s.nodeExempt(r, rt) {
		return true
	}
	host := remoteHost(r)
	// A body that cannot be read is the handler's to refuse.
	switch f, _ := s.forwardFormat(r); {
	case f == joinauth.ForwardV2:
		// The follower counted it (see the comment at the top).
		return true
	case f >= joinauth.ForwardV3:
		host = r.Header.Get(joinauth.OriginHeader)
	case s.leaderCounts(r):
		return true
	}
	v := s.writes.take(host, tokenKey(TokenFromRequest(r)), s.now())
	if v.ok() {
		return true
	}
	secs := max(1, int(math.Ceil(v.retryAfter.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	who := "from " + host
	switch {
	case v.addrEmpty && v.tokenEmpty:
		who = "from " + host + " and with this token"
	case v.tokenEmpty:
		who = "with this token (from any address)"
	}
	writeError(w, Errorf(http.StatusTooManyRequests,
		"too many writes %s: at most %g a second in bursts of %d, per address and per token (limits.http_write_rate, http_write_burst); retry in %ds",
		who, s.writes.limit.Rate, s.writes.limit.Burst, secs))
	return false
}

// leaderCounts reports whether this server, a follower, forwards the write
// r to a leader that counts it against r's caller: signed in ForwardV3,
// the leader's build accepting it.
func (s *Server) leaderCounts(r *http.Request) bool {
	return s.access.JoinToken != "" && r.Header.Get(ForwardedHeader) == "" && !s.backend.IsLeader() &&
		joinauth.ForwardFormatFor(s.leaderBuild()) >= joinauth.ForwardV3
}

// nodeExempt reports whether a write does not count as a client node's
// (see the comment at the top).
func (s *Server) nodeExempt(r *http.Request, rt route) bool {
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
	return false
}
