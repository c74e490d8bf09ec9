package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rebindingGet sends a GET to url under the Host header host (Go's
// client takes it from Request.Host, not from the headers), with headers.
func rebindingGet(t *testing.T, url, host string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// A dev agent (loopback only) answers no request sent under a name that a
// web page's attacker may point at 127.0.0.1 (DNS rebinding), reads
// included: 403 naming the Host; under 127.0.0.1 and localhost it
// answers, and so do the CLI and Nomad's Go client (the other tests).
func TestRebindingHostRefused(t *testing.T) {
	p := startDevAgent(t)
	base := "http://" + p.httpAddr
	_, port, _ := strings.Cut(p.httpAddr, ":")
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.nip.io:" + port} {
		for _, path := range []string{"/v1/jobs", "/v1/agent/health", "/ui/"} {
			code, out := rebindingGet(t, base+path, host, nil)
			if code != 403 || !strings.Contains(out, `"`+host+`"`) || !strings.Contains(out, "http_allowed_hosts") {
				t.Errorf("GET %s with Host %s: %d %s, want 403 naming the Host", path, host, code, out)
			}
		}
		// A page of the rebound name may send any header: a forwarded
		// mark does not let it through.
		if code, out := rebindingGet(t, base+"/v1/jobs", host, map[string]string{"X-Drover-Forwarded": "1"}); code != 403 {
			t.Errorf("a forwarded GET with Host %s: %d %s, want 403", host, code, out)
		}
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "localhost"} {
		if code, out := rebindingGet(t, base+"/v1/jobs", host, nil); code != 200 {
			t.Errorf("GET /v1/jobs with Host %s: %d %s, want 200", host, code, out)
		}
	}
}
