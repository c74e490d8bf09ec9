package httpapi

import (
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/joinauth"
	"github.com/droverhq/drover/structs"
)

// buildBackend is a follower's backend that knows the leader's build.
type buildBackend struct {
	*fakeBackend
	build int
}

func (b *buildBackend) LeaderBuild() int { return b.build }

// callerHeader names, in these tests, the caller a request stands for: the
// follower's listener takes it as the request's remote address, so that
// several callers can be told apart over loopback.
const callerHeader = "X-Test-Caller"

// newBuildFollower serves a follower whose leader (at leaderURL) announced
// build, with the join token "k", and the given write limit.
func newBuildFollower(t *testing.T, leaderURL string, build int, limit WriteLimit) *httptest.Server {
	t.Helper()
	fb := newFakeBackend()
	fb.leader, fb.leaderHTTP = false, strings.TrimPrefix(leaderURL, "http://")
	api := New(&buildBackend{fakeBackend: fb, build: build}, nil, WithAccess(Access{JoinToken: "k"}),
		WithForwardHold(testForwardHold), WithWriteLimit(limit)).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := r.Header.Get(callerHeader); c != "" {
			r.RemoteAddr = c + ":40000"
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// writeAs registers the web job through srv as caller.
func writeAs(t *testing.T, srv *httptest.Server, caller string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("PUT", srv.URL+"/v1/jobs", strings.NewReader(webJob))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(callerHeader, caller)
	code, body, _ := send(t, req)
	return code, body
}

// A follower signs what it forwards in the layout the leader's build
// accepts: ForwardV2, which the previous build verifies, to a leader that
// announced no build or build 1; ForwardV3, with the caller's address, to
// one of this build.
func TestForwardSignedInTheLeadersLayout(t *testing.T) {
	for _, tc := range []struct {
		build      int
		want       int
		wantOrigin string
	}{
		{0, joinauth.ForwardV2, ""},
		{1, joinauth.ForwardV2, ""},
		{structs.ServerBuild, joinauth.ForwardV3, "198.51.100.1"},
	} {
		var sig, origin string
		var body []byte
		leader := newRemoteLeader(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sig, origin = r.Header.Get(joinauth.ForwardHeader), r.Header.Get(joinauth.OriginHeader)
			body, _ = io.ReadAll(r.Body)
			w.WriteHeader(200)
		}))
		follower := newBuildFollower(t, leader.srv.URL, tc.build, WriteLimit{})
		if code, body := writeAs(t, follower, "198.51.100.1"); code != 200 {
			t.Fatalf("build %d: %d %s", tc.build, code, body)
		}
		// The signature covers the body as forwarded (the follower names
		// the namespace in it).
		sum := sha256.Sum256(body)
		got := joinauth.VerifyForwardAny("k", sig, time.Now().Unix(), "PUT", "/v1/jobs", sum, origin)
		if got != tc.want || origin != tc.wantOrigin {
			t.Errorf("leader of build %d got layout %d with origin %q (%q), want %d with %q", tc.build, got, origin, sig, tc.want, tc.wantOrigin)
		}
		// What the previous build verifies: ForwardV2 only.
		if old := joinauth.VerifyForwardBody("k", sig, time.Now().Unix(), "PUT", "/v1/jobs", sum); old != (tc.want == joinauth.ForwardV2) {
			t.Errorf("build %d: the previous build's check says %v", tc.build, old)
		}
	}
}

// A forwarded write is counted against the caller that sent it, never
// against the forwarding follower's address, whichever build the leader
// is: a leader of this build counts it against the address the ForwardV3
// signature carries; to a leader of the previous build (ForwardV2, which
// it does not count again) the follower counts it itself. Either way each
// caller behind one follower has its own allowance.
func TestForwardedWriteCountedAgainstItsCaller(t *testing.T) {
	one := WriteLimit{Rate: 0.001, Burst: 1}
	for _, build := range []int{0, structs.ServerBuild} {
		leader := newRemoteLeader(t, New(newFakeBackend(), nil, WithAccess(Access{JoinToken: "k"}), WithWriteLimit(one)).Handler())
		// The follower's own limit is the leader's: with ForwardV2 it is
		// the one that counts.
		follower := newBuildFollower(t, leader.srv.URL, build, one)
		for _, step := range []struct {
			caller string
			want   int
		}{
			{"198.51.100.1", 200},
			{"198.51.100.2", 200},
			{"198.51.100.3", 200},
			{"198.51.100.1", 429},
		} {
			code, body := writeAs(t, follower, step.caller)
			if code != step.want {
				t.Errorf("leader of build %d, a write of %s: %d %s, want %d", build, step.caller, code, body, step.want)
			}
			if code == 429 && !strings.Contains(body, step.caller) {
				t.Errorf("leader of build %d: the refusal does not name the caller %s: %s", build, step.caller, body)
			}
		}
	}
}

// A leader of this build takes what a follower of the previous build
// forwards (ForwardV2) as counted already, and refuses to take an origin
// it cannot verify: a forged ForwardV3 or an origin changed in transit is
// counted against the address it came from.
func TestLeaderAcceptsThePreviousBuildsForwards(t *testing.T) {
	s := New(newFakeBackend(), nil, WithAccess(Access{JoinToken: "k"}), WithWriteLimit(WriteLimit{Rate: 0.001, Burst: 1}))
	sum := sha256.Sum256([]byte(webJob))
	put := func(from string, h http.Header) int {
		req := httptest.NewRequest("PUT", "/v1/jobs", strings.NewReader(webJob))
		req.RemoteAddr = from + ":1234"
		for k, v := range h {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec.Code
	}
	v2 := func() http.Header {
		return http.Header{ForwardedHeader: {"1"}, joinauth.ForwardHeader: {
			joinauth.SignForwardBody("k", time.Now().Unix(), "PUT", "/v1/jobs", sum)}}
	}
	for i := range 3 {
		if code := put("192.0.2.10", v2()); code != 200 {
			t.Fatalf("ForwardV2 write %d from a follower of the previous build: %d", i, code)
		}
	}
	v3 := func(signed, sent string) http.Header {
		return http.Header{ForwardedHeader: {"1"}, joinauth.OriginHeader: {sent}, joinauth.ForwardHeader: {
			joinauth.SignForwardV3("k", time.Now().Unix(), "PUT", "/v1/jobs", sum, signed)}}
	}
	// Two writes of one caller through two followers share its allowance.
	if code := put("192.0.2.11", v3("198.51.100.9", "198.51.100.9")); code != 200 {
		t.Fatalf("ForwardV3: %d", code)
	}
	if code := put("192.0.2.12", v3("198.51.100.9", "198.51.100.9")); code != 429 {
		t.Fatalf("the caller's second write through another follower: %d, want 429", code)
	}
	// An origin changed after signing does not verify: counted against
	// the sender's address (its first write passes, its second not).
	if code := put("192.0.2.13", v3("198.51.100.9", "198.51.100.10")); code != 200 {
		t.Fatalf("a changed origin, first write of its sender: %d", code)
	}
	if code := put("192.0.2.13", v3("198.51.100.9", "198.51.100.11")); code != 429 {
		t.Fatalf("a changed origin, second write of its sender: %d, want 429", code)
	}
}
