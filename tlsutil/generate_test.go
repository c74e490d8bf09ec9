package tlsutil_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/tlsutil"
)

func parse(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(certPEM)
	if b == nil || b.Type != "CERTIFICATE" {
		t.Fatalf("not a PEM certificate: %q", certPEM)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pool(t *testing.T, caPEM []byte) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(parse(t, caPEM))
	return p
}

func newCA(t *testing.T) (cert, key []byte) {
	t.Helper()
	cert, key, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func TestGenerateCA(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	certPEM, keyPEM, err := tlsutil.GenerateCA(tlsutil.CAOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	ca := parse(t, certPEM)
	if !ca.IsCA || ca.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("not a signing CA: IsCA=%v usage=%v", ca.IsCA, ca.KeyUsage)
	}
	if !strings.HasPrefix(ca.Subject.CommonName, "Nomad Agent CA ") {
		t.Errorf("common name %q, want Nomad's", ca.Subject.CommonName)
	}
	if got := ca.NotAfter.Sub(ca.NotBefore); got != tlsutil.DefaultCADays*24*time.Hour {
		t.Errorf("validity %v, want %d days", got, tlsutil.DefaultCADays)
	}
	if ca.NotBefore.After(now) {
		t.Errorf("valid from %v, after %v", ca.NotBefore, now)
	}
	pub, ok := ca.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		t.Errorf("CA key %T, want ECDSA P-256", ca.PublicKey)
	}
	if b, _ := pem.Decode(keyPEM); b == nil || b.Type != "EC PRIVATE KEY" {
		t.Errorf("key not an EC PRIVATE KEY PEM")
	}
	if _, err := ca.Verify(x509.VerifyOptions{Roots: pool(t, certPEM), CurrentTime: now}); err != nil {
		t.Errorf("the CA does not verify against itself: %v", err)
	}
}

func TestGenerateCertRoles(t *testing.T) {
	caCert, caKey := newCA(t)
	other, _ := newCA(t)
	for _, tc := range []struct {
		role, region string
		dns          []string
		ips          []string
		usage        []x509.ExtKeyUsage
	}{
		{tlsutil.RoleServer, "", []string{"server.global.nomad", "localhost"}, []string{"127.0.0.1"},
			[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		{tlsutil.RoleClient, "", []string{"client.global.nomad", "localhost"}, []string{"127.0.0.1"},
			[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		{tlsutil.RoleCLI, "", []string{"cli.global.nomad", "localhost"}, nil,
			[]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		{tlsutil.RoleServer, "eu", []string{"server.eu.nomad", "localhost"}, []string{"127.0.0.1"},
			[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
	} {
		t.Run(tc.role+"/"+tc.region, func(t *testing.T) {
			certPEM, keyPEM, err := tlsutil.GenerateCert(tlsutil.CertOptions{Role: tc.role, Region: tc.region, CACert: caCert, CAKey: caKey})
			if err != nil {
				t.Fatal(err)
			}
			c := parse(t, certPEM)
			if !slices.Equal(c.DNSNames, tc.dns) {
				t.Errorf("DNS names %v, want %v", c.DNSNames, tc.dns)
			}
			var ips []string
			for _, ip := range c.IPAddresses {
				ips = append(ips, ip.String())
			}
			if !slices.Equal(ips, tc.ips) {
				t.Errorf("IPs %v, want %v", ips, tc.ips)
			}
			if c.Subject.CommonName != tc.dns[0] {
				t.Errorf("common name %q, want %q", c.Subject.CommonName, tc.dns[0])
			}
			if !slices.Equal(c.ExtKeyUsage, tc.usage) {
				t.Errorf("ext key usage %v, want %v", c.ExtKeyUsage, tc.usage)
			}
			if c.IsCA {
				t.Error("a leaf certificate is a CA")
			}
			if got := c.NotAfter.Sub(c.NotBefore); got != tlsutil.DefaultCertDays*24*time.Hour {
				t.Errorf("validity %v, want %d days", got, tlsutil.DefaultCertDays)
			}
			// The role name verifies against the CA; not against another.
			opts := x509.VerifyOptions{Roots: pool(t, caCert), DNSName: tc.dns[0], KeyUsages: tc.usage}
			if _, err := c.Verify(opts); err != nil {
				t.Errorf("does not verify against its CA as %s: %v", tc.dns[0], err)
			}
			opts.Roots = pool(t, other)
			if _, err := c.Verify(opts); err == nil {
				t.Error("verifies against another CA")
			}
			// The server's name is not the client's, and the other way round.
			for _, role := range []string{tlsutil.RoleServer, tlsutil.RoleClient, tlsutil.RoleCLI} {
				if role == tc.role {
					continue
				}
				if err := c.VerifyHostname(tlsutil.RoleName(role, "global")); err == nil {
					t.Errorf("a %s certificate names the %s role", tc.role, role)
				}
			}
			if _, err := tlsLoad(certPEM, keyPEM); err != nil {
				t.Errorf("certificate and key do not pair: %v", err)
			}
		})
	}
}

func TestGenerateCertExtraNames(t *testing.T) {
	caCert, caKey := newCA(t)
	certPEM, _, err := tlsutil.GenerateCert(tlsutil.CertOptions{
		Role: tlsutil.RoleServer, CACert: caCert, CAKey: caKey, Days: 30,
		DNSNames: []string{"nomad.example.com", "localhost"}, IPs: []net.IP{net.ParseIP("10.0.0.5"), net.ParseIP("127.0.0.1")},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := parse(t, certPEM)
	if want := []string{"server.global.nomad", "localhost", "nomad.example.com"}; !slices.Equal(c.DNSNames, want) {
		t.Errorf("DNS names %v, want %v", c.DNSNames, want)
	}
	if len(c.IPAddresses) != 2 || !c.IPAddresses[1].Equal(net.ParseIP("10.0.0.5")) {
		t.Errorf("IPs %v, want 127.0.0.1 and 10.0.0.5", c.IPAddresses)
	}
	if got := c.NotAfter.Sub(c.NotBefore); got != 30*24*time.Hour {
		t.Errorf("validity %v, want 30 days", got)
	}
}

func TestGenerateCertRefuses(t *testing.T) {
	caCert, caKey := newCA(t)
	_, otherKey := newCA(t)
	leaf, leafKey, err := tlsutil.GenerateCert(tlsutil.CertOptions{Role: tlsutil.RoleServer, CACert: caCert, CAKey: caKey})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    tlsutil.CertOptions
		want string
	}{
		{"bad role", tlsutil.CertOptions{Role: "admin", CACert: caCert, CAKey: caKey}, "role must be"},
		{"key of another CA", tlsutil.CertOptions{Role: "server", CACert: caCert, CAKey: otherKey}, "does not match"},
		{"leaf as CA", tlsutil.CertOptions{Role: "server", CACert: leaf, CAKey: leafKey}, "not a CA"},
		{"no CA", tlsutil.CertOptions{Role: "server", CAKey: caKey}, "no PEM certificate"},
		{"garbage key", tlsutil.CertOptions{Role: "server", CACert: caCert, CAKey: []byte("nope")}, "no PEM key"},
		{"outlives CA", tlsutil.CertOptions{Role: "server", CACert: caCert, CAKey: caKey, Days: 5000}, "outlive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tlsutil.GenerateCert(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
			if tc.name == "bad role" && !errors.Is(err, tlsutil.ErrRole) {
				t.Errorf("err = %v, want ErrRole", err)
			}
		})
	}
}

func TestCertFileNames(t *testing.T) {
	c, k := tlsutil.CertFileNames("server", "global")
	if c != "global-server-nomad.pem" || k != "global-server-nomad-key.pem" {
		t.Errorf("got %s %s", c, k)
	}
	if tlsutil.CAFileName != "nomad-agent-ca.pem" || tlsutil.CAKeyFileName != "nomad-agent-ca-key.pem" {
		t.Errorf("CA files %s %s", tlsutil.CAFileName, tlsutil.CAKeyFileName)
	}
}
