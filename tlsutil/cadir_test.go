package tlsutil

import (
	"errors"
	"os"
	"path/filepath"
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
