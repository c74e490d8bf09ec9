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
