package joinauth

import "testing"

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
		"other path":  VerifyForward("s3cret", h, 1000, "GET", "/v1/operator/snapshot?stale"),
		"other verb":  VerifyForward("s3cret", h, 1000, "PUT", "/v1/operator/snapshot"),
		"no header":   VerifyForward("s3cret", "", 1000, "GET", "/v1/operator/snapshot"),
		"no token":    VerifyForward("", SignForward("", 1000, "GET", "/"), 1000, "GET", "/"),
	} {
		if ok {
			t.Errorf("%s: verified", name)
		}
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
