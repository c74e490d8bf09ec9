package joinauth

import (
	"crypto/sha256"
	"testing"
)

func TestSignAndVerify(t *testing.T) {
	body := []byte(`{"Self":{"ID":"a","RaftAddr":"127.0.0.1:4647"}}`)
	sig := Sign("s3cret", body)
	if !Verify("s3cret", body, sig) {
		t.Fatal("a good signature was refused")
	}
	for name, c := range map[string]struct {
		token, sig string
		body       []byte
	}{
		"wrong token":   {"other", sig, body},
		"changed body":  {"s3cret", sig, []byte(`{"Self":{"ID":"a","RaftAddr":"127.0.0.1:1"}}`)},
		"no signature":  {"s3cret", "", body},
		"not hex":       {"s3cret", "zz", body},
		"no token":      {"", Sign("", body), body},
		"truncated sig": {"s3cret", sig[:10], body},
	} {
		if Verify(c.token, c.body, c.sig) {
			t.Errorf("%s: verified", name)
		}
	}
}

func TestForwardSignature(t *testing.T) {
	h := SignForward("s3cret", 1000, "GET", "/v1/operator/snapshot")
	if !VerifyForward("s3cret", h, 1010, "GET", "/v1/operator/snapshot") {
		t.Fatal("a good forward signature was refused")
	}
	for name, ok := range map[string]bool{
		"wrong token": VerifyForward("other", h, 1000, "GET", "/v1/operator/snapshot"),
		"too old":     VerifyForward("s3cret", h, 1031, "GET", "/v1/operator/snapshot"),
		"too new":     VerifyForward("s3cret", h, 969, "GET", "/v1/operator/snapshot"),
		"other path":  VerifyForward("s3cret", h, 1000, "GET", "/v1/operator/snapshot?stale"),
		"other verb":  VerifyForward("s3cret", h, 1000, "PUT", "/v1/operator/snapshot"),
		"no header":   VerifyForward("s3cret", "", 1000, "GET", "/v1/operator/snapshot"),
		"no token":    VerifyForward("", SignForward("", 1000, "GET", "/"), 1000, "GET", "/"),
		"with a body": VerifyForwardBody("s3cret", h, 1000, "GET", "/v1/operator/snapshot", sha256.Sum256([]byte("x"))),
	} {
		if ok {
			t.Errorf("%s: verified", name)
		}
	}
}

// A forward signature covers the body: the same request with another body
// (a captured restore sent again with another snapshot) is refused.
func TestForwardSignatureCoversTheBody(t *testing.T) {
	snap := sha256.Sum256([]byte("SNAP one"))
	h := SignForwardBody("s3cret", 1000, "PUT", "/v1/operator/snapshot", snap)
	if !VerifyForwardBody("s3cret", h, 1000, "PUT", "/v1/operator/snapshot", snap) {
		t.Fatal("a good forward signature was refused")
	}
	for name, sum := range map[string][sha256.Size]byte{
		"another body": sha256.Sum256([]byte("SNAP two")),
		"no body":      EmptyBody,
	} {
		if VerifyForwardBody("s3cret", h, 1000, "PUT", "/v1/operator/snapshot", sum) {
			t.Errorf("%s: verified", name)
		}
	}
}

// A signature in the earlier layout (time, method and URI, no body) is
// refused, with or without a body.
func TestForwardSignatureOfTheEarlierLayoutIsRefused(t *testing.T) {
	old := "1000." + Sign("s3cret", []byte("forward\n1000\nPUT /v1/operator/snapshot"))
	if VerifyForward("s3cret", old, 1000, "PUT", "/v1/operator/snapshot") ||
		VerifyForwardBody("s3cret", old, 1000, "PUT", "/v1/operator/snapshot", sha256.Sum256([]byte("SNAP"))) {
		t.Fatal("a signature without the body's hash was accepted")
	}
}

func TestResponseSignatureIsBoundToTheRequest(t *testing.T) {
	body := []byte(`{"Self":{"ID":"b"}}`)
	sig := SignResponse("s3cret", "req-1", body)
	if !VerifyResponse("s3cret", "req-1", body, sig) {
		t.Fatal("a good answer was refused")
	}
	if VerifyResponse("s3cret", "req-2", body, sig) || VerifyResponse("other", "req-1", body, sig) ||
		VerifyResponse("s3cret", "req-1", []byte(`{"Self":{"ID":"c"}}`), sig) || Verify("s3cret", body, sig) {
		t.Fatal("an answer verified against another request, secret or body")
	}
}

// Both layouts verify while they are accepted; a ForwardV3 signature is
// bound to its origin and never verifies as ForwardV2 (what the previous
// build checks), and a ForwardV2 signature never as ForwardV3.
func TestForwardLayouts(t *testing.T) {
	const now = 1_700_000_000
	sum := sha256.Sum256([]byte("body"))
	v2 := SignForwardBody("k", now, "PUT", "/v1/jobs", sum)
	v3 := SignForwardV3("k", now, "PUT", "/v1/jobs", sum, "198.51.100.1")
	for name, c := range map[string]struct {
		header, origin string
		at             int64
		want           int
	}{
		"v2":                  {v2, "", now, ForwardV2},
		"v2 with an origin":   {v2, "198.51.100.1", now, ForwardV2},
		"v3":                  {v3, "198.51.100.1", now, ForwardV3},
		"v3, another origin":  {v3, "198.51.100.2", now, 0},
		"v3 without origin":   {v3, "", now, 0},
		"v3 too old":          {v3, "198.51.100.1", now + forwardWindow + 1, 0},
		"v3 as v2":            {v3[len(v3Prefix):], "198.51.100.1", now, 0},
		"v2 presented as v3":  {v3Prefix + v2, "198.51.100.1", now, 0},
		"v3 with another key": {SignForwardV3("x", now, "PUT", "/v1/jobs", sum, "198.51.100.1"), "198.51.100.1", now, 0},
	} {
		if got := VerifyForwardAny("k", c.header, c.at, "PUT", "/v1/jobs", sum, c.origin); got != c.want {
			t.Errorf("%s: layout %d, want %d", name, got, c.want)
		}
	}
	if VerifyForwardBody("k", v3, now, "PUT", "/v1/jobs", sum) {
		t.Error("the previous build's check took a ForwardV3 signature")
	}
	for build, want := range map[int]int{0: ForwardV2, 1: ForwardV2, 2: ForwardV3, 3: ForwardV3} {
		if got := ForwardFormatFor(build); got != want {
			t.Errorf("ForwardFormatFor(%d) = %d, want %d", build, got, want)
		}
	}
}
