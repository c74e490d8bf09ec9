package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestAutopilotCommandsAgainstLiveServers(t *testing.T) {
	servers := startServers(t)
	addr := servers[0].HTTPAddr()
	code, out, errOut := runBounded(t, "", "operator", "autopilot", "get-config", "-address", addr)
	if code != 0 || !strings.Contains(out, "CleanupDeadServers = true\n") || !strings.Contains(out, "ServerStabilizationTime = 10s\n") {
		t.Fatalf("get-config: code %d, out %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runBounded(t, "", "operator", "autopilot", "set-config", "-address", addr,
		"-server-stabilization-time", "2s", "-min-quorum", "3")
	if code != 0 || !strings.Contains(out, "Configuration updated!") {
		t.Fatalf("set-config: code %d, out %q, stderr %q", code, out, errOut)
	}
	// Every server answers with the replicated configuration.
	for _, s := range servers {
		code, out, _ = runBounded(t, "", "operator", "autopilot", "get-config", "-address", s.HTTPAddr())
		if code != 0 || !strings.Contains(out, "ServerStabilizationTime = 2s\n") || !strings.Contains(out, "MinQuorum = 3\n") ||
			!strings.Contains(out, "CleanupDeadServers = true\n") {
			t.Fatalf("get-config after set-config via %s:\n%s", s.HTTPAddr(), out)
		}
	}
	waitUntil(t, "a healthy cluster", func() error {
		code, out, errOut := runBounded(t, "", "operator", "autopilot", "health", "-address", addr)
		if code != 0 || !strings.Contains(out, "Healthy: true\nFailure Tolerance: 1\n") {
			return fmt.Errorf("health: code %d, out %q, stderr %q", code, out, errOut)
		}
		return nil
	})
	code, out, _ = runBounded(t, "", "operator", "raft", "list-peers", "-address", addr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 4 || !strings.HasSuffix(lines[0], "LastIndex  Health") {
		t.Fatalf("list-peers:\n%s", out)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if f[len(f)-1] != "healthy" || f[len(f)-2] == "-" || f[4] != "true" {
			t.Fatalf("list-peers line %q", l)
		}
	}
}
