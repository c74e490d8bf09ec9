package config

import (
	"testing"
)

// checkSrc parses src, merges it onto Default and checks the result.
func checkSrc(t *testing.T, src string) ([]Warning, error) {
	t.Helper()
	c, _, err := Parse("v.hcl", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return Default().Merge(c).Check()
}

const validServer = `data_dir = "/tmp/d"
server {
  enabled          = true
  bootstrap_expect = 3
  retry_join       = ["127.0.0.1:4656", "127.0.0.1:4666"]
}
`

func TestValidateValid(t *testing.T) {
	warns, err := checkSrc(t, validServer)
	if err != nil || len(warns) > 0 {
		t.Fatalf("err %v, warnings %v", err, warns)
	}
	if err := DevConfig().Validate(); err != nil {
		t.Errorf("DevConfig: %v", err)
	}
}

func TestValidateErrors(t *testing.T) {
	cases := []struct {
		name, src, msg string
		line           int
	}{
		{"port zero", validServer + "ports {\n  http = 0\n}\n", "ports.http must be a port from 1 to 65535 (got 0)", 8},
		{"analysis address not a URL", validServer + "analysis {\n  prometheus_address = \"prom:9090\"\n}\n", `analysis.prometheus_address must be an http or https URL such as "http://127.0.0.1:9090" (got "prom:9090")`, 8},
		{"port too high", validServer + "ports {\n  raft = 70000\n}\n", "ports.raft must be a port from 1 to 65535 (got 70000)", 8},
		{"same ports", validServer + "ports {\n  http = 5000\n  raft = 5000\n}\n", "ports.raft and ports.http are both 5000", 9},
		{"bootstrap_expect negative", "data_dir = \"/d\"\nserver {\n  enabled = true\n  bootstrap_expect = -1\n}\n", "server.bootstrap_expect must not be negative (got -1)", 4},
		{"retry_join without port", "data_dir = \"/d\"\nserver {\n  enabled = true\n  bootstrap_expect = 1\n  retry_join = [\"127.0.0.1:1\", \"10.0.0.2\"]\n}\n", `server.retry_join[1] must be host:port (got "10.0.0.2")`, 5},
		{"retry_join bad port", "data_dir = \"/d\"\nserver {\n  enabled = true\n  bootstrap_expect = 1\n  retry_join = [\"h:99999\"]\n}\n", `server.retry_join[0] has an invalid port (got "h:99999")`, 5},
		{"nothing enabled", "data_dir = \"/d\"\n", "neither server nor client is enabled", 0},
		{"nothing enabled, written", "data_dir = \"/d\"\n\nserver {\n  enabled = false\n}\n", "neither server nor client is enabled", 4},
		{"log level", validServer + "log_level = \"verbose\"\n", `log_level "verbose" is not one of TRACE, DEBUG, INFO, WARN, ERROR`, 7},
		{"data_dir missing", "server {\n  enabled = true\n  bootstrap_expect = 1\n}\n", "data_dir is required", 0},
		{"data_dir blank", "data_dir = \" \"\nserver {\n  enabled = true\n  bootstrap_expect = 1\n}\n", "data_dir is required", 1},
		{"gc_percent too small", "data_dir = \"/d\"\nserver {\n  enabled = true\n  bootstrap_expect = 1\n  gc_percent = 10\n}\n", "server.gc_percent must be at least 50, or 0 for the default 200 (got 10)", 5},
		{"raft timeout too small", "data_dir = \"/d\"\nserver {\n  enabled = true\n  bootstrap_expect = 1\n  election_timeout = \"1ms\"\n}\n", "server.election_timeout must be at least 5ms (got 1ms)", 5},
		{"lease above heartbeat", "data_dir = \"/d\"\nserver {\n  enabled = true\n  bootstrap_expect = 1\n  leader_lease_timeout = \"2s\"\n}\n", "server.leader_lease_timeout (2s) must not exceed server.heartbeat_timeout (500ms)", 5},
		{"dynamic ports order", "data_dir = \"/d\"\nclient {\n  enabled = true\n  servers = [\"127.0.0.1:4646\"]\n  min_dynamic_port = 30000\n  max_dynamic_port = 30000\n}\n", "client.min_dynamic_port (30000) must be below client.max_dynamic_port (30000)", 5},
		{"dynamic port range", "data_dir = \"/d\"\nclient {\n  enabled = true\n  servers = [\"127.0.0.1:4646\"]\n  max_dynamic_port = 65536\n}\n", "client.max_dynamic_port must be a port from 1 to 65535 (got 65536)", 5},
		{"bind not an IP", validServer + "bind_addr = \"localhost\"\n", `bind_addr must be an IP address (got "localhost")`, 7},
		{"address not an IP", validServer + "addresses {\n  http = \"example\"\n}\n", `addresses.http must be an IP address (got "example")`, 8},
		{"wildcard bind needs advertise", validServer + "bind_addr = \"0.0.0.0\"\n", "advertise.raft is required when the Raft bind address is 0.0.0.0", 7},
		{"advertise not host:port", validServer + "advertise {\n  raft = \"127.0.0.1\"\n}\n", `advertise.raft must be host:port (got "127.0.0.1")`, 8},
		{"docker volumes option", "data_dir = \"/d\"\nclient {\n  enabled = true\n  servers = [\"127.0.0.1:4646\"]\n  options = {\n    \"docker.volumes.enabled\" = \"yes please\"\n  }\n}\n", `client.options "docker.volumes.enabled" must be "true" or "false" (got "yes please")`, 5},
		{"client without servers", "data_dir = \"/d\"\nclient {\n  enabled = true\n}\n", "client.servers is required when this agent runs no server", 0},
		{"client server bad", "data_dir = \"/d\"\nclient {\n  enabled = true\n  servers = [\"nope\"]\n}\n", `client.servers[0] must be host:port (got "nope")`, 4},
		{"node pool all", "data_dir = \"/d\"\nclient {\n  enabled = true\n  servers = [\"127.0.0.1:1\"]\n  node_pool = \"all\"\n}\n", `client.node_pool must not be "all"`, 5},
		{"node pool name", "data_dir = \"/d\"\nclient {\n  enabled = true\n  servers = [\"127.0.0.1:1\"]\n  node_pool = \"gpu/a\"\n}\n", `client.node_pool "gpu/a" is not a node pool name`, 5},
		{"negative memory", "data_dir = \"/d\"\nclient {\n  enabled = true\n  servers = [\"127.0.0.1:1\"]\n  memory_total_mb = -1\n}\n", "client.memory_total_mb must not be negative (got -1)", 5},
		{"empty region", validServer + "region = \"\"\n", "region must not be empty", 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := checkSrc(t, tc.src)
			if err == nil {
				t.Fatal("no error")
			}
			wantDiag(t, diagsOf(t, err), tc.msg, tc.line)
		})
	}
}

