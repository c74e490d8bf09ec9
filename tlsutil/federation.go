package tlsutil

import (
	"crypto/tls"
	"fmt"
	"strings"
)

// Federated regions share a CA; each region's servers carry
// server.<region>.nomad. A server calls the servers of another region
// with ServerHTTPClientFor that region, or, joining an address whose
// region it does not know yet, with ServerHTTPClientAnyRegion; it takes a
// call from a server of another region when the caller's certificate names
// server.<that region>.nomad (PeerServerRegion), and only for what crosses
// regions (agent/tls.go).

// ServerHTTPClientFor is ServerHTTPClient for the servers of region: with
// verify_server_hostname their certificates must name
// server.<region>.nomad. nil when tls.http is off.
func (c *Configurator) ServerHTTPClientFor(region string) *tls.Config {
	if !c.HTTPEnabled() {
		return nil
	}
	var names []string
	if c.cfg.VerifyServerHostname {
		names = []string{RoleName(RoleServer, region)}
	}
	return c.outgoing(names)
}

// ServerHTTPClientAnyRegion is ServerHTTPClient for a server of any
// region: with verify_server_hostname its certificate must name
// server.<some region>.nomad. nil when tls.http is off.
func (c *Configurator) ServerHTTPClientAnyRegion() *tls.Config {
	if !c.HTTPEnabled() {
		return nil
	}
	tc := c.outgoing(nil)
	if !c.cfg.VerifyServerHostname {
		return tc
	}
	verifyCA := tc.VerifyConnection
	tc.VerifyConnection = func(cs tls.ConnectionState) error {
		if err := verifyCA(cs); err != nil {
			return err
		}
		if _, ok := serverRegionOf(cs); !ok {
			return fmt.Errorf("%w: the peer's certificate names %s, no server.<region>.%s", ErrPeerRole,
				strings.Join(certNames(cs.PeerCertificates[0]), ", "), Domain)
		}
		return nil
	}
	return tc
}

// PeerServerRegion returns the region of the server certificate the peer
// of a connection the agent accepted presented and the listener verified
// (server.<region>.nomad).
func (c *Configurator) PeerServerRegion(cs *tls.ConnectionState) (string, error) {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.PeerCertificates) == 0 {
		return "", ErrNoPeerCert
	}
	if r, ok := serverRegionOf(*cs); ok {
		return r, nil
	}
	return "", fmt.Errorf("%w: the peer's certificate names %s, no server.<region>.%s", ErrPeerRole,
		strings.Join(certNames(cs.PeerCertificates[0]), ", "), Domain)
}

// serverRegionOf returns the region of the first server.<region>.nomad
// name of the leaf of cs.
func serverRegionOf(cs tls.ConnectionState) (string, bool) {
	if len(cs.PeerCertificates) == 0 {
		return "", false
	}
	for _, n := range certNames(cs.PeerCertificates[0]) {
		rest, ok := strings.CutPrefix(n, RoleServer+".")
		if !ok {
			continue
		}
		region, ok := strings.CutSuffix(rest, "."+Domain)
		if ok && region != "" && !strings.Contains(region, ".") {
			return region, true
		}
	}
	return "", false
}
