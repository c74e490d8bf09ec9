package client

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/droverhq/drover/client/allocrunner"
)

func TestNodeIDIsKept(t *testing.T) {
	data := t.TempDir()
	id, err := loadNodeID(data)
	if err != nil || !validUUID(id) {
		t.Fatalf("minted %q: %v", id, err)
	}
	again, err := loadNodeID(data)
	if err != nil || again != id {
		t.Fatalf("second load %q (%v), want %q", again, err, id)
	}
	if err := os.WriteFile(NodeIDPath(data), []byte("not-an-id\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadNodeID(data); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("corrupt node-id: %v", err)
	}
}

// The node's secret is minted once, kept readable by its owner only, and
// a corrupt file is refused without being quoted.
func TestNodeSecretIsKept(t *testing.T) {
	data := t.TempDir()
	secret, err := loadNodeSecret(data)
	if err != nil || !validUUID(secret) {
		t.Fatalf("minted: %v", err)
	}
	if again, err := loadNodeSecret(data); err != nil || again != secret {
		t.Fatalf("second load: %v", err)
	}
	if id, _ := loadNodeID(data); id == secret {
		t.Fatal("the secret is the node ID")
	}
	fi, err := os.Stat(NodeSecretPath(data))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("node-secret mode: %v %v", fi.Mode(), err)
	}
	if err := os.WriteFile(NodeSecretPath(data), []byte("almost-a-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadNodeSecret(data); !errors.Is(err, ErrInvalidConfig) || strings.Contains(err.Error(), "almost-a-secret") {
		t.Fatalf("corrupt node-secret: %v", err)
	}
}

func TestConfigNeedsDataDirAndServers(t *testing.T) {
	if _, err := New(Config{Servers: []string{"127.0.0.1:4646"}}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("no data dir: %v", err)
	}
	if _, err := New(Config{DataDir: t.TempDir()}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("no servers: %v", err)
	}
	if _, err := New(Config{DataDir: t.TempDir(), Servers: []string{"http://[::1"}}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("bad server address: %v", err)
	}
}

func TestLoadAllocsSkipsWhatItCannotRead(t *testing.T) {
	data := t.TempDir()
	good := serviceAlloc("good", "n", "", 0)
	if err := saveAlloc(allocrunner.NewAllocDir(data, "good"), good, nil); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(data, "alloc", "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, allocFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An alloc file in another alloc's directory is not trusted either.
	if err := saveAlloc(allocrunner.AllocDir{Root: filepath.Join(data, "alloc", "elsewhere")}, good, nil); err != nil {
		t.Fatal(err)
	}
	saved, err := loadAllocs(data)
	if err == nil {
		t.Fatal("unreadable files not reported")
	}
	if len(saved) != 1 || saved[0].alloc.ID != "good" || saved[0].alloc.Job == nil || saved[0].finished() {
		t.Fatalf("loaded %+v", saved)
	}
}
