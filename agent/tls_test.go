package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/config"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
	"github.com/droverhq/drover/tlsutil"
	"github.com/droverhq/drover/tlsutil/tlstest"
)

// tlsServerConfig is testConfig with the tls block on (http, rpc, both
// verifications) and a server certificate of ca.
func tlsServerConfig(t *testing.T, ca *tlstest.CA, name string, expect int, join ...string) Config {
	cfg := testConfig(t, name, expect, join...)
	cfg.TLS = ca.Config(tlsutil.RoleServer)
	cfg.JoinToken = "tls-test-join-token"
	return cfg
}

// cliClient is the CLI's client of an agent, with files (tlstest.CA.CLI).
func cliClient(t *testing.T, a *Agent, files tlsutil.ClientFiles) *apiclient.Client {
	t.Helper()
	c, err := apiclient.NewCLI(a.HTTPAddr(), files)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rawGet does one HTTPS request with the given client TLS settings and
// returns the status code, or the transport's error.
func rawDo(t *testing.T, method, url string, files tlsutil.ClientFiles, header http.Header) (int, string, error) {
	t.Helper()
	tc, err := tlsutil.CLIConfig(files)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(bounded(t), method, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), nil
}

// Three servers and a client agent with tls.http and tls.rpc and both
// verifications: the servers form a cluster over HTTPS joins and Raft
// over TLS, the client registers and runs an allocation over HTTPS, and
// a write sent to a follower reaches the leader.
func TestAgentsOverMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t)
	s1 := startAgentWith(t, tlsServerConfig(t, ca, "s1", 3))
	s2 := startAgentWith(t, tlsServerConfig(t, ca, "s2", 3, s1.HTTPAddr()))
	s3 := startAgentWith(t, tlsServerConfig(t, ca, "s3", 3, s1.HTTPAddr()))
	all := []*Agent{s1, s2, s3}
	var leader, follower *Agent
	waitFor(t, "one leader with three voters", func() error {
		leader, follower = nil, nil
		for _, a := range all {
			v, err := voters(a)
			if err != nil {
				return err
			}
			if len(v) != 3 {
				return fmt.Errorf("%s sees %d voters", a.cfg.NodeName, len(v))
			}
			if a.IsLeader() {
				leader = a
			} else {
				follower = a
			}
		}
		if leader == nil {
			return errors.New("no leader")
		}
		return nil
	})
	if !strings.HasPrefix(s1.Cluster().Addr(), "127.0.0.1:") {
		t.Fatalf("raft address %s", s1.Cluster().Addr())
	}

	clientTLS := ca.Config(tlsutil.RoleClient)
	c := startAgentWith(t, Config{
		Client: true, Servers: []string{s1.HTTPAddr(), s2.HTTPAddr(), s3.HTTPAddr()}, DataDir: filepath.Join(t.TempDir(), "c1"),
		HTTPAddr: loopback.Addr(t), NodeName: "c1", TLS: clientTLS,
		Logger: hclog.New(&hclog.LoggerOptions{Name: "c1", Output: tWriter{t}, Level: hclog.Debug}),
	})
	t.Cleanup(func() { c.Client().Shutdown(true) })

	cli := cliClient(t, follower, ca.CLI())
	waitFor(t, "the client's node, ready", func() error {
		n, _, err := cli.Nodes().Info(bounded(t), c.Client().NodeID(), nil)
		if err != nil {
			return err
		}
		if n.Status != structs.NodeStatusReady {
			return fmt.Errorf("node %s", n.Status)
		}
		return nil
	})
	// A write to a follower is forwarded to the leader over HTTPS.
	waitFor(t, "registering through a follower", func() error {
		_, err := cli.Jobs().Register(bounded(t), map[string]any{
			"ID": "web", "Name": "web", "Type": "service", "Datacenters": []string{"dc1"},
			"TaskGroups": []any{map[string]any{"Name": "g", "Count": 1, "Tasks": []any{map[string]any{
				"Name": "t", "Driver": "mock", "Config": map[string]any{"run_for": "1h"}}}}},
		})
		return err
	})
	waitFor(t, "the allocation running on the client", func() error {
		allocs, _, err := cli.Jobs().Allocations(bounded(t), "web", nil)
		if err != nil {
			return err
		}
		for _, a := range allocs {
			if a.ClientStatus == structs.AllocClientStatusRunning && a.NodeID == c.Client().NodeID() {
				return nil
			}
		}
		return fmt.Errorf("allocations %+v", allocs)
	})
	// The servers' member probes run over HTTPS too.
	waitFor(t, "three alive members", func() error {
		var out structs.ServerMembers
		if _, err := cli.Get(bounded(t), "/v1/agent/members", nil, &out); err != nil {
			return err
		}
		alive := 0
		for _, m := range out.Members {
			if m.Status == structs.MemberStatusAlive {
				alive++
			}
		}
		if alive != 3 {
			return fmt.Errorf("%d alive of %+v", alive, out.Members)
		}
		return nil
	})
}

