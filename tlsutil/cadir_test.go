package tlsutil

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadCADir: -ca-path reads every PEM file of the directory, and a
// directory without a certificate is an error.
func TestLoadCADir(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadCADir(dir); !errors.Is(err, ErrFile) {
		t.Fatalf("empty directory: %v", err)
	}
	certPEM, _, err := GenerateCA(CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	pool, err := LoadCADir(dir)
	if err != nil || pool == nil {
		t.Fatalf("LoadCADir: %v", err)
	}
	c, err := CLIConfig(ClientFiles{CAPath: dir})
	if err != nil || c.RootCAs == nil {
		t.Fatalf("CLIConfig with CAPath: %v", err)
	}
}

// TestGenerateCASubjectAndNameConstraint: Nomad's tls ca create flags set
// the subject, and -name-constraint limits the CA to its domains.
func TestGenerateCASubjectAndNameConstraint(t *testing.T) {
	certPEM, _, err := GenerateCA(CAOptions{Country: "FR", Organization: "Acme", Locality: "Lyon",
		NameConstraint: true, Domain: "acme", AdditionalDomains: []string{"ui.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(certPEM)
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject.Country[0] != "FR" || c.Subject.Organization[0] != "Acme" || c.Subject.Locality[0] != "Lyon" {
		t.Errorf("subject %v", c.Subject)
	}
	if !c.PermittedDNSDomainsCritical || strings.Join(c.PermittedDNSDomains, ",") != "acme,localhost,ui.example.com" {
		t.Errorf("name constraint %v %v", c.PermittedDNSDomainsCritical, c.PermittedDNSDomains)
	}
}
