package tlsutil_test

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/tlsutil"
	"github.com/droverhq/drover/tlsutil/tlstest"
)

func tlsLoad(certPEM, keyPEM []byte) (tls.Certificate, error) {
	return tls.X509KeyPair(certPEM, keyPEM)
}

// handshake runs a TLS handshake between a server and a client over a real
// loopback TCP connection, bounded in time, and exchanges one byte (with
// TLS 1.3 a client learns that the server refused its certificate only on
// its first read). It returns each side's error and the server's view of
// the connection.
func handshake(t *testing.T, server, client *tls.Config) (serverErr, clientErr error, state tls.ConnectionState) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	deadline := time.Now().Add(10 * time.Second)
	type result struct {
		err   error
		state tls.ConnectionState
	}
	done := make(chan result, 1)
	go func() {
		raw, err := ln.Accept()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer raw.Close()
		_ = raw.SetDeadline(deadline)
		conn := tls.Server(raw, server)
		if err := conn.Handshake(); err != nil {
			done <- result{err: err}
			return
		}
		_, err = conn.Write([]byte{1})
		done <- result{err: err, state: conn.ConnectionState()}
	}()
	raw, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_ = raw.SetDeadline(deadline)
	conn := tls.Client(raw, client)
	clientErr = conn.Handshake()
	if clientErr == nil {
		_, clientErr = conn.Read(make([]byte, 1))
	}
	raw.Close()
	r := <-done
	return r.err, clientErr, r.state
}

func TestNewDisabledBuildsNothing(t *testing.T) {
	c, err := tlsutil.New(tlsutil.Config{CAFile: "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPServer() != nil || c.ServerHTTPClient() != nil || c.NodeHTTPClient() != nil || c.RaftServer() != nil || c.RaftClient() != nil {
		t.Error("TLS off, yet a tls.Config was built")
	}
	if c.Scheme() != "http" || c.ServerRoleRequired() {
		t.Errorf("scheme %s, server role required %v", c.Scheme(), c.ServerRoleRequired())
	}
	var nilC *tlsutil.Configurator
	if nilC.HTTPEnabled() || nilC.RPCEnabled() || nilC.Scheme() != "http" || nilC.CheckRole("server") != nil {
		t.Error("a nil Configurator encrypts something")
	}
}

func TestNewRefusesBadFiles(t *testing.T) {
	ca := tlstest.NewCA(t)
	other := tlstest.NewCA(t)
	good := ca.Config(tlsutil.RoleServer)
	foreignCert, foreignKey := other.Cert(tlsutil.RoleServer, "")
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*tlsutil.Config)
		want string
	}{
		{"no ca_file", func(c *tlsutil.Config) { c.CAFile = "" }, "tls.ca_file is required"},
		{"missing ca", func(c *tlsutil.Config) { c.CAFile = "/nonexistent/ca.pem" }, "/nonexistent/ca.pem"},
		{"garbage ca", func(c *tlsutil.Config) { c.CAFile = garbage }, "holds no PEM certificate"},
		{"missing key", func(c *tlsutil.Config) { c.KeyFile = "/nonexistent/key.pem" }, "/nonexistent/key.pem"},
		{"key of another cert", func(c *tlsutil.Config) { c.KeyFile = foreignKey }, "private key does not match"},
		{"cert of another CA", func(c *tlsutil.Config) { c.CertFile, c.KeyFile = foreignCert, foreignKey }, "not signed by the CA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.edit(&cfg)
			_, err := tlsutil.New(cfg)
			if err == nil || !errors.Is(err, tlsutil.ErrFile) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrFile saying %q", err, tc.want)
			}
		})
	}
	if _, err := tlsutil.New(good); err != nil {
		t.Fatalf("good configuration refused: %v", err)
	}
}

func TestCheckRole(t *testing.T) {
	ca := tlstest.NewCA(t)
	server, client := ca.Configurator(tlsutil.RoleServer), ca.Configurator(tlsutil.RoleClient)
	if err := server.CheckRole(tlsutil.RoleServer); err != nil {
		t.Errorf("server cert as server: %v", err)
	}
	if err := server.CheckRole(tlsutil.RoleClient); err != nil {
		t.Errorf("server cert as client (an agent running both): %v", err)
	}
	if err := client.CheckRole(tlsutil.RoleClient); err != nil {
		t.Errorf("client cert as client: %v", err)
	}
	err := client.CheckRole(tlsutil.RoleServer)
	if !errors.Is(err, tlsutil.ErrPeerRole) || !strings.Contains(err.Error(), "server.global.nomad") {
		t.Errorf("client cert as server: err = %v, want ErrPeerRole naming server.global.nomad", err)
	}
	cfg := ca.Config(tlsutil.RoleClient)
	cfg.VerifyServerHostname = false
	lax, err := tlsutil.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := lax.CheckRole(tlsutil.RoleServer); err != nil {
		t.Errorf("without verify_server_hostname any certificate of the CA may serve: %v", err)
	}
}