// With verify_https_client, a caller without a certificate, or with one
// of another CA, is refused at the handshake; plain HTTP gets nothing.
func TestHTTPSRequiresClientCertificates(t *testing.T) {
	ca := tlstest.NewCA(t)
	other := tlstest.NewCA(t)
	s := startAgentWith(t, tlsServerConfig(t, ca, "s1", 1))
	url := "https://" + s.HTTPAddr() + "/v1/status/leader"
	waitFor(t, "a leader", func() error {
		code, body, err := rawDo(t, http.MethodGet, url, ca.CLI(), nil)
		if err != nil || code != http.StatusOK || body == `""` {
			return fmt.Errorf("%d %s %v", code, body, err)
		}
		return nil
	})
	if _, _, err := rawDo(t, http.MethodGet, url, tlsutil.ClientFiles{CACert: ca.CertFile}, nil); err == nil {
		t.Error("no client certificate, yet answered")
	}
	foreign := other.CLI()
	foreign.CACert = ca.CertFile
	if _, _, err := rawDo(t, http.MethodGet, url, foreign, nil); err == nil {
		t.Error("a client certificate of another CA, yet answered")
	}
	wrongCA := ca.CLI()
	wrongCA.CACert = other.CertFile
	if _, _, err := rawDo(t, http.MethodGet, url, wrongCA, nil); err == nil {
		t.Error("the CLI trusted an agent certificate of another CA")
	}
	resp, err := http.Get("http://" + s.HTTPAddr() + "/v1/status/leader")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP answered 200")
		}
	}
}

