package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/internal/loopback"
)

// getHealth returns the status code and parts of GET /v1/agent/health.
func getHealth(t *testing.T, addr string) (int, map[string]healthPart) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/v1/agent/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]healthPart
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("health answer: %v", err)
	}
	return resp.StatusCode, out
}

// Every agent answers its health with a part per role it runs: a
// client-only agent too, once its node is registered.
func TestHealthHasAPartPerRole(t *testing.T) {
	s := startAgent(t, "s1", 1)
	waitFor(t, "a healthy server", func() error {
		if code, parts := getHealth(t, s.HTTPAddr()); code != http.StatusOK || !parts["server"].Ok {
			return fmt.Errorf("server health %d %+v", code, parts)
		}
		return nil
	})
	if _, parts := getHealth(t, s.HTTPAddr()); len(parts) != 1 {
		t.Errorf("a server-only agent has parts %+v, want only server", parts)
	}

	c, err := New(Config{
		Client: true, Servers: []string{s.HTTPAddr()}, DataDir: filepath.Join(t.TempDir(), "c1"),
		HTTPAddr: loopback.Addr(t), NodeName: "c1",
		Logger: hclog.New(&hclog.LoggerOptions{Name: "c1", Output: tWriter{t}, Level: hclog.Warn}),
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	t.Cleanup(func() { _ = c.Shutdown() })
	waitFor(t, "a healthy client", func() error {
		code, parts := getHealth(t, c.HTTPAddr())
		if _, isServer := parts["server"]; isServer {
			t.Fatalf("a client-only agent reports a server part: %+v", parts)
		}
		if code != http.StatusOK || !parts["client"].Ok {
			return fmt.Errorf("client health %d %+v", code, parts)
		}
		return nil
	})
}
