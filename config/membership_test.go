package config

import (
	"strings"
	"testing"
	"time"
)

func TestJoinTokenAndAutopilotSettings(t *testing.T) {
	src := validServer + `allow_remote_operator = true
autopilot {
  cleanup_dead_servers      = false
  server_stabilization_time = "2s"
  min_quorum                = 3
}
`
	c, _, err := Parse("v.hcl", []byte(strings.Replace(src, "enabled", "join_token = \"s3cret\"\n  enabled", 1)))
	if err != nil {
		t.Fatal(err)
	}
	m := Default().Merge(c)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	a := m.Autopilot
	if m.Server.JoinToken != "s3cret" || !m.AllowRemoteOperator || a.CleanupDeadServers || a.ServerStabilizationTime != 2*time.Second ||
		a.MinQuorum != 3 || a.MaxTrailingLogs != DefaultMaxTrailingLogs || a.LastContactThreshold != DefaultLastContactThreshold {
		t.Fatalf("merged %+v, token set %t", m.Autopilot, m.Server.JoinToken != "")
	}
	if d := Default().Autopilot; !d.CleanupDeadServers || d.ServerStabilizationTime != 10*time.Second {
		t.Fatalf("defaults %+v", d)
	}
}

func TestAutopilotNegativeValuesAreErrors(t *testing.T) {
	_, err := checkSrc(t, validServer+"autopilot {\n  server_stabilization_time = \"-1s\"\n  min_quorum = -1\n}\n")
	if err == nil || !strings.Contains(err.Error(), "autopilot.server_stabilization_time must not be negative") ||
		!strings.Contains(err.Error(), "autopilot.min_quorum must not be negative") {
		t.Fatalf("err %v", err)
	}
}

func TestRemoteRetryJoinWithoutJoinTokenWarns(t *testing.T) {
	remote := strings.Replace(validServer, `"127.0.0.1:4656"`, `"10.0.0.2:4646"`, 1)
	warns, err := checkSrc(t, remote)
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0].String(), "server.join_token is empty") {
		t.Fatalf("err %v, warnings %v", err, warns)
	}
	if warns, _ := checkSrc(t, strings.Replace(remote, "enabled", "join_token = \"k\"\n  enabled", 1)); len(warns) != 0 {
		t.Fatalf("with a token: warnings %v", warns)
	}
}
