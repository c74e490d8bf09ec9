package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
)

// ClientFiles are the CLI's TLS settings, as Nomad's -ca-cert,
// -client-cert, -client-key, -tls-server-name and -tls-skip-verify.
type ClientFiles struct {
	CACert string // PEM file of the CA that signed the agents' certificates
	// CAPath is a directory of PEM files of CAs, read when CACert is empty
	// (Nomad's -ca-path).
	CAPath     string
	ClientCert string // the CLI's certificate, presented to the agent
	ClientKey  string
	// ServerName is the name the agent's certificate must carry; the host
	// of the address when empty.
	ServerName string
	// Insecure skips the verification of the agent's certificate.
	Insecure bool
}

// Any reports whether any setting is given.
func (f ClientFiles) Any() bool {
	return f.CACert != "" || f.CAPath != "" || f.ClientCert != "" || f.ClientKey != "" || f.ServerName != "" || f.Insecure
}

// CLIConfig is the configuration of the CLI's HTTPS client. The agent's
// certificate is verified against CACert (the system's roots when empty)
// with Go's own rules: it must name the host dialled, or ServerName.
func CLIConfig(f ClientFiles) (*tls.Config, error) {
	c := &tls.Config{MinVersion: MinVersion, ServerName: f.ServerName, InsecureSkipVerify: f.Insecure} //nolint:gosec // only on -tls-skip-verify
	if f.CACert != "" {
		pool, err := LoadCA(f.CACert)
		if err != nil {
			return nil, fmt.Errorf("-ca-cert: %w", err)
		}
		c.RootCAs = pool
	} else if f.CAPath != "" {
		pool, err := LoadCADir(f.CAPath)
		if err != nil {
			return nil, fmt.Errorf("-ca-path: %w", err)
		}
		c.RootCAs = pool
	}
	switch {
	case f.ClientCert != "" && f.ClientKey != "":
		cert, _, err := LoadKeyPair(f.ClientCert, f.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("-client-cert/-client-key: %w", err)
		}
		c.Certificates = []tls.Certificate{*cert}
	case f.ClientCert != "" || f.ClientKey != "":
		return nil, fmt.Errorf("%w: -client-cert and -client-key go together", ErrFile)
	}
	return c, nil
}

// LoadCADir reads every PEM file of dir (its regular files, not its
// subdirectories) into one pool; a directory without any certificate is
// an error.
func LoadCADir(dir string) (*x509.CertPool, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	pool := x509.NewCertPool()
	n := 0
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrFile, err)
		}
		if pool.AppendCertsFromPEM(data) {
			n++
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: no PEM certificate in %s", ErrFile, dir)
	}
	return pool, nil
}
