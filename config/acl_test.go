package config

import (
	"strings"
	"testing"
	"time"
)

func TestACLAndLimitsBlocks(t *testing.T) {
	c, warns, err := Parse("agent.hcl", []byte(`
acl {
  enabled    = true
  token_ttl  = "2s"
  policy_ttl = "3s"
}
limits {
  http_write_rate  = 10
  http_write_burst = 20
  http_max_conns_per_client = 100
}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := Default().Merge(c)
	if !got.ACL.Enabled || got.ACL.TokenTTL != 2*time.Second || got.ACL.PolicyTTL != 3*time.Second ||
		got.Limits.HTTPWriteRate != 10 || got.Limits.HTTPWriteBurst != 20 {
		t.Fatalf("parsed %+v %+v", got.ACL, got.Limits)
	}
	var w []string
	for _, d := range warns {
		w = append(w, d.String())
	}
	all := strings.Join(w, "\n")
	for _, want := range []string{"agent.hcl:10:3", "http_max_conns_per_client"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings %q lack %q", all, want)
		}
	}
	d := Default()
	if d.ACL.Enabled || d.ACL.TokenTTL != DefaultACLTTL || d.Limits.HTTPWriteRate != DefaultHTTPWriteRate {
		t.Fatalf("defaults %+v %+v", d.ACL, d.Limits)
	}
}

func TestACLAndLimitsErrorsAreLocated(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"acl {\n  enabled = \"yes\"\n}", "a.hcl:2:"},
		{"acl {\n  token_ttl = \"-1s\"\n}", "a.hcl:2:3: acl.token_ttl must not be negative"},
		{"acl {\n  enabled = true\n  polcy_ttl = \"1s\"\n}", `a.hcl:3:3`},
		{"limits {\n  http_write_rate = -1\n}", "a.hcl:2:3: limits.http_write_rate must not be negative"},
		{"limits {\n  http_write_rate = 5\n  http_write_burst = 0\n}", "a.hcl:3:3: limits.http_write_burst must be at least 1"},
	} {
		c, _, err := Parse("a.hcl", []byte(tc.src))
		if err == nil {
			cfg := DevConfig().Merge(c)
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.src, err, tc.want)
		}
	}
	c, _, err := Parse("a.hcl", []byte("acl {\n  token_ttl = \"10m\"\n}"))
	if err != nil {
		t.Fatal(err)
	}
	warns, err := DevConfig().Merge(c).Check()
	if err != nil {
		t.Fatal(err)
	}
	var w []string
	for _, d := range warns {
		w = append(w, d.String())
	}
	if all := strings.Join(w, "\n"); !strings.Contains(all, "a.hcl:2:3: acl.token_ttl is 10m0s") || !strings.Contains(all, "acl.token_ttl is ignored: acl.enabled is off") {
		t.Errorf("warnings: %s", all)
	}
}

// ACLs on a server without a join token: autopilot's probes cannot be
// told from a stranger's, which the agent says at start.
func TestACLWithoutJoinTokenWarns(t *testing.T) {
	c, _, err := Parse("s.hcl", []byte("data_dir = \"/d\"\nserver {\n  enabled = true\n  bootstrap_expect = 3\n}\nacl {\n  enabled = true\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	warns, err := Default().Merge(c).Check()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range warns {
		found = found || strings.Contains(w.String(), "s.hcl:7:3: acl.enabled without server.join_token")
	}
	if !found {
		t.Fatalf("warnings %v", warns)
	}
	c.Server.JoinToken = "x"
	c.mark("server.join_token", Location{File: "s.hcl"})
	warns, _ = Default().Merge(c).Check()
	for _, w := range warns {
		if strings.Contains(w.String(), "join_token") {
			t.Fatalf("with a join token: %v", w)
		}
	}
}
