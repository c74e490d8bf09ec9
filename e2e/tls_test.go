package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/tlsutil"
)

// certDir runs `drover tls ca create` and `drover tls cert create` for
// each role in a new directory, and returns the directory.
func certDir(t *testing.T, roles ...string) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command(droverBin, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("drover %v: %v\n%s", args, err, out)
		}
	}
	run("tls", "ca", "create")
	for _, r := range roles {
		run("tls", "cert", "create", "-"+r)
	}
	return dir
}

// tlsBlock is the tls block of an agent with both encryptions and both
// verifications on, with the files of role in dir (and ca's CA file).
func tlsBlock(caDir, certDir, role string) string {
	cert, key := tlsutil.CertFileNames(role, "global")
	return fmt.Sprintf(`
tls {
  http = true
  rpc  = true
  ca_file   = %q
  cert_file = %q
  key_file  = %q
  verify_server_hostname = true
  verify_https_client    = true
}
`, filepath.Join(caDir, tlsutil.CAFileName), filepath.Join(certDir, cert), filepath.Join(certDir, key))
}

// cliTLSArgs are the CLI's flags for the certificates in dir.
func cliTLSArgs(dir string) []string {
	cert, key := tlsutil.CertFileNames(tlsutil.RoleCLI, "global")
	return []string{"-ca-cert", filepath.Join(dir, tlsutil.CAFileName),
		"-client-cert", filepath.Join(dir, cert), "-client-key", filepath.Join(dir, key)}
}

