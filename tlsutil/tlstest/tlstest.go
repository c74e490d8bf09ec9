// Package tlstest writes a CA and certificates to a test's temporary
// directory, for tests that need real certificate files.
package tlstest

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/droverhq/drover/tlsutil"
)

// CA is a certificate authority written to a directory.
type CA struct {
	Dir      string
	CertPEM  []byte
	KeyPEM   []byte
	CertFile string // Nomad's nomad-agent-ca.pem
	KeyFile  string

	t  testing.TB
	mu sync.Mutex
	n  int
}

// NewCA generates a CA in a temporary directory of t.
func NewCA(t testing.TB) *CA {
	t.Helper()
	dir := t.TempDir()
	cert, key, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{Dir: dir, CertPEM: cert, KeyPEM: key, t: t,
		CertFile: filepath.Join(dir, tlsutil.CAFileName), KeyFile: filepath.Join(dir, tlsutil.CAKeyFileName)}
	write(t, ca.CertFile, cert)
	write(t, ca.KeyFile, key)
	return ca
}

// Cert generates a certificate of role for region ("global" when empty)
// under Nomad's file names in a directory of its own, and returns the
// paths of the certificate and its key.
func (ca *CA) Cert(role, region string) (certFile, keyFile string) {
	ca.t.Helper()
	cert, key, err := tlsutil.GenerateCert(tlsutil.CertOptions{Role: role, Region: region, CACert: ca.CertPEM, CAKey: ca.KeyPEM})
	if err != nil {
		ca.t.Fatal(err)
	}
	if region == "" {
		region = "global"
	}
	ca.mu.Lock()
	ca.n++
	sub := filepath.Join(ca.Dir, strconv.Itoa(ca.n))
	ca.mu.Unlock()
	if err := os.MkdirAll(sub, 0o700); err != nil {
		ca.t.Fatal(err)
	}
	c, k := tlsutil.CertFileNames(role, region)
	certFile, keyFile = filepath.Join(sub, c), filepath.Join(sub, k)
	write(ca.t, certFile, cert)
	write(ca.t, keyFile, key)
	return certFile, keyFile
}

// Config returns an agent's tls settings with http and rpc on, both
// verifications on, in region "global", with a certificate of role.
func (ca *CA) Config(role string) tlsutil.Config {
	ca.t.Helper()
	cert, key := ca.Cert(role, "")
	return tlsutil.Config{
		HTTP: true, RPC: true, CAFile: ca.CertFile, CertFile: cert, KeyFile: key,
		VerifyServerHostname: true, VerifyHTTPSClient: true, Region: "global",
	}
}

// Configurator is tlsutil.New of Config(role), failing the test on error.
func (ca *CA) Configurator(role string) *tlsutil.Configurator {
	ca.t.Helper()
	c, err := tlsutil.New(ca.Config(role))
	if err != nil {
		ca.t.Fatal(err)
	}
	return c
}

// CLI returns the CLI's settings with a cli certificate of this CA.
func (ca *CA) CLI() tlsutil.ClientFiles {
	ca.t.Helper()
	cert, key := ca.Cert(tlsutil.RoleCLI, "")
	return tlsutil.ClientFiles{CACert: ca.CertFile, ClientCert: cert, ClientKey: key}
}

func write(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