func TestHTTPServerClientCertificates(t *testing.T) {
	ca := tlstest.NewCA(t)
	other := tlstest.NewCA(t)
	server := ca.Configurator(tlsutil.RoleServer)

	cliOf := func(f tlsutil.ClientFiles) *tls.Config {
		c, err := tlsutil.CLIConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		c.ServerName = "127.0.0.1"
		return c
	}
	good := ca.CLI()
	noCert := tlsutil.ClientFiles{CACert: ca.CertFile}
	foreign := other.CLI()
	foreign.CACert = ca.CertFile // trusts the agent, but its own cert is another CA's

	if serr, cerr, st := handshake(t, server.HTTPServer(), cliOf(good)); serr != nil || cerr != nil {
		t.Fatalf("CLI certificate of the CA refused: server %v, client %v", serr, cerr)
	} else if err := server.CheckPeerRole(&st, tlsutil.RoleCLI); err != nil {
		t.Errorf("the server does not see the CLI role: %v", err)
	}
	if serr, cerr, _ := handshake(t, server.HTTPServer(), cliOf(noCert)); serr == nil || cerr == nil {
		t.Errorf("no client certificate accepted with verify_https_client: server %v, client %v", serr, cerr)
	}
	if serr, cerr, _ := handshake(t, server.HTTPServer(), cliOf(foreign)); serr == nil || cerr == nil {
		t.Errorf("client certificate of another CA accepted: server %v, client %v", serr, cerr)
	}

	// Without verify_https_client no certificate is needed, but one given
	// is verified, so that routes can still check roles.
	cfg := ca.Config(tlsutil.RoleServer)
	cfg.VerifyHTTPSClient = false
	lax, err := tlsutil.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	serr, cerr, st := handshake(t, lax.HTTPServer(), cliOf(noCert))
	if serr != nil || cerr != nil {
		t.Fatalf("without verify_https_client a client without certificate is refused: %v %v", serr, cerr)
	}
	if err := lax.CheckPeerRole(&st, tlsutil.RoleServer); !errors.Is(err, tlsutil.ErrNoPeerCert) {
		t.Errorf("role of a peer without certificate: %v, want ErrNoPeerCert", err)
	}
	// A certificate of another CA is not even sent (Go's client sends only
	// one the server's CAs signed): the peer has no role.
	if serr, _, st := handshake(t, lax.HTTPServer(), cliOf(foreign)); serr == nil {
		if err := lax.CheckPeerRole(&st, tlsutil.RoleCLI); err == nil {
			t.Error("without verify_https_client a certificate of another CA gives a role")
		}
	}
	// The CLI refuses an agent whose certificate another CA signed.
	if _, cerr, _ := handshake(t, other.Configurator(tlsutil.RoleServer).HTTPServer(), cliOf(good)); cerr == nil {
		t.Error("the CLI accepted an agent certificate of another CA")
	}
}

func TestAgentHTTPClientChecksServerRole(t *testing.T) {
	ca := tlstest.NewCA(t)
	other := tlstest.NewCA(t)
	server, client := ca.Configurator(tlsutil.RoleServer), ca.Configurator(tlsutil.RoleClient)

	// A client agent calling a server: both sides verified, roles right.
	serr, cerr, st := handshake(t, server.HTTPServer(), client.ServerHTTPClient())
	if serr != nil || cerr != nil {
		t.Fatalf("client agent to server: %v %v", serr, cerr)
	}
	if err := server.CheckPeerRole(&st, tlsutil.RoleServer); !errors.Is(err, tlsutil.ErrPeerRole) {
		t.Errorf("a client's certificate passes as a server's: %v", err)
	}
	if err := server.CheckPeerRole(&st, tlsutil.RoleClient, tlsutil.RoleServer); err != nil {
		t.Errorf("a client's certificate is not a client's: %v", err)
	}
	// An agent expecting a server refuses a peer with a client's
	// certificate of the same CA.
	if _, cerr, _ := handshake(t, client.HTTPServer(), server.ServerHTTPClient()); !errors.Is(cerr, tlsutil.ErrPeerRole) {
		t.Errorf("a server accepted a client's certificate as a server's: %v", cerr)
	}
	// ... and any certificate of another CA.
	if _, cerr, _ := handshake(t, other.Configurator(tlsutil.RoleServer).HTTPServer(), server.ServerHTTPClient()); cerr == nil {
		t.Error("a server of another CA accepted")
	}
	// Calls to client nodes accept a client's or a server's certificate.
	if serr, cerr, _ := handshake(t, client.HTTPServer(), server.NodeHTTPClient()); serr != nil || cerr != nil {
		t.Errorf("server to client node: %v %v", serr, cerr)
	}
	if _, cerr, _ := handshake(t, server.HTTPServer(), server.NodeHTTPClient()); cerr != nil {
		t.Errorf("server to a node that is also a server: %v", cerr)
	}
	cliCert, cliKey := ca.Cert(tlsutil.RoleCLI, "")
	cfg := ca.Config(tlsutil.RoleServer)
	cfg.CertFile, cfg.KeyFile = cliCert, cliKey
	cliAgent, err := tlsutil.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, cerr, _ := handshake(t, cliAgent.HTTPServer(), server.NodeHTTPClient()); cerr == nil {
		t.Error("a node presenting a CLI certificate accepted")
	}
}

func TestRaftMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t)
	other := tlstest.NewCA(t)
	s1, s2 := ca.Configurator(tlsutil.RoleServer), ca.Configurator(tlsutil.RoleServer)
	client := ca.Configurator(tlsutil.RoleClient)

	if serr, cerr, _ := handshake(t, s1.RaftServer(), s2.RaftClient()); serr != nil || cerr != nil {
		t.Fatalf("server to server: %v %v", serr, cerr)
	}
	// A client certificate cannot dial in as a Raft peer...
	if serr, _, _ := handshake(t, s1.RaftServer(), client.RaftClient()); !errors.Is(serr, tlsutil.ErrPeerRole) {
		t.Errorf("a client certificate joined Raft: server err %v", serr)
	}
	// ...nor answer as one.
	if _, cerr, _ := handshake(t, client.RaftServer(), s1.RaftClient()); !errors.Is(cerr, tlsutil.ErrPeerRole) {
		t.Errorf("a client certificate answered as a Raft peer: client err %v", cerr)
	}
	// A server of another CA is refused both ways.
	o := other.Configurator(tlsutil.RoleServer)
	if serr, _, _ := handshake(t, s1.RaftServer(), o.RaftClient()); serr == nil {
		t.Error("a peer of another CA dialled in")
	}
	if _, cerr, _ := handshake(t, o.RaftServer(), s1.RaftClient()); cerr == nil {
		t.Error("a peer of another CA answered")
	}
	// A dialler without a certificate is refused.
	bare := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // the attacker
	if serr, _, _ := handshake(t, s1.RaftServer(), bare); serr == nil {
		t.Error("a peer without certificate dialled in")
	}
	// Without verify_server_hostname any certificate of the CA is a peer.
	cfg := ca.Config(tlsutil.RoleClient)
	cfg.VerifyServerHostname = false
	lax, err := tlsutil.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg2 := ca.Config(tlsutil.RoleServer)
	cfg2.VerifyServerHostname = false
	laxServer, err := tlsutil.New(cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if serr, cerr, _ := handshake(t, laxServer.RaftServer(), lax.RaftClient()); serr != nil || cerr != nil {
		t.Errorf("without verify_server_hostname: %v %v", serr, cerr)
	}
}

func TestCLIConfig(t *testing.T) {
	ca := tlstest.NewCA(t)
	if _, err := tlsutil.CLIConfig(tlsutil.ClientFiles{ClientCert: "x.pem"}); !errors.Is(err, tlsutil.ErrFile) {
		t.Errorf("a certificate without key: %v", err)
	}
	if _, err := tlsutil.CLIConfig(tlsutil.ClientFiles{CACert: "/nonexistent.pem"}); err == nil || !strings.Contains(err.Error(), "-ca-cert") {
		t.Errorf("missing CA: %v, want it to name -ca-cert", err)
	}
	f := ca.CLI()
	f.ServerName = "server.global.nomad"
	c, err := tlsutil.CLIConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	if c.ServerName != "server.global.nomad" || len(c.Certificates) != 1 || c.RootCAs == nil || c.InsecureSkipVerify {
		t.Errorf("config %+v", c)
	}
	// -tls-server-name server.global.nomad verifies the role name.
	server := ca.Configurator(tlsutil.RoleServer)
	if serr, cerr, _ := handshake(t, server.HTTPServer(), c); serr != nil || cerr != nil {
		t.Errorf("CLI with -tls-server-name: %v %v", serr, cerr)
	}
	c.ServerName = "client.global.nomad"
	if _, cerr, _ := handshake(t, server.HTTPServer(), c); cerr == nil {
		t.Error("the server's certificate passed as client.global.nomad")
	}
}