func TestValidateNegativeDuration(t *testing.T) {
	c := Default().Merge(mustParse(t, validServer))
	if err := c.Set("server.heartbeat_grace", "-heartbeat-grace", "-1s"); err != nil {
		t.Fatal(err)
	}
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	ds := diagsOf(t, err)
	wantDiag(t, ds, "server.heartbeat_grace must not be negative (got -1s)", 0)
	if got := ds[0].String(); got != "-heartbeat-grace: server.heartbeat_grace must not be negative (got -1s)" {
		t.Errorf("a flag's problem reads %q", got)
	}
}

func TestValidateWarnings(t *testing.T) {
	cases := []struct {
		name, src, msg string
		line           int
	}{
		{"even bootstrap_expect", "data_dir = \"/d\"\nserver {\n  enabled = true\n  bootstrap_expect = 4\n  retry_join = [\"127.0.0.1:1\"]\n}\n", "server.bootstrap_expect is 4: an odd number of servers is recommended", 4},
		{"bootstrap_expect zero", "data_dir = \"/d\"\nserver {\n  enabled = true\n  bootstrap_expect = 0\n}\n", "server.bootstrap_expect is 0: this server does not bootstrap a cluster; it waits to be joined", 4},
		{"bootstrap_expect unset", "data_dir = \"/d\"\nserver {\n  enabled = true\n}\n", "server.bootstrap_expect is 0: this server does not bootstrap a cluster", 0},
		{"expect without join", "data_dir = \"/d\"\nserver {\n  enabled = true\n  bootstrap_expect = 3\n}\n", "server.retry_join is empty", 4},
		{"server settings without server", "data_dir = \"/d\"\nclient {\n  enabled = true\n  servers = [\"127.0.0.1:1\"]\n}\nserver {\n  retry_join = [\"127.0.0.1:2\"]\n}\n", "server.retry_join is ignored: the server is not enabled", 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			warns, err := checkSrc(t, tc.src)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			wantDiag(t, warns, tc.msg, tc.line)
		})
	}
}

func TestValidateDevWithoutDataDir(t *testing.T) {
	c := DevConfig()
	if c.DataDir != "" {
		t.Fatalf("DevConfig has data_dir %q", c.DataDir)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("dev config: %v", err)
	}
	if c.HTTPAddr() != "127.0.0.1:4646" || c.RaftAddr() != "127.0.0.1:4647" || !c.Server.Enabled || !c.Client.Enabled || c.Server.BootstrapExpect != 1 {
		t.Errorf("dev config %+v", c)
	}
}

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	c, _, err := Parse("m.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