// With verify_server_hostname, a client's certificate (same CA) cannot
// join, cannot pose as a forwarding server, and the CLI's cannot call the
// client endpoints; each may do what its role does.
func TestCertificateRolesGuardTheServerRoutes(t *testing.T) {
	ca := tlstest.NewCA(t)
	s := startAgentWith(t, tlsServerConfig(t, ca, "s1", 1))
	base := "https://" + s.HTTPAddr()
	clientCert, clientKey := ca.Cert(tlsutil.RoleClient, "")
	asClient := tlsutil.ClientFiles{CACert: ca.CertFile, ClientCert: clientCert, ClientKey: clientKey}
	serverCert, serverKey := ca.Cert(tlsutil.RoleServer, "")
	asServer := tlsutil.ClientFiles{CACert: ca.CertFile, ClientCert: serverCert, ClientKey: serverKey}
	waitFor(t, "a leader", func() error {
		if !s.IsLeader() {
			return errors.New("not yet")
		}
		return nil
	})

	for _, tc := range []struct {
		name   string
		method string
		path   string
		who    tlsutil.ClientFiles
		header http.Header
		want   int // 403, or anything else (-1)
	}{
		{"client joins", http.MethodPost, "/v1/internal/join", asClient, nil, http.StatusForbidden},
		{"CLI joins", http.MethodPost, "/v1/internal/join", ca.CLI(), nil, http.StatusForbidden},
		{"client forwards", http.MethodGet, "/v1/jobs", asClient, http.Header{"X-Drover-Forwarded": {"1"}}, http.StatusForbidden},
		{"client forwards a snapshot", http.MethodGet, "/v1/operator/snapshot", asClient, http.Header{"X-Drover-Forward-Signature": {"x"}}, http.StatusForbidden},
		{"client forwards to a node", http.MethodGet, "/v1/client/stats?node_id=x", asClient, http.Header{ClientForwardedHeader: {"1"}}, http.StatusForbidden},
		{"CLI registers a node", http.MethodPut, "/v1/internal/node/register", ca.CLI(), nil, http.StatusForbidden},
		{"CLI reads jobs", http.MethodGet, "/v1/jobs", ca.CLI(), nil, -1},
		{"client registers a node", http.MethodPut, "/v1/internal/node/register", asClient, nil, -1},
		{"server joins", http.MethodPost, "/v1/internal/join", asServer, nil, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, err := rawDo(t, tc.method, base+tc.path, tc.who, tc.header)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == http.StatusForbidden && (code != http.StatusForbidden || !strings.Contains(body, "server.global.nomad")):
				t.Errorf("%s %s: %d %q, want 403 naming the role", tc.method, tc.path, code, body)
			case tc.want == -1 && code == http.StatusForbidden && strings.Contains(body, "needs a certificate naming"):
				t.Errorf("%s %s refused for its certificate: %s", tc.method, tc.path, body)
			}
		})
	}

	// The join of a client-certificate holder that knows the join token
	// is still refused.
	rogue, err := tlsutil.New(ca.Config(tlsutil.RoleClient))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := apiclient.NewWithHTTPClient("https://"+s.HTTPAddr(), newAgentHTTPClient(rogue))
	if err != nil {
		t.Fatal(err)
	}
	_, err = rc.Join(bounded(t), &structs.ServerJoinRequest{Self: structs.ServerMember{
		ID: "rogue", Name: "rogue", RaftAddr: "127.0.0.1:1", HTTPAddr: "127.0.0.1:2", Region: "global"}}, "tls-test-join-token")
	var se *apiclient.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusForbidden {
		t.Fatalf("a client certificate's join: %v, want 403", err)
	}
	if p := peer(t, s, "rogue"); p != nil {
		t.Fatalf("the rogue is a Raft peer: %+v", p)
	}
}

// A server agent refuses to start with a client's certificate when
// verify_server_hostname is on, and with a certificate of another CA.
func TestAgentRefusesCertificatesOfTheWrongRole(t *testing.T) {
	ca := tlstest.NewCA(t)
	other := tlstest.NewCA(t)
	cfg := testConfig(t, "s1", 1)
	cfg.TLS = ca.Config(tlsutil.RoleClient)
	if _, err := New(cfg); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "server.global.nomad") {
		t.Errorf("a server with a client certificate: %v", err)
	}
	cfg = testConfig(t, "s2", 1)
	cfg.TLS = ca.Config(tlsutil.RoleServer)
	cfg.TLS.CertFile, cfg.TLS.KeyFile = other.Cert(tlsutil.RoleServer, "")
	if _, err := New(cfg); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "not signed by the CA") {
		t.Errorf("a certificate of another CA: %v", err)
	}
}

func TestRequiredRoles(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		header       string
		want         []string
	}{
		{"POST", "/v1/internal/join", "", serverRoles},
		{"PUT", "/v1/internal/node/register", "", nodeRoles},
		{"PUT", "/v1/internal/allocs/update", "", nodeRoles},
		{"GET", "/v1/jobs", "", nil},
		{"GET", "/v1/jobs", "X-Drover-Forwarded", serverRoles},
		{"GET", "/v1/operator/snapshot", "X-Drover-Forward-Signature", serverRoles},
		{"GET", "/v1/client/fs/logs/x", ClientForwardedHeader, serverRoles},
		{"GET", "/v1/operator/snapshot", "", nil},
	} {
		r, err := http.NewRequestWithContext(context.Background(), tc.method, "https://x"+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.header != "" {
			r.Header.Set(tc.header, "1")
		}
		if got := requiredRoles(r); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s %s %s: %v, want %v", tc.method, tc.path, tc.header, got, tc.want)
		}
	}
}

