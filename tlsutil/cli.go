package tlsutil

import (
	"crypto/tls"
	"fmt"
)

// ClientFiles are the CLI's TLS settings, as Nomad's -ca-cert,
// -client-cert, -client-key, -tls-server-name and -tls-skip-verify.
type ClientFiles struct {
	CACert     string // PEM file of the CA that signed the agents' certificates
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
	return f.CACert != "" || f.ClientCert != "" || f.ClientKey != "" || f.ServerName != "" || f.Insecure
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
