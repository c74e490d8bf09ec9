// Package tlsutil builds every *tls.Config drover uses, from one
// configuration: the agent's HTTPS listener, the HTTP clients agents use
// towards servers and client nodes (joins, forwarding to the leader,
// probes, a client's calls to the servers), the Raft listener and dialer,
// and the CLI's HTTP client. Nothing else in drover builds a tls.Config, so
// that no listener or dialer can forget verification.
//
// Roles follow Nomad's naming: the certificate of a server in region R
// names server.R.nomad, a client agent's client.R.nomad, the CLI's
// cli.R.nomad. With verify_server_hostname, a peer acting as a server
// (a Raft peer, a server answering an agent's HTTP call, a server calling
// a server-only route) must present a certificate naming server.R.nomad,
// so that a client's certificate, signed by the same CA, cannot pass as a
// server.
package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Roles, as in Nomad's certificate names.
const (
	RoleServer = "server"
	RoleClient = "client"
	RoleCLI    = "cli"
)

// Domain is the domain of the role names; drover uses Nomad's.
const Domain = "nomad"

// RoleName returns the name a certificate of role in region carries:
// "server.global.nomad".
func RoleName(role, region string) string { return role + "." + region + "." + Domain }

// MinVersion is the least TLS version drover speaks, as Nomad's default.
const MinVersion = tls.VersionTLS12

// Sentinel errors.
var (
	// ErrFile: a certificate, key or CA file is missing, unreadable or
	// holds no usable PEM.
	ErrFile = errors.New("bad TLS file")
	// ErrPeerRole: the peer's certificate does not name the role the
	// connection requires.
	ErrPeerRole = errors.New("certificate does not name the required role")
	// ErrNoPeerCert: the peer presented no verified certificate.
	ErrNoPeerCert = errors.New("no verified client certificate")
)

// Config is the agent's tls block, as Nomad's.
type Config struct {
	// HTTP serves the HTTP API over TLS and makes the agent's HTTP calls
	// to other agents over TLS.
	HTTP bool
	// RPC runs Raft over TLS with certificates on both sides.
	RPC bool
	// CAFile, CertFile and KeyFile are PEM files: the cluster's CA, and
	// this agent's certificate and key, which must chain to the CA.
	CAFile, CertFile, KeyFile string
	// VerifyServerHostname requires a certificate naming
	// server.<region>.nomad of every peer acting as a server.
	VerifyServerHostname bool
	// VerifyHTTPSClient requires a certificate signed by the CA of every
	// HTTPS client (the CLI, other agents).
	VerifyHTTPSClient bool
	// Region is the agent's region, which the role names carry.
	Region string
}

// Enabled reports whether any traffic is encrypted.
func (c Config) Enabled() bool { return c.HTTP || c.RPC }

// Configurator holds the loaded CA and certificate and hands out the
// tls.Configs of every connection the agent makes or accepts. The zero
// value (and New with neither HTTP nor RPC) encrypts nothing.
type Configurator struct {
	cfg  Config
	pool *x509.CertPool
	cert *tls.Certificate
	leaf *x509.Certificate
}

// New loads the files of cfg and checks that the agent's certificate
// chains to the CA. With neither HTTP nor RPC it loads nothing.
func New(cfg Config) (*Configurator, error) {
	c := &Configurator{cfg: cfg}
	if !cfg.Enabled() {
		return c, nil
	}
	for _, f := range []struct{ name, path string }{{"ca_file", cfg.CAFile}, {"cert_file", cfg.CertFile}, {"key_file", cfg.KeyFile}} {
		if f.path == "" {
			return nil, fmt.Errorf("%w: tls.%s is required when tls.http or tls.rpc is on", ErrFile, f.name)
		}
	}
	pool, err := LoadCA(cfg.CAFile)
	if err != nil {
		return nil, err
	}
	cert, leaf, err := LoadKeyPair(cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, err
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil, fmt.Errorf("%w: %s is not signed by the CA in %s: %w", ErrFile, cfg.CertFile, cfg.CAFile, err)
	}
	c.pool, c.cert, c.leaf = pool, cert, leaf
	return c, nil
}

// Config returns the configuration c was built from.
func (c *Configurator) Config() Config { return c.cfg }