func TestOpenWarnings(t *testing.T) {
	none := openWarnings(Config{Server: true}, "127.0.0.1:4646", "127.0.0.1:4647")
	if len(none) != 0 {
		t.Errorf("loopback only: %v", none)
	}
	open := strings.Join(openWarnings(Config{Server: true, Client: true}, "0.0.0.0:4646", "10.0.0.5:4647"), "\n")
	for _, want := range []string{
		"the HTTP API on 0.0.0.0:4646 is served without TLS (tls.http is off)",
		"the HTTP API on 0.0.0.0:4646 has no ACLs (acl.enabled is off)",
		"raw_exec is enabled",
		"Raft on 10.0.0.5:4647 is served without TLS (tls.rpc is off)",
	} {
		if !strings.Contains(open, want) {
			t.Errorf("warnings lack %q:\n%s", want, open)
		}
	}
	secured := openWarnings(Config{Server: true, TLS: tlsutil.Config{HTTP: true, RPC: true, VerifyHTTPSClient: true}}, "10.0.0.5:4646", "10.0.0.5:4647")
	if len(secured) != 1 || !strings.Contains(secured[0], "no ACLs") {
		t.Errorf("TLS on, ACLs off: %v", secured)
	}
	lax := strings.Join(openWarnings(Config{Server: true, TLS: tlsutil.Config{HTTP: true, RPC: true}}, "10.0.0.5:4646", ""), "\n")
	if !strings.Contains(lax, "tls.verify_https_client is off") {
		t.Errorf("HTTPS without client certificates: %s", lax)
	}
	if exposed("[::1]:4646") || exposed("localhost:1") || !exposed("[::]:4646") || !exposed("192.168.1.2:1") {
		t.Error("exposed() misjudges loopback")
	}
}

// raw_exec is off in an agent built from a configuration that does not
// enable it, as Nomad's: the node reports the driver not detected and
// "disabled". The plugin block, Nomad's older option and -dev turn it on.
func TestRawExecFollowsTheConfiguration(t *testing.T) {
	base := "data_dir = \"/d\"\nclient {\n  enabled = true\n  servers = [\"127.0.0.1:4646\"]\n}\n"
	for _, tc := range []struct {
		name, src string
		disabled  bool
	}{
		{"default", base, true},
		{"plugin", base + "plugin \"raw_exec\" {\n  config {\n    enabled = true\n  }\n}\n", false},
		{"option", strings.Replace(base, "}\n", "  options = {\n    \"driver.raw_exec.enable\" = \"1\"\n  }\n}\n", 1), false},
	} {
		file, _, err := config.Parse("c.hcl", []byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		if got := FromConfig(config.Default().Merge(file)).DisableRawExec; got != tc.disabled {
			t.Errorf("%s: DisableRawExec = %v, want %v", tc.name, got, tc.disabled)
		}
	}
	if FromConfig(config.DevConfig()).DisableRawExec {
		t.Error("-dev disables raw_exec")
	}

	s := startAgent(t, "s1", 1)
	c := startAgentWith(t, Config{
		Client: true, Servers: []string{s.HTTPAddr()}, DataDir: filepath.Join(t.TempDir(), "c1"),
		HTTPAddr: loopback.Addr(t), NodeName: "c1", DisableRawExec: true,
		Logger: hclog.New(&hclog.LoggerOptions{Name: "c1", Output: tWriter{t}, Level: hclog.Debug}),
	})
	t.Cleanup(func() { c.Client().Shutdown(true) })
	waitFor(t, "the node with its drivers", func() error {
		n, _, err := api(t, s).Nodes().Info(bounded(t), c.Client().NodeID(), nil)
		if err != nil {
			return err
		}
		d := n.Drivers["raw_exec"]
		if d == nil {
			return fmt.Errorf("drivers %+v", n.Drivers)
		}
		if d.Detected || d.Healthy || d.HealthDescription != "disabled" || n.Attributes["driver.raw_exec"] != "" {
			t.Fatalf("raw_exec on a client that disables it: %+v, attribute %q", d, n.Attributes["driver.raw_exec"])
		}
		return nil
	})
}
