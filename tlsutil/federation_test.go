package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"testing"
)

func TestServerRegionOfACertificate(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
		ok    bool
	}{
		{[]string{"localhost", "server.west.nomad"}, "west", true},
		{[]string{"client.west.nomad"}, "", false},
		{[]string{"server..nomad", "server.a.b.nomad", "server.west.example"}, "", false},
		{nil, "", false},
	} {
		cs := tls.ConnectionState{PeerCertificates: []*x509.Certificate{{DNSNames: c.names}}}
		if got, ok := serverRegionOf(cs); got != c.want || ok != c.ok {
			t.Errorf("%v: %q %t", c.names, got, ok)
		}
	}
	c := &Configurator{}
	if _, err := c.PeerServerRegion(nil); !errors.Is(err, ErrNoPeerCert) {
		t.Errorf("no connection: %v", err)
	}
	unverified := &tls.ConnectionState{PeerCertificates: []*x509.Certificate{{DNSNames: []string{"server.west.nomad"}}}}
	if _, err := c.PeerServerRegion(unverified); !errors.Is(err, ErrNoPeerCert) {
		t.Errorf("an unverified certificate: %v", err)
	}
	verified := &tls.ConnectionState{PeerCertificates: unverified.PeerCertificates, VerifiedChains: [][]*x509.Certificate{unverified.PeerCertificates}}
	if r, err := c.PeerServerRegion(verified); err != nil || r != "west" {
		t.Errorf("a verified server certificate: %q %v", r, err)
	}
	verified.PeerCertificates = []*x509.Certificate{{DNSNames: []string{"client.west.nomad"}}}
	if _, err := c.PeerServerRegion(verified); !errors.Is(err, ErrPeerRole) {
		t.Errorf("a client certificate: %v", err)
	}
}
