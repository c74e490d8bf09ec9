// Package joinauth proves that a server joining the cluster holds the
// cluster's join secret (agent configuration server.join_token) without
// sending the secret: the joining server signs the body of its join
// request with HMAC-SHA256 keyed by the secret, and the receiving server
// checks the signature in constant time. A request that is captured and
// replayed can only announce again the server that sent it; one changed in
// transit (say, to name another Raft address) fails the check. The answer
// is signed the same way, bound to the request, so that the joining server
// trusts only members and bootstrap facts that come from the cluster.
package joinauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// Header carries the signature of a join request.
const Header = "X-Drover-Join-Signature"

// domain separates these signatures from any other use of the secret.
const domain = "drover join v1\n"

// Sign returns the signature of body under token.
func Sign(token string, body []byte) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(domain))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether sig is body's signature under token, comparing
// in constant time. An empty token verifies nothing.
func Verify(token string, body []byte, sig string) bool {
	if token == "" {
		return false
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	want, _ := hex.DecodeString(Sign(token, body))
	return hmac.Equal(got, want)
}

// SignResponse returns the signature of a join answer's body, bound to
// the request it answers (requestSig, the request's signature), so that
// the joining server knows the answer comes from a server of the cluster
// and was not replayed from another exchange.
func SignResponse(token, requestSig string, body []byte) string {
	return Sign(token, append([]byte("response\n"+requestSig+"\n"), body...))
}

// VerifyResponse checks a join answer's signature in constant time.
func VerifyResponse(token, requestSig string, body []byte, sig string) bool {
	return Verify(token, append([]byte("response\n"+requestSig+"\n"), body...), sig)
}

// ForwardHeader carries a server's proof, on a request it forwards to the
// leader (or on its own probe of another server), that it is a server of
// the cluster: "<unix seconds>.<signature>". The signature covers the
// time, the method, the URI and the SHA-256 of the body, so that a
// captured request cannot be sent again with another body (say, another
// snapshot to restore) while its time is still accepted.
const ForwardHeader = "X-Drover-Forward-Signature"

// The forward signature's layouts. Each names its layout on the signed
// message's first line, so that no message of one is a message of
// another; the header's value says which one it is.
//
//   - ForwardV2, "<unix seconds>.<signature>": the time, the method, the
//     URI and the body's SHA-256. Sent by every build up to ServerBuild 1
//     (package structs), accepted by this one until its successor: a
//     release accepts what the previous one sends (the version-skew rule,
//     website/security.md).
//   - ForwardV3, "v3.<unix seconds>.<signature>": v2's, and the original
//     caller's address (OriginHeader), for the leader to count the write
//     against that caller. Sent to a leader of ServerBuild 2 or later.
//
// The first layout ("forward\n", without the body) is not accepted.
const (
	ForwardV2 = 2
	ForwardV3 = 3
)

// OriginHeader carries, on a request forwarded with ForwardV3, the address
// (host) of the caller the forwarding server received it from; the
// signature covers it.
const OriginHeader = "X-Drover-Forwarded-For"

// ForwardFormatFor is the layout to sign a request with for a receiving
// server that announced ServerBuild build (0: a build from before builds
// were numbered): the newest it accepts.
func ForwardFormatFor(build int) int {
	if build >= 2 {
		return ForwardV3
	}
	return ForwardV2
}

const (
	forwardDomain   = "forward v2\n"
	forwardDomainV3 = "forward v3\n"
	v3Prefix        = "v3."
)

// forwardWindow bounds how old (or how far in the future) a forward
// signature may be: a captured request can be replayed only within it,
// and only with the same method, URI and body.
const forwardWindow = 30

// EmptyBody is the SHA-256 of an empty body.
var EmptyBody = sha256.Sum256(nil)

// forwardMessage is what a forward signature signs.
func forwardMessage(ts, method, requestURI string, bodySum [sha256.Size]byte) []byte {
	return []byte(forwardDomain + ts + "\n" + method + " " + requestURI + "\n" + hex.EncodeToString(bodySum[:]))
}

// SignForwardBody returns the ForwardHeader value for a request sent at
// now whose body has the SHA-256 bodySum (EmptyBody when it has none).
func SignForwardBody(token string, now int64, method, requestURI string, bodySum [sha256.Size]byte) string {
	ts := strconv.FormatInt(now, 10)
	return ts + "." + Sign(token, forwardMessage(ts, method, requestURI, bodySum))
}

// VerifyForwardBody checks a ForwardHeader value at now against the
// request's method, URI and the SHA-256 of the body it carried, as
// received (not as announced by the sender).
func VerifyForwardBody(token, header string, now int64, method, requestURI string, bodySum [sha256.Size]byte) bool {
	ts, sig, ok := strings.Cut(header, ".")
	if !ok {
		return false
	}
	if !inWindow(ts, now) {
		return false
	}
	return Verify(token, forwardMessage(ts, method, requestURI, bodySum), sig)
}

// SignForwardV3 returns the ForwardV3 ForwardHeader value for a request
// sent at now, whose body has the SHA-256 bodySum, received from the
// caller at origin (OriginHeader's value).
func SignForwardV3(token string, now int64, method, requestURI string, bodySum [sha256.Size]byte, origin string) string {
	ts := strconv.FormatInt(now, 10)
	return v3Prefix + ts + "." + Sign(token, forwardMessageV3(ts, method, requestURI, bodySum, origin))
}

func forwardMessageV3(ts, method, requestURI string, bodySum [sha256.Size]byte, origin string) []byte {
	return []byte(forwardDomainV3 + ts + "\n" + method + " " + requestURI + "\n" + hex.EncodeToString(bodySum[:]) + "\n" + origin)
}

// VerifyForwardAny checks a ForwardHeader value of any accepted layout at
// now, against the request's method, URI, the SHA-256 of the body it
// carried and its OriginHeader; it returns the layout (ForwardV2 or
// ForwardV3), or 0 when the signature does not verify.
func VerifyForwardAny(token, header string, now int64, method, requestURI string, bodySum [sha256.Size]byte, origin string) int {
	rest, v3 := strings.CutPrefix(header, v3Prefix)
	if !v3 {
		if VerifyForwardBody(token, header, now, method, requestURI, bodySum) {
			return ForwardV2
		}
		return 0
	}
	ts, sig, ok := strings.Cut(rest, ".")
	if !ok || origin == "" || !inWindow(ts, now) {
		return 0
	}
	if !Verify(token, forwardMessageV3(ts, method, requestURI, bodySum, origin), sig) {
		return 0
	}
	return ForwardV3
}

// inWindow reports whether the signature time ts is within forwardWindow
// of now.
func inWindow(ts string, now int64) bool {
	n, err := strconv.ParseInt(ts, 10, 64)
	return err == nil && n >= now-forwardWindow && n <= now+forwardWindow
}

// SignForward returns the ForwardHeader value for a request without a
// body (a probe), sent at now.
func SignForward(token string, now int64, method, requestURI string) string {
	return SignForwardBody(token, now, method, requestURI, EmptyBody)
}

// VerifyForward checks a ForwardHeader value at now for a request without
// a body: the signature must cover the empty body. A caller that serves
// a request with a body must hash that body and use VerifyForwardBody.
func VerifyForward(token, header string, now int64, method, requestURI string) bool {
	return VerifyForwardBody(token, header, now, method, requestURI, EmptyBody)
}
