package config

import (
	"errors"
	"strings"
	"testing"
)

// wantDiag finds the diagnostic whose message contains msg and checks its
// line; it fails the test when there is none.
func wantDiag(t *testing.T, ds []Diagnostic, msg string, line int) {
	t.Helper()
	for _, d := range ds {
		if strings.Contains(d.Message, msg) {
			if d.Line != line {
				t.Errorf("%q reported on line %d, want %d (%s)", msg, d.Line, line, d)
			}
			return
		}
	}
	t.Errorf("no diagnostic contains %q; got:\n%s", msg, (&Errors{Diagnostics: ds}).Error())
}

func diagsOf(t *testing.T, err error) []Diagnostic {
	t.Helper()
	var es *Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %v (%T) is not an *Errors", err, err)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("errors.Is(err, ErrInvalid) is false")
	}
	return es.Diagnostics
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, src, msg string
		line           int
	}{
		{"syntax", "name = \n", "Invalid expression", 1},
		{"unknown top-level attribute", "data_dri = \"/x\"\n", `unknown attribute "data_dri" at the top level (did you mean "data_dir"?)`, 1},
		{"unknown nested attribute", "server {\n  retry_jion = []\n}\n", `unknown attribute "retry_jion" in server (did you mean "retry_join"?)`, 2},
		{"unknown block without suggestion", "\n\nfrobnicate {}\n", `unknown block "frobnicate" at the top level`, 3},
		{"unknown block with suggestion", "clinet {}\n", `(did you mean "client"?)`, 1},
		{"refused block", "log_level = \"INFO\"\naudit {\n  enabled = true\n}\n", "audit is not supported by drover", 2},
		{"refused attribute", "leave_on_interrupt = true\n", "leave_on_interrupt is not supported by drover", 1},
		{"refused client block", "client {\n  host_network \"x\" {\n    cidr = \"10.0.0.0/8\"\n  }\n}\n", "client.host_network is not supported by drover", 2},
		{"host_volume without path", "client {\n  host_volume \"x\" {\n    read_only = true\n  }\n}\n", `host_volume "x" needs a path`, 2},
		{"host_volume relative path", "client {\n  host_volume \"x\" {\n    path = \"data\"\n  }\n}\n", `host_volume "x": path must be absolute (got "data")`, 2},
		{"host_volume unknown attribute", "client {\n  host_volume \"x\" {\n    path = \"/x\"\n    readonly = true\n  }\n}\n", `unknown attribute "readonly" in host_volume (did you mean "read_only"?)`, 4},
		{"host_volume twice", "client {\n  host_volume \"x\" {\n    path = \"/x\"\n  }\n  host_volume \"x\" {\n    path = \"/y\"\n  }\n}\n", `duplicate host_volume "x" block`, 5},
		{"refused server attribute", "server {\n  raft_multiplier = 2\n}\n", "server.raft_multiplier is not supported by drover (set heartbeat_timeout", 2},
		{"string for int", "ports {\n  http = \"abc\"\n}\n", `ports.http must be a whole number (got "abc")`, 2},
		{"fraction for int", "server {\n  bootstrap_expect = 1.5\n}\n", "server.bootstrap_expect must be a whole number (got 1.5)", 2},
		{"huge int", "ports {\n  http = 1e40\n}\n", "ports.http must be a whole number", 2},
		{"bad bool", "log_json = \"maybe\"\n", `log_json must be a bool (got "maybe")`, 1},
		{"bad duration", "server {\n  heartbeat_grace = \"10\"\n}\n", `server.heartbeat_grace must be a duration such as "10s" (got "10")`, 2},
		{"number for duration", "server {\n  heartbeat_grace = 10\n}\n", `server.heartbeat_grace must be a duration such as "10s" (got 10)`, 2},
		{"string for list", "client {\n  servers = \"127.0.0.1:4646\"\n}\n", "client.servers must be a list of strings", 2},
		{"object for map value", "client {\n  meta = { a = { b = 1 } }\n}\n", "client.meta must be a map of strings", 2},
		{"null", "name = null\n", "name must not be null", 1},
		{"variable", "name = var.x\n", "Variables not allowed", 1},
		{"block as attribute", "server = {}\n", "server is a block, not an attribute: write server { ... }", 1},
		{"attribute as block", "server {\n  retry_join {}\n}\n", "server.retry_join is an attribute, not a block", 2},
		{"duplicate block", "server {}\nserver {}\n", "duplicate server block", 2},
		{"labelled block", "server \"a\" {}\n", `server block takes no label, got "a"`, 1},
		{"alias and field", "ports {\n  rpc  = 4647\n  raft = 4647\n}\n", "ports.rpc and ports.raft are the same setting (line 3)", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := Parse("test.hcl", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error; config %+v", c)
			}
			if c != nil {
				t.Errorf("config returned with an error")
			}
			ds := diagsOf(t, err)
			wantDiag(t, ds, tc.msg, tc.line)
			if !strings.HasPrefix(err.Error(), "test.hcl:") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestParseWarnings(t *testing.T) {
	cases := []struct {
		name, src, msg string
		line           int
	}{
		{"statsd", "telemetry {\n  statsd_address = \"127.0.0.1:8125\"\n}\n", "telemetry.statsd_address is not supported by drover and is ignored (metrics are published at /v1/metrics only", 2},
		{"update check", "\ndisable_update_check = true\n", "disable_update_check is not supported by drover and is ignored", 2},
		{"serf address", "addresses {\n  serf = \"127.0.0.1\"\n}\n", "addresses.serf is not supported by drover and is ignored", 2},
		{"client gc", "client {\n  gc_interval = \"1m\"\n}\n", "client.gc_interval is not supported by drover and is ignored", 2},
		{"vault off", "vault {\n  enabled = false\n}\n", "vault is ignored: it leaves the integration off (there is no Vault integration)", 1},
		{"vault empty", "\nvault {}\n", "vault is ignored: it leaves the integration off (there is no Vault integration)", 2},
		{"consul address", "consul {\n  address = \"127.0.0.1:8500\"\n  auto_advertise = false\n}\n", "consul is ignored: it leaves the integration off (there is no Consul integration)", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, warns, err := Parse("test.hcl", []byte(tc.src))
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if c == nil {
				t.Fatal("no config")
			}
			wantDiag(t, warns, tc.msg, tc.line)
		})
	}
}

// TestParseReportsAllAtOnce checks that one pass reports every problem,
// in file order, each as FILE:LINE:COL.
func TestParseReportsAllAtOnce(t *testing.T) {
	src := `nmae = "x"
ports {
  http = "abc"
}
server {
  heartbeat_grace = "soon"
}
vault { enabled = true }
`
	_, _, err := Parse("all.hcl", []byte(src))
	ds := diagsOf(t, err)
	if len(ds) != 4 {
		t.Fatalf("got %d diagnostics, want 4:\n%v", len(ds), err)
	}
	wantLines := []int{1, 3, 6, 8}
	for i, d := range ds {
		if d.Line != wantLines[i] {
			t.Errorf("diagnostic %d on line %d, want %d: %s", i, d.Line, wantLines[i], d)
		}
	}
	first := strings.Split(err.Error(), "\n")[0]
	if first != `all.hcl:1:1: unknown attribute "nmae" at the top level (did you mean "name"?)` {
		t.Errorf("first line %q", first)
	}
}

// A vault block that leaves Vault off, and a consul block that only says
// where Consul is, are accepted with a warning, in JSON as Nomad's API
// test server writes them; one that turns either on is refused.
func TestParseInertIntegrations(t *testing.T) {
	for _, src := range []string{
		`{"vault": {"enabled": false}, "consul": {"address": "127.0.0.1:8500", "auth": "u:p", "token": "t"}}`,
		`{"vault": [{"enabled": false, "name": "default"}], "consul": [{"server_auto_join": false}]}`,
	} {
		c, warns, err := Parse("agent.json", []byte(src))
		if err != nil || c == nil {
			t.Fatalf("%s: %v", src, err)
		}
		wantDiag(t, warns, "vault is ignored: it leaves the integration off (there is no Vault integration)", 1)
		wantDiag(t, warns, "consul is ignored: it leaves the integration off (there is no Consul integration)", 1)
	}
	for _, tc := range []struct{ src, msg string }{
		{`{"vault": {"enabled": true}}`, "vault is not supported by drover (there is no Vault integration"},
		{`{"vault": {"enabled": "false"}}`, "vault is not supported by drover"},
		{`{"vault": [{"enabled": false}, {"enabled": true}]}`, "vault is not supported by drover"},
		{`{"consul": {"auto_advertise": true}}`, "consul is not supported by drover (there is no Consul integration"},
		{`{"consul": {"service_identity": {"aud": ["consul.io"]}}}`, "consul is not supported by drover"},
		{"consul {\n  address = \"127.0.0.1:8500\"\n  tags = [\"a\"]\n}\n", "consul is not supported by drover"},
		{"vault {\n  enabled = false\n  default_identity {\n  }\n}\n", "vault is not supported by drover"},
	} {
		_, _, err := Parse("test", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %q", tc.src, err, tc.msg)
		}
	}
}

func TestParseValues(t *testing.T) {
	src := `
name = "n1"
log_json = true
ports {
  rpc = 5001
}
server {
  enabled          = true
  bootstrap_expect = "3"
  retry_join       = ["127.0.0.1:1", "127.0.0.1:2"]
  election_timeout = "750ms"
}
client {
  meta {
    zone = "b"
  }
  options = { "driver.raw_exec.enable" = 1 }
}
`
	c, warns, err := Parse("v.hcl", []byte(src))
	if err != nil || len(warns) > 0 {
		t.Fatalf("err %v, warnings %v", err, warns)
	}
	if c.Name != "n1" || !c.LogJSON || c.Ports.Raft != 5001 || c.Server.BootstrapExpect != 3 ||
		len(c.Server.RetryJoin) != 2 || c.Server.ElectionTimeout.String() != "750ms" ||
		c.Client.Meta["zone"] != "b" || c.Client.Options["driver.raw_exec.enable"] != "1" {
		t.Errorf("decoded %+v", c)
	}
	if c.IsSet("ports.rpc") || !c.IsSet("ports.raft") {
		t.Errorf("the rpc alias should mark ports.raft as set")
	}
	if c.IsSet("ports.http") || c.Ports.HTTP != 0 {
		t.Errorf("ports.http was not written but is set")
	}
	if l, ok := c.Where("server.election_timeout"); !ok || l.String() != "v.hcl:11:3" {
		t.Errorf("election_timeout given at %v", l)
	}
}

func TestParseJSON(t *testing.T) {
	hclSrc := `
name = "j"
data_dir = "/tmp/j"
ports {
  http = 5000
}
server {
  enabled = true
  bootstrap_expect = 3
  retry_join = ["127.0.0.1:5010"]
}
client {
  enabled = true
  meta = { zone = "a" }
}
`
	jsonSrc := `{
  "name": "j",
  "data_dir": "/tmp/j",
  "ports": {"http": 5000},
  "server": {"enabled": true, "bootstrap_expect": 3, "retry_join": ["127.0.0.1:5010"]},
  "client": {"enabled": true, "meta": {"zone": "a"}}
}`
	h, _, err := Parse("a.hcl", []byte(hclSrc))
	if err != nil {
		t.Fatal(err)
	}
	j, _, err := Parse("a.json", []byte(jsonSrc))
	if err != nil {
		t.Fatal(err)
	}
	hm, jm := Default().Merge(h), Default().Merge(j)
	hm.at, jm.at = nil, nil
	if !equalConfig(hm, jm) {
		t.Errorf("HCL and JSON differ:\n%+v\n%+v", hm, jm)
	}
	bad := "{\n  \"server\": {\"enabeld\": true},\n  \"audit\": {}\n}"
	_, _, err = Parse("bad.json", []byte(bad))
	ds := diagsOf(t, err)
	wantDiag(t, ds, `unknown attribute "enabeld" in server (did you mean "enabled"?)`, 2)
	wantDiag(t, ds, "audit is not supported by drover", 3)
}
