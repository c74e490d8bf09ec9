package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover/tlsutil"
)

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatalf("%s holds no PEM", path)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// drover tls ca create and cert create write Nomad's files; each
// certificate names its role and verifies against the CA; nothing is
// overwritten.
func TestTLSCommandsWriteNomadsFiles(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errOut := runCLI(t, "", "tls", "ca", "create")
	if code != 0 {
		t.Fatalf("ca create: %d %s", code, errOut)
	}
	if !strings.Contains(out, "CA certificate saved to: nomad-agent-ca.pem") {
		t.Errorf("ca create said %q", out)
	}
	ca := readCert(t, "nomad-agent-ca.pem")
	if st, err := os.Stat("nomad-agent-ca-key.pem"); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("CA key: %v, mode %v", err, st.Mode())
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)

	for _, tc := range []struct {
		args  []string
		file  string
		names []string
	}{
		{[]string{"-server"}, "global-server-nomad.pem", []string{"server.global.nomad", "localhost"}},
		{[]string{"-client"}, "global-client-nomad.pem", []string{"client.global.nomad", "localhost"}},
		{[]string{"-cli"}, "global-cli-nomad.pem", []string{"cli.global.nomad", "localhost"}},
		{[]string{"-server", "-region", "eu", "-additional-dnsname", "nomad.example.com", "-additional-ipaddress", "10.0.0.5"},
			"eu-server-nomad.pem", []string{"server.eu.nomad", "localhost", "nomad.example.com"}},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"tls", "cert", "create"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("cert create %v: %d %s", tc.args, code, errOut)
		}
		if !strings.Contains(out, "saved to "+tc.file) {
			t.Errorf("cert create %v said %q", tc.args, out)
		}
		c := readCert(t, tc.file)
		if !slices.Equal(c.DNSNames, tc.names) {
			t.Errorf("%s names %v, want %v", tc.file, c.DNSNames, tc.names)
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, DNSName: tc.names[0], KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s does not verify against the CA: %v", tc.file, err)
		}
		key := strings.TrimSuffix(tc.file, ".pem") + "-key.pem"
		if _, _, err := tlsutil.LoadKeyPair(tc.file, key); err != nil {
			t.Errorf("%s and %s: %v", tc.file, key, err)
		}
	}
	if c := readCert(t, "eu-server-nomad.pem"); len(c.IPAddresses) != 2 || c.IPAddresses[1].String() != "10.0.0.5" {
		t.Errorf("IPs %v", c.IPAddresses)
	}

	// Nothing is overwritten.
	before, _ := os.ReadFile("nomad-agent-ca-key.pem")
	if code, _, errOut := runCLI(t, "", "tls", "ca", "create"); code == 0 || !strings.Contains(errOut, "already exists") {
		t.Errorf("second ca create: %d %q", code, errOut)
	}
	if after, _ := os.ReadFile("nomad-agent-ca-key.pem"); string(after) != string(before) {
		t.Error("the CA key was overwritten")
	}
	if code, _, errOut := runCLI(t, "", "tls", "cert", "create", "-server"); code == 0 || !strings.Contains(errOut, "already exists") {
		t.Errorf("second cert create: %d %q", code, errOut)
	}
}

func TestTLSCertCreateRefuses(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "exactly one of -server, -client or -cli"},
		{[]string{"-server", "-client"}, "exactly one of -server, -client or -cli"},
		{[]string{"-server"}, "drover tls ca create"},
		{[]string{"-server", "-additional-ipaddress", "nope"}, `-additional-ipaddress "nope" is not an IP address`},
		{[]string{"-cli", "-days", "0"}, "-days must be at least 1"},
	} {
		code, _, errOut := runCLI(t, "", append([]string{"tls", "cert", "create"}, tc.args...)...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("cert create %v: %d %q, want it to say %q", tc.args, code, errOut, tc.want)
		}
	}
	if code, _, _ := runCLI(t, "", "tls", "ca", "create"); code != 0 {
		t.Fatal("ca create failed")
	}
	if code, _, errOut := runCLI(t, "", "tls", "cert", "create", "-client", "-days", "4000"); code == 0 || !strings.Contains(errOut, "outlive") {
		t.Errorf("a certificate outliving its CA: %d %q", code, errOut)
	}
}
