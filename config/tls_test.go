package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/tlsutil"
	"github.com/droverhq/drover/tlsutil/tlstest"
)

func TestParseTLSBlock(t *testing.T) {
	src := `tls {
  http = true
  rpc  = true
  ca_file   = "ca.pem"
  cert_file = "server.pem"
  key_file  = "server-key.pem"
  verify_server_hostname = true
  verify_https_client    = true
}
`
	want := TLS{HTTP: true, RPC: true, CAFile: "ca.pem", CertFile: "server.pem", KeyFile: "server-key.pem",
		VerifyServerHostname: true, VerifyHTTPSClient: true}
	c := mustParse(t, src)
	if c.TLS != want {
		t.Errorf("HCL: %+v, want %+v", c.TLS, want)
	}
	if l, ok := c.Where("tls.key_file"); !ok || l.Line != 6 {
		t.Errorf("tls.key_file given at %v", l)
	}
	j, _, err := Parse("a.json", []byte(`{"tls": {"http": true, "rpc": true, "ca_file": "ca.pem", "cert_file": "server.pem",
		"key_file": "server-key.pem", "verify_server_hostname": true, "verify_https_client": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if j.TLS != want {
		t.Errorf("JSON: %+v, want %+v", j.TLS, want)
	}
	// A later file overrides what it writes, field by field.
	merged := Default().Merge(c).Merge(mustParse(t, "tls {\n  verify_https_client = false\n}\n"))
	if merged.TLS.VerifyHTTPSClient || !merged.TLS.HTTP || merged.TLS.CAFile != "ca.pem" {
		t.Errorf("merged %+v", merged.TLS)
	}
	if got := merged.TLSConfig(); got.Region != "global" || got.CertFile != "server.pem" || !got.RPC {
		t.Errorf("TLSConfig %+v", got)
	}
}

func TestRawExecIsOffOutsideDev(t *testing.T) {
	client := "data_dir = \"/d\"\nclient {\n  enabled = true\n  servers = [\"127.0.0.1:4646\"]\n}\n"
	for _, tc := range []struct {
		name string
		c    *Config
		want bool
	}{
		{"default", Default(), false},
		{"dev", DevConfig(), true},
		{"client", Default().Merge(mustParse(t, client)), false},
		{"plugin block", Default().Merge(mustParse(t, client+"plugin \"raw_exec\" {\n  config {\n    enabled = true\n  }\n}\n")), true},
		{"plugin block off", Default().Merge(mustParse(t, client+"plugin \"raw_exec\" {\n  config {\n    enabled = false\n  }\n}\n")), false},
		{"plugin JSON", Default().Merge(mustParseJSON(t, `{"plugin": {"raw_exec": {"config": {"enabled": true}}}}`)), true},
		{"plugin JSON list", Default().Merge(mustParseJSON(t, `{"plugin": [{"raw_exec": [{"config": [{"enabled": true}]}]}]}`)), true},
		{"Nomad's option", Default().Merge(mustParse(t, strings.Replace(client, "}\n", "  options = {\n    \"driver.raw_exec.enable\" = \"1\"\n  }\n}\n", 1))), true},
		{"Nomad's option off", Default().Merge(mustParse(t, strings.Replace(client, "}\n", "  options = {\n    \"driver.raw_exec.enable\" = \"0\"\n  }\n}\n", 1))), false},
	} {
		if got := tc.c.RawExecEnabled(); got != tc.want {
			t.Errorf("%s: RawExecEnabled() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func mustParseJSON(t *testing.T, src string) *Config {
	t.Helper()
	c, _, err := Parse("a.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParsePluginErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, msg string
		line           int
	}{
		{"unknown plugin", "\nplugin \"qemu\" {}\n", `unknown plugin "qemu": drover's drivers are built in; the plugin blocks drover reads are "docker", "exec", "java", "raw_exec"`, 2},
		{"exec mode not a string", "plugin \"exec\" {\n  config {\n    default_pid_mode = [\"host\"]\n  }\n}\n", `plugin.exec.config.default_pid_mode must be a string`, 3},
		{"docker plugin endpoint", "plugin \"docker\" {\n  config {\n    endpoint = \"unix:///x.sock\"\n  }\n}\n", `plugin.docker.config.endpoint is not supported by drover (the daemon's address is the client option docker.endpoint)`, 3},
		{"docker infra_image_pull_timeout", "plugin \"docker\" {\n  config {\n    infra_image_pull_timeout = \"soon\"\n  }\n}\n", `plugin.docker.config.infra_image_pull_timeout must be a duration`, 3},
		{"no label", "plugin {\n}\n", `plugin block takes one label, the name: write plugin "NAME" { ... }`, 1},
		{"attribute", "plugin = {}\n", `plugin is a block, not an attribute: write plugin "NAME" { ... }`, 1},
		{"duplicate", "plugin \"raw_exec\" {}\nplugin \"raw_exec\" {}\n", `duplicate plugin "raw_exec" block`, 2},
		{"unknown setting", "plugin \"raw_exec\" {\n  config {\n    enable = true\n  }\n}\n", `unknown attribute "enable" in plugin.raw_exec.config (did you mean "enabled"?)`, 3},
		{"not a bool", "plugin \"raw_exec\" {\n  config {\n    enabled = \"sure\"\n  }\n}\n", `plugin.raw_exec.config.enabled must be a bool (got "sure")`, 3},
		{"denied uids", "plugin \"raw_exec\" {\n  config {\n    denied_host_uids = \"0\"\n  }\n}\n", "plugin.raw_exec.config.denied_host_uids is not supported by drover", 3},
		{"rpc upgrade", "tls {\n  rpc_upgrade_mode = true\n}\n", "tls.rpc_upgrade_mode is not supported by drover", 2},
		{"min version", "tls {\n  http = true\n  tls_min_version = \"tls13\"\n}\n", "tls.tls_min_version is not supported by drover", 3},
		{"tls unknown", "tls {\n  verify_server_hostnme = true\n}\n", `(did you mean "verify_server_hostname"?)`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse("p.hcl", []byte(tc.src))
			if err == nil {
				t.Fatal("no error")
			}
			wantDiag(t, diagsOf(t, err), tc.msg, tc.line)
		})
	}
	_, warns, err := Parse("p.hcl", []byte("plugin \"raw_exec\" {\n  config {\n    enabled = true\n    no_cgroups = true\n  }\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	wantDiag(t, warns, "plugin.raw_exec.config.no_cgroups is not supported by drover and is ignored", 4)
}

// Nomad's gossip key is accepted with a warning that says why it is not
// needed.
func TestServerEncryptWarns(t *testing.T) {
	_, warns, err := Parse("s.hcl", []byte("server {\n  enabled = true\n  encrypt = \"k\"\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	wantDiag(t, warns, "server.encrypt is not supported by drover and is ignored (servers do not gossip; joins are signed with join_token)", 3)
}

// tlsServer is a valid server file with a tls block whose settings are
// given as lines (line 7 onwards).
func tlsServer(lines ...string) string {
	return validServer + "tls {\n" + strings.Join(lines, "\n") + "\n}\n"
}

func TestValidateTLS(t *testing.T) {
	ca := tlstest.NewCA(t)
	other := tlstest.NewCA(t)
	serverCert, serverKey := ca.Cert(tlsutil.RoleServer, "")
	clientCert, clientKey := ca.Cert(tlsutil.RoleClient, "")
	foreignCert, foreignKey := other.Cert(tlsutil.RoleServer, "")
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := func(caFile, cert, key string) []string {
		return []string{fmt.Sprintf("  ca_file = %q", caFile), fmt.Sprintf("  cert_file = %q", cert), fmt.Sprintf("  key_file = %q", key)}
	}
	on := []string{"  http = true", "  rpc = true", "  verify_server_hostname = true", "  verify_https_client = true"}
	good := append(append([]string{}, on...), files(ca.CertFile, serverCert, serverKey)...)

	if warns, err := checkSrc(t, tlsServer(good...)); err != nil || len(warns) > 0 {
		t.Fatalf("valid tls block: err %v, warnings %v", err, warns)
	}
	for _, tc := range []struct {
		name  string
		lines []string
		msg   string
		line  int
	}{
		// Line 7 is "tls {"; the settings start on line 8.
		{"no files", on, "tls.ca_file is required when tls.http or tls.rpc is on", 8},
		{"no key", append(append([]string{}, on...), files(ca.CertFile, serverCert, "")[:2]...), "tls.key_file is required", 8},
		{"missing CA", append(append([]string{}, on...), files("/nonexistent/ca.pem", serverCert, serverKey)...),
			"tls.ca_file: cannot read /nonexistent/ca.pem: no such file or directory", 12},
		{"missing key", append(append([]string{}, on...), files(ca.CertFile, serverCert, "/nonexistent/key.pem")...),
			"tls.key_file: cannot read /nonexistent/key.pem", 14},
		{"garbage CA", append(append([]string{}, on...), files(garbage, serverCert, serverKey)...), "holds no PEM certificate", 12},
		{"key of another certificate", append(append([]string{}, on...), files(ca.CertFile, serverCert, clientKey)...),
			"tls.cert_file and tls.key_file do not make a certificate and its key", 14},
		{"certificate of another CA", append(append([]string{}, on...), files(ca.CertFile, foreignCert, foreignKey)...),
			"is not signed by the CA", 13},
		{"client certificate on a server", append(append([]string{}, on...), files(ca.CertFile, clientCert, clientKey)...),
			"not server.global.nomad, which verify_server_hostname requires of a server (drover tls cert create -server)", 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := checkSrc(t, tlsServer(tc.lines...))
			if err == nil {
				t.Fatal("no error")
			}
			wantDiag(t, diagsOf(t, err), tc.msg, tc.line)
		})
	}

	// A client agent may present a client's certificate.
	clientSrc := "data_dir = \"/d\"\nclient {\n  enabled = true\n  servers = [\"127.0.0.1:4646\"]\n}\ntls {\n" +
		strings.Join(append(append([]string{}, on...), files(ca.CertFile, clientCert, clientKey)...), "\n") + "\n}\n"
	if warns, err := checkSrc(t, clientSrc); err != nil || len(warns) > 0 {
		t.Errorf("client with a client certificate: err %v, warnings %v", err, warns)
	}

	warns, err := checkSrc(t, tlsServer(append([]string{"  rpc = true"}, files(ca.CertFile, serverCert, serverKey)...)...))
	if err != nil {
		t.Fatal(err)
	}
	wantDiag(t, warns, "tls.verify_server_hostname is off: any certificate the CA signed, a client's too, can join Raft as a server", 8)
	warns, err = checkSrc(t, tlsServer(files(ca.CertFile, serverCert, serverKey)...))
	if err != nil {
		t.Fatal(err)
	}
	wantDiag(t, warns, "tls.ca_file is ignored: neither tls.http nor tls.rpc is on", 8)
	warns, err = checkSrc(t, tlsServer(append([]string{"  rpc = true", "  verify_server_hostname = true", "  verify_https_client = true"}, files(ca.CertFile, serverCert, serverKey)...)...))
	if err != nil {
		t.Fatal(err)
	}
	wantDiag(t, warns, "tls.verify_https_client is ignored: tls.http is off", 10)
}

func TestValidateRawExecOption(t *testing.T) {
	src := "data_dir = \"/d\"\nclient {\n  enabled = true\n  servers = [\"127.0.0.1:4646\"]\n  options = {\n    \"driver.raw_exec.enable\" = \"yes\"\n  }\n}\n"
	_, err := checkSrc(t, src)
	if err == nil {
		t.Fatal("no error")
	}
	wantDiag(t, diagsOf(t, err), `client.options "driver.raw_exec.enable" must be "1", "true", "0" or "false" (got "yes")`, 5)
}

func TestParseExecPlugin(t *testing.T) {
	src := `client {
  enabled = true
  chroot_env = {
    "/bin"       = "/bin"
    "/opt/tools" = "/tools"
  }
}
plugin "exec" {
  config {
    default_pid_mode = "host"
    default_ipc_mode = "private"
    allow_caps       = ["kill", "net_raw"]
    no_pivot         = true
  }
}
plugin "java" {
  config {
    default_pid_mode = "private"
    default_ipc_mode = "host"
    allow_caps       = ["kill"]
  }
}
`
	c, warns, err := Parse("p.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if c.Client.ChrootEnv["/opt/tools"] != "/tools" || len(c.Client.ChrootEnv) != 2 {
		t.Errorf("chroot_env %v", c.Client.ChrootEnv)
	}
	e := c.Plugin.Exec
	if e.DefaultPidMode != "host" || e.DefaultIpcMode != "private" || len(e.AllowCaps) != 2 || e.AllowCaps[1] != "net_raw" {
		t.Errorf("plugin exec %+v", e)
	}
	if j := c.Plugin.Java; j.DefaultPidMode != "private" || j.DefaultIpcMode != "host" || len(j.AllowCaps) != 1 || j.AllowCaps[0] != "kill" {
		t.Errorf("plugin java %+v", j)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].String(), "no_pivot") {
		t.Errorf("warnings %v", warns)
	}
}

// plugin "docker" sets the pause image of bridge allocations, as Nomad's.
func TestParseDockerPlugin(t *testing.T) {
	src := "plugin \"docker\" {\n  config {\n    infra_image = \"registry.local/pause:3.10\"\n    infra_image_pull_timeout = \"90s\"\n  }\n}\n"
	c, warns, err := Parse("p.hcl", []byte(src))
	if err != nil || len(warns) > 0 {
		t.Fatalf("%v %v", err, warns)
	}
	if d := c.Plugin.Docker; d.InfraImage != "registry.local/pause:3.10" || d.InfraImagePullTimeout != 90*time.Second {
		t.Errorf("plugin docker %+v", d)
	}
}