// droverCLI runs the CLI with args, bounded in time, and returns its
// output and exit error.
func droverCLI(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(bounded(t, 60*time.Second), droverBin, args...)
	cmd.Env = append(append(os.Environ(), "DROVER_ADDR=", "NOMAD_ADDR=", "NOMAD_CACERT=", "NOMAD_CLIENT_CERT=",
		"NOMAD_CLIENT_KEY=", "DROVER_CACERT=", "DROVER_CLIENT_CERT=", "DROVER_CLIENT_KEY="), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// A three-server cluster and a client agent, every one with tls.http,
// tls.rpc, verify_server_hostname and verify_https_client, certificates
// made by `drover tls`: the servers form a cluster (joins over HTTPS, Raft
// over mutual TLS), the client registers, and the CLI given -ca-cert,
// -client-cert and -client-key (or NOMAD_CACERT…) runs a raw_exec job end
// to end through a follower. A client agent whose certificate another CA
// signed is refused; so are a server configured with a client's
// certificate, a client's certificate at the join route, and callers
// without a certificate.
func TestMutualTLSClusterRunsAJob(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five agent processes")
	}
	certs := certDir(t, "server", "client", "cli")
	rogueCerts := certDir(t, "client", "cli")
	dir := t.TempDir()

	type srv struct{ name, http, raft string }
	servers := make([]srv, 3)
	var joins, addrs []string
	for i := range servers {
		servers[i] = srv{fmt.Sprintf("s%d", i+1), loopback.Addr(t), loopback.Addr(t)}
		joins = append(joins, fmt.Sprintf("%q", servers[i].http))
		addrs = append(addrs, servers[i].http)
	}
	procs := make([]*agentProc, 3)
	for i, s := range servers {
		cfg := filepath.Join(dir, s.name+".hcl")
		writeFile(t, cfg, fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = "127.0.0.1"
log_level = "debug"
ports {
  http = %s
  raft = %s
}
server {
  enabled          = true
  bootstrap_expect = 3
  retry_join       = [%s]
  join_token       = "e2e-tls-join-token"
}
`, s.name, filepath.Join(dir, s.name), port(s.http), port(s.raft), strings.Join(joins, ", "))+tlsBlock(certs, certs, "server"))
		procs[i] = startAgentProc(t, s.name, s.http, "-config", cfg)
	}

	clientCfg := filepath.Join(dir, "c1.hcl")
	clientHTTP := loopback.Addr(t)
	writeFile(t, clientCfg, fmt.Sprintf(`
name      = "c1"
data_dir  = %q
log_level = "debug"
ports {
  http = %s
}
client {
  enabled = true
  servers = [%s]
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`, filepath.Join(dir, "c1"), port(clientHTTP), strings.Join(joins, ", "))+tlsBlock(certs, certs, "client"))
	cl := startAgentProc(t, "c1", clientHTTP, "-config", clientCfg)

	// The CLI's client, with the CLI's certificate.
	cliCert, cliKey := tlsutil.CertFileNames(tlsutil.RoleCLI, "global")
	files := tlsutil.ClientFiles{CACert: filepath.Join(certs, tlsutil.CAFileName),
		ClientCert: filepath.Join(certs, cliCert), ClientKey: filepath.Join(certs, cliKey)}
	api := func(addr string) *apiclient.Client {
		c, err := apiclient.NewCLI(addr, files)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	eventually(t, 60*time.Second, "a leader with three voters", func() error {
		cfg, err := api(addrs[0]).Operator().RaftConfiguration(ctx(t))
		if err != nil {
			return err
		}
		leaders := 0
		for _, s := range cfg.Servers {
			if s.Leader {
				leaders++
			}
		}
		if len(cfg.Servers) != 3 || leaders != 1 {
			return fmt.Errorf("configuration %s", jsonString(cfg))
		}
		return nil
	})
	eventually(t, 30*time.Second, "the client's node, ready", func() error {
		nodes, _, err := api(addrs[1]).Nodes().List(ctx(t), nil)
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if n.Name == "c1" && n.Status == "ready" {
				return nil
			}
		}
		return fmt.Errorf("nodes %s", jsonString(nodes))
	})

	// The CLI, with the flags, through every server (a follower forwards
	// to the leader over HTTPS).
	tlsArgs := cliTLSArgs(certs)
	var out string
	eventually(t, 30*time.Second, "drover job run over HTTPS", func() error {
		var err error
		out, err = droverCLI(t, nil, append([]string{"job", "run", "-detach", "-address", "https://" + addrs[2]},
			append(tlsArgs, "testdata/echo.hcl")...)...)
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})
	var allocID string
	eventually(t, 30*time.Second, "the job running on the client", func() error {
		allocs, err := jobAllocs(t, api(addrs[0]), "echo")
		if err != nil {
			return err
		}
		run := runningAllocs(allocs, 0)
		if len(run) != 1 || allocs[0].NodeName != "c1" {
			return fmt.Errorf("allocations %s", jsonString(allocs))
		}
		allocID = run[0]
		return allHaveProcesses(run)
	})
	t.Cleanup(func() { killAllocProcs(allocID) })
	// The same CLI settings from Nomad's variables; the logs come from
	// the client node over HTTPS.
	env := []string{"NOMAD_ADDR=https://" + addrs[1], "NOMAD_CACERT=" + files.CACert,
		"NOMAD_CLIENT_CERT=" + files.ClientCert, "NOMAD_CLIENT_KEY=" + files.ClientKey}
	eventually(t, 20*time.Second, "drover alloc logs over HTTPS", func() error {
		out, err := droverCLI(t, env, "alloc", "logs", allocID, "echo")
		if err != nil || !strings.Contains(out, "hello from drover") {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})
	// A server forwards a client request to the allocation's node over
	// HTTPS, presenting its server certificate.
	eventually(t, 20*time.Second, "the task's stdout through a server", func() error {
		rc, err := api(addrs[0]).AllocLogs(bounded(t, 5*time.Second), allocID, apiclient.LogsOptions{Task: "echo"})
		if err != nil {
			return err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), "hello from drover") {
			return fmt.Errorf("stdout %q", b)
		}
		return nil
	})
	if out, err := droverCLI(t, env, "job", "status", "echo"); err != nil || !strings.Contains(out, "running") {
		t.Errorf("job status over HTTPS: %v\n%s", err, out)
	}
	// Without the CLI's certificate the API refuses.
	if out, err := droverCLI(t, []string{"NOMAD_ADDR=https://" + addrs[0], "NOMAD_CACERT=" + files.CACert}, "job", "status", "echo"); err == nil {
		t.Errorf("job status without a client certificate succeeded:\n%s", out)
	}

	// A client agent whose certificate another CA signed never registers:
	// the servers refuse its handshake.
	rogueCfg := filepath.Join(dir, "rogue.hcl")
	rogueHTTP := loopback.Addr(t)
	writeFile(t, rogueCfg, fmt.Sprintf(`
name      = "rogue"
data_dir  = %q
log_level = "debug"
ports {
  http = %s
}
client {
  enabled = true
  servers = [%s]
}
`, filepath.Join(dir, "rogue"), port(rogueHTTP), strings.Join(joins, ", "))+tlsBlock(rogueCerts, rogueCerts, "client"))
	rogue := startAgentProc(t, "rogue", rogueHTTP, "-config", rogueCfg)
	eventually(t, 30*time.Second, "the rogue client's refused registration", func() error {
		for _, line := range strings.Split(rogue.logs.String(), "\n") {
			if strings.Contains(line, "register") && strings.Contains(line, "certificate") {
				t.Logf("rogue: %s", line)
				return nil
			}
		}
		return fmt.Errorf("no refused registration yet")
	})
	nodes, _, err := api(addrs[0]).Nodes().List(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Name == "rogue" {
			t.Fatalf("the rogue client registered: %s", jsonString(n))
		}
	}
	// The same, asked directly: a client certificate of another CA, the
	// servers' CA trusted, at the node registration route.
	rogueCert, rogueKey := tlsutil.CertFileNames(tlsutil.RoleClient, "global")
	foreign := tlsutil.ClientFiles{CACert: files.CACert, ClientCert: filepath.Join(rogueCerts, rogueCert), ClientKey: filepath.Join(rogueCerts, rogueKey)}
	if code, err := httpsDo(t, foreign, http.MethodPut, "https://"+addrs[0]+"/v1/internal/node/register"); err == nil {
		t.Errorf("node registration with a certificate of another CA answered %d", code)
	}
	// A client's certificate of the cluster's CA cannot join.
	clientCert, clientKey := tlsutil.CertFileNames(tlsutil.RoleClient, "global")
	asClient := tlsutil.ClientFiles{CACert: files.CACert, ClientCert: filepath.Join(certs, clientCert), ClientKey: filepath.Join(certs, clientKey)}
	if code, err := httpsDo(t, asClient, http.MethodPost, "https://"+addrs[0]+"/v1/internal/join"); err != nil || code != http.StatusForbidden {
		t.Errorf("a client certificate's join: %d %v, want 403", code, err)
	}
	// A server configured with a client's certificate refuses to start.
	badCfg := filepath.Join(dir, "bad.hcl")
	writeFile(t, badCfg, fmt.Sprintf(`
data_dir = %q
server {
  enabled          = true
  bootstrap_expect = 1
}
`, filepath.Join(dir, "bad"))+tlsBlock(certs, certs, "client"))
	if out, err := droverCLI(t, nil, "agent", "-config", badCfg, "-http-addr", loopback.Addr(t), "-raft-addr", loopback.Addr(t)); err == nil ||
		!strings.Contains(out, "not server.global.nomad") {
		t.Errorf("a server with a client certificate: %v\n%s", err, out)
	}

	// Stopping the job ends the process; the client stops cleanly.
	if out, err := droverCLI(t, env, "job", "stop", "-detach", "echo"); err != nil {
		t.Fatalf("job stop: %v\n%s", err, out)
	}
	eventually(t, 30*time.Second, "the task's process to end", func() error {
		if p := taskProcs()[allocID]; len(p) > 0 {
			return fmt.Errorf("still running: %v", p)
		}
		return nil
	})
	if code := cl.interrupt(); code != 0 {
		t.Errorf("client exited %d after SIGINT", code)
	}
	// The servers' logs name what they refused.
	refused := false
	for _, p := range procs {
		refused = refused || strings.Contains(p.logs.String(), "bad certificate") ||
			strings.Contains(p.logs.String(), "certificate lacks the role")
	}
	if !refused {
		t.Error("no server logged a refused certificate")
	}
}

// httpsDo does one request with the given TLS files and returns the
// status, or the transport's error.
func httpsDo(t *testing.T, files tlsutil.ClientFiles, method, url string) (int, error) {
	t.Helper()
	tc, err := tlsutil.CLIConfig(files)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tc.Clone(), TLSHandshakeTimeout: 5 * time.Second}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(bounded(t, 10*time.Second), method, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}
