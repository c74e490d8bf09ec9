package httpapi

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Many addresses sending a write each do not free a limited address: the
// buckets forgotten when the set is full are those full again soonest,
// and the set stays bounded.
func TestWriteLimitForgetsOtherAddressesBeforeALimitedOne(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newRateLimiter(WriteLimit{Rate: 1, Burst: 3})
	const limited = "192.0.2.1"
	for range 3 {
		if v := l.take(limited, "", now); !v.ok() {
			t.Fatalf("the burst: %+v", v)
		}
	}
	if v := l.take(limited, "", now); v.ok() {
		t.Fatal("past the burst: allowed")
	}
	for i := range maxBuckets + 1 {
		now = now.Add(time.Microsecond)
		if v := l.take(fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&0xff, i&0xff), "", now); !v.ok() {
			t.Fatalf("address %d: %+v", i, v)
		}
	}
	if n := len(l.addrs.byKey); n > maxBuckets || len(l.addrs.order) != n {
		t.Fatalf("%d addresses tracked (%d ordered), want at most %d", n, len(l.addrs.order), maxBuckets)
	}
	if v := l.take(limited, "", now); v.ok() || !v.addrEmpty {
		t.Fatalf("the limited address after %d others: %+v, want still limited", maxBuckets+1, v)
	}
	// Its bucket refills as before: one write a second.
	if v := l.take(limited, "", now.Add(time.Second)); !v.ok() {
		t.Fatalf("a second later: %+v", v)
	}
}

// Among buckets as full, the least recently used is forgotten first.
func TestWriteLimitForgetsTheLeastRecentlyUsedFullBucket(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lim := WriteLimit{Rate: 1, Burst: 3}
	s := newBucketSet(2)
	s.get("a", now, lim)
	s.get("b", now.Add(time.Second), lim)
	s.get("a", now.Add(2*time.Second), lim) // a is used again
	s.get("c", now.Add(3*time.Second), lim)
	if _, ok := s.byKey["b"]; ok || len(s.byKey) != 2 {
		t.Fatalf("kept %v, want a and c", keys(s))
	}
	// A bucket that is not full stays over a full one used since.
	s.spend(s.get("a", now.Add(4*time.Second), lim), lim)
	s.get("c", now.Add(5*time.Second), lim)
	s.get("d", now.Add(6*time.Second), lim)
	if _, ok := s.byKey["a"]; !ok {
		t.Fatalf("kept %v, want a, which is not full", keys(s))
	}
}

func keys(s bucketSet) []string {
	var out []string
	for k := range s.byKey {
		out = append(out, k)
	}
	return out
}

// A token is limited wherever it comes from, an address whatever token it
// presents; a refused write spends from neither bucket. The answer never
// names the token.
func TestWriteLimitFollowsATokenAcrossAddresses(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New(newFakeBackend(), nil, WithClock(func() time.Time { return now }), WithWriteLimit(WriteLimit{Rate: 1, Burst: 3}))
	const token = "5ec12e7a-0000-4000-8000-00000000beef"
	send := func(remote, token string, bearer bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest("PUT", "/v1/jobs", strings.NewReader(webJob))
		req.RemoteAddr = remote
		switch {
		case token != "" && bearer:
			req.Header.Set("Authorization", "Bearer "+token)
		case token != "":
			req.Header.Set(TokenHeader, token)
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	const a, b, c = "192.0.2.1:1000", "192.0.2.2:1000", "192.0.2.3:1000"
	for i := range 3 {
		if rec := send(a, token, i == 2); rec.Code != 200 {
			t.Fatalf("write %d of the burst: %d %s", i, rec.Code, rec.Body.String())
		}
	}
	rec := send(b, token, false)
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "1" || !strings.Contains(rec.Body.String(), "with this token") {
		t.Fatalf("the limited token from another address: %d %q %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
	}
	if rec := send(c, token, true); rec.Code != 429 {
		t.Fatalf("the limited token as a Bearer from a third address: %d %s", rec.Code, rec.Body.String())
	}
	if strings.Contains(rec.Body.String(), token) {
		t.Fatalf("the answer names the token: %s", rec.Body.String())
	}
	if rec := send(b, "", false); rec.Code != 200 {
		t.Fatalf("the other address without the token (its bucket spent nothing): %d %s", rec.Code, rec.Body.String())
	}
	if rec := send(a, "another-token", false); rec.Code != 429 || !strings.Contains(rec.Body.String(), "too many writes from 192.0.2.1") {
		t.Fatalf("another token from the limited address: %d %s", rec.Code, rec.Body.String())
	}
	for k := range s.writes.tokens.byKey {
		if strings.Contains(k, token) {
			t.Fatal("the limiter keeps the token itself")
		}
	}
	now = now.Add(time.Second)
	if rec := send(b, token, false); rec.Code != 200 {
		t.Fatalf("a second later: %d %s", rec.Code, rec.Body.String())
	}
	if rec := send(c, token, false); rec.Code != 429 {
		t.Fatalf("the refill is one a second for the token too: %d", rec.Code)
	}
}

// The tokens tracked are bounded too.
func TestWriteLimitTracksBoundedTokens(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newRateLimiter(WriteLimit{Rate: 1, Burst: 1})
	for i := range maxBuckets + 10 {
		l.take(fmt.Sprintf("10.0.%d.%d", i>>8&0xff, i&0xff), tokenKey(fmt.Sprint("token-", i)), now)
	}
	if n := len(l.tokens.byKey); n != maxBuckets || len(l.tokens.order) != n {
		t.Fatalf("%d tokens tracked, want %d", n, maxBuckets)
	}
}