// HTTPEnabled reports whether the HTTP API and the agent's HTTP calls
// use TLS.
func (c *Configurator) HTTPEnabled() bool { return c != nil && c.cfg.HTTP }

// RPCEnabled reports whether Raft uses TLS.
func (c *Configurator) RPCEnabled() bool { return c != nil && c.cfg.RPC }

// Scheme is "https" when the HTTP API uses TLS, "http" otherwise.
func (c *Configurator) Scheme() string {
	if c.HTTPEnabled() {
		return "https"
	}
	return "http"
}

// Names returns the DNS names of the agent's certificate (nil without
// TLS).
func (c *Configurator) Names() []string {
	if c == nil || c.leaf == nil {
		return nil
	}
	return certNames(c.leaf)
}

// CheckRole reports whether the agent's own certificate may act in role:
// with verify_server_hostname a server's certificate must name
// server.<region>.nomad and a client's client.<region>.nomad or the
// server name (an agent running both presents the server's). Without TLS
// or verify_server_hostname anything goes.
func (c *Configurator) CheckRole(role string) error {
	if c == nil || c.leaf == nil || !c.cfg.VerifyServerHostname {
		return nil
	}
	want := []string{RoleName(role, c.cfg.Region)}
	if role == RoleClient {
		want = append(want, RoleName(RoleServer, c.cfg.Region))
	}
	if hasAnyName(c.leaf, want) {
		return nil
	}
	return fmt.Errorf("%w: %s names %s, not %s, which verify_server_hostname requires of a %s",
		ErrPeerRole, c.cfg.CertFile, strings.Join(certNames(c.leaf), ", "), strings.Join(want, " or "), role)
}

// HTTPServer is the HTTPS listener's configuration; nil when tls.http is
// off. With verify_https_client every client must present a certificate
// signed by the CA; without, a certificate given is still verified (so
// that server-only routes can check the caller's role) but none is
// required.
func (c *Configurator) HTTPServer() *tls.Config {
	if !c.HTTPEnabled() {
		return nil
	}
	auth := tls.VerifyClientCertIfGiven
	if c.cfg.VerifyHTTPSClient {
		auth = tls.RequireAndVerifyClientCert
	}
	return &tls.Config{
		MinVersion:   MinVersion,
		Certificates: []tls.Certificate{*c.cert},
		ClientCAs:    c.pool,
		ClientAuth:   auth,
	}
}

// ServerHTTPClient is the configuration of the agent's HTTP calls to
// servers: a client's node registration, heartbeats and allocation
// updates, joins, a follower's forwarding to the leader, member and
// autopilot probes. The agent presents its certificate; the server's must
// be signed by the CA and, with verify_server_hostname, name
// server.<region>.nomad. nil when tls.http is off.
func (c *Configurator) ServerHTTPClient() *tls.Config {
	if !c.HTTPEnabled() {
		return nil
	}
	return c.outgoing(c.serverNames())
}

// NodeHTTPClient is the configuration of a server's HTTP calls to client
// nodes (an agent proxying a request to the node that holds an
// allocation): the node's certificate must be signed by the CA and, with
// verify_server_hostname, name client.<region>.nomad or
// server.<region>.nomad (an agent that runs both presents the server's).
// nil when tls.http is off.
func (c *Configurator) NodeHTTPClient() *tls.Config {
	if !c.HTTPEnabled() {
		return nil
	}
	var names []string
	if c.cfg.VerifyServerHostname {
		names = []string{RoleName(RoleClient, c.cfg.Region), RoleName(RoleServer, c.cfg.Region)}
	}
	return c.outgoing(names)
}

// RaftServer is the Raft listener's configuration: every peer must
// present a certificate signed by the CA, naming server.<region>.nomad
// with verify_server_hostname. nil when tls.rpc is off.
func (c *Configurator) RaftServer() *tls.Config {
	if !c.RPCEnabled() {
		return nil
	}
	names := c.serverNames()
	return &tls.Config{
		MinVersion:   MinVersion,
		Certificates: []tls.Certificate{*c.cert},
		ClientCAs:    c.pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		VerifyConnection: func(cs tls.ConnectionState) error {
			return checkNames(cs.PeerCertificates, names)
		},
	}
}

