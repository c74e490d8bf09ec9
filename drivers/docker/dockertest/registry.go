package dockertest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/client"
	"golang.org/x/crypto/bcrypt"
)

// RegistryBin is Debian's docker-registry (the distribution registry).
const RegistryBin = "/usr/bin/docker-registry"

// Registry runs a registry on 127.0.0.1 for the test's length and
// returns its host:port. With a username, it asks for basic auth
// (htpasswd, bcrypt) and takes only that user and password; without, it
// is open. Without the registry binary the test is skipped, or fails
// under DROVER_REQUIRE_DOCKER=1. The Docker daemon allows plain HTTP to
// registries on 127.0.0.0/8, so no daemon configuration is needed.
func Registry(t testing.TB, username, password string) string {
	t.Helper()
	if _, err := os.Stat(RegistryBin); err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("the registry tests need %s (Debian's docker-registry): %v", RegistryBin, err)
		}
		t.Skipf("the registry tests need %s (Debian's docker-registry): %v", RegistryBin, err)
	}
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	auth := ""
	if username != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		htpasswd := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(username+":"+string(hash)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		auth = fmt.Sprintf("auth:\n  htpasswd:\n    realm: drover-test\n    path: %s\n", htpasswd)
	}
	conf := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n%s",
		filepath.Join(dir, "data"), addr, auth)
	confPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(RegistryBin, "serve", confPath)
	logs, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the registry: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logs.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logs.Name())
			t.Logf("---- registry %s ----\n%s", addr, b)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry on %s does not answer: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Push tags src as ref (host:port/name:tag), pushes it with the given
// credentials (none when username is ""), and removes the tag again, so
// that running ref needs a pull.
func Push(t testing.TB, c *client.Client, src, ref, username, password string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.ImageTag(ctx, src, ref); err != nil {
		t.Fatalf("tagging %s: %v", ref, err)
	}
	enc, err := registry.EncodeAuthConfig(registry.AuthConfig{Username: username, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.ImagePush(ctx, ref, image.PushOptions{RegistryAuth: enc})
	if err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	out, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || strings.Contains(string(out), `"error"`) {
		t.Fatalf("pushing %s: %v %s", ref, err, out)
	}
	RemoveTag(t, c, ref)
	t.Cleanup(func() { RemoveTag(t, c, ref) })
}

// RemoveTag removes one tag, leaving the image it names to its other tags.
func RemoveTag(t testing.TB, c *client.Client, ref string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = c.ImageRemove(ctx, ref, image.RemoveOptions{})
}