// RaftClient is the configuration of the Raft dialer: the agent presents
// its certificate, and the peer's must be signed by the CA and, with
// verify_server_hostname, name server.<region>.nomad. nil when tls.rpc is
// off.
func (c *Configurator) RaftClient() *tls.Config {
	if !c.RPCEnabled() {
		return nil
	}
	return c.outgoing(c.serverNames())
}

// ServerRoleRequired reports whether server-only HTTP routes must be
// called with a certificate naming server.<region>.nomad: tls.http and
// verify_server_hostname are both on.
func (c *Configurator) ServerRoleRequired() bool {
	return c.HTTPEnabled() && c.cfg.VerifyServerHostname
}

// CheckPeerRole reports whether the peer of a TLS connection the agent
// accepted presented a verified certificate naming one of roles in the
// agent's region. cs is the request's r.TLS.
func (c *Configurator) CheckPeerRole(cs *tls.ConnectionState, roles ...string) error {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.PeerCertificates) == 0 {
		return ErrNoPeerCert
	}
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = RoleName(r, c.cfg.Region)
	}
	return checkNames(cs.PeerCertificates, names)
}

func (c *Configurator) serverNames() []string {
	if !c.cfg.VerifyServerHostname {
		return nil
	}
	return []string{RoleName(RoleServer, c.cfg.Region)}
}

// outgoing is a dialer's configuration that verifies the peer's chain
// against the cluster's CA and, when names is not empty, that the peer's
// certificate names one of them. Go's own verification checks one name,
// the one dialled (an IP address here) or ServerName; drover's peers are
// known by role, not by address, so the check is done in
// VerifyConnection, which runs on every handshake, resumed ones included.
func (c *Configurator) outgoing(names []string) *tls.Config {
	pool := c.pool
	return &tls.Config{
		MinVersion:   MinVersion,
		Certificates: []tls.Certificate{*c.cert},
		RootCAs:      pool,
		// Go's verification by dialled name is replaced by the one below,
		// never skipped.
		InsecureSkipVerify: true, //nolint:gosec // verified in VerifyConnection
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return fmt.Errorf("tls: the peer presented no certificate")
			}
			opts := x509.VerifyOptions{Roots: pool, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
			for _, ic := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(ic)
			}
			if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
				return fmt.Errorf("tls: the peer's certificate is not signed by the cluster's CA: %w", err)
			}
			return checkNames(cs.PeerCertificates, names)
		},
	}
}

// checkNames reports whether the leaf of certs names one of names (any
// name when names is empty). The chain has been verified already.
func checkNames(certs []*x509.Certificate, names []string) error {
	if len(names) == 0 {
		return nil
	}
	if len(certs) == 0 {
		return ErrNoPeerCert
	}
	if hasAnyName(certs[0], names) {
		return nil
	}
	return fmt.Errorf("%w: the peer's certificate names %s, not %s", ErrPeerRole,
		strings.Join(certNames(certs[0]), ", "), strings.Join(names, " or "))
}

func hasAnyName(cert *x509.Certificate, names []string) bool {
	for _, n := range names {
		if cert.VerifyHostname(n) == nil {
			return true
		}
	}
	return false
}

func certNames(cert *x509.Certificate) []string {
	out := slices.Clone(cert.DNSNames)
	if len(out) == 0 && cert.Subject.CommonName != "" {
		out = []string{cert.Subject.CommonName}
	}
	return out
}

// LoadCA reads a PEM file of one or more CA certificates.
func LoadCA(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrFile, path, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: %s holds no PEM certificate", ErrFile, path)
	}
	return pool, nil
}

// LoadKeyPair reads a PEM certificate and its key, and returns the pair
// and the parsed leaf certificate.
func LoadKeyPair(certFile, keyFile string) (*tls.Certificate, *x509.Certificate, error) {
	for _, p := range []string{certFile, keyFile} {
		if _, err := os.Stat(p); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrFile, err)
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s and %s: %w", ErrFile, certFile, keyFile, err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrFile, certFile, err)
	}
	cert.Leaf = leaf
	return &cert, leaf, nil
}
