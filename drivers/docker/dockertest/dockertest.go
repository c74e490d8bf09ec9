// Package dockertest gives tests a real Docker daemon and a tiny image
// built on the spot, since no registry is reachable where drover's tests
// run: a root file system with Debian's static busybox (/bin/busybox,
// package busybox-static) and links for its applets, imported through
// the Engine API under a tag derived from its content.
//
// Tests that need the daemon call Client: it skips the test with the
// reason when no daemon answers, except when DROVER_REQUIRE_DOCKER=1
// (CI sets it), where it fails the test instead.
package dockertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/droverhq/drover/drivers/docker/internal/rootfs"
)

// RequireEnv names the variable that turns a missing daemon into a
// failure.
const RequireEnv = "DROVER_REQUIRE_DOCKER"

// BusyboxPath is where Debian's busybox-static installs the binary.
const BusyboxPath = rootfs.BusyboxPath

// layout changes whenever the image's file system does.
const layout = "2"

// applets are linked into /bin.
var applets = []string{
	"sh", "ash", "cat", "dd", "echo", "env", "false", "head", "httpd", "id", "kill", "ls",
	"mkdir", "nc", "ps", "pwd", "rm", "sleep", "tail", "test", "touch", "true", "wc", "wget", "yes",
}

// Client returns a client of the daemon DOCKER_HOST (or the default
// socket) names, after a ping; see the package comment for what happens
// when none answers.
func Client(t testing.TB) *client.Client {
	t.Helper()
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = c.Ping(ctx)
		cancel()
		if err != nil {
			c.Close()
		}
	}
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("no Docker daemon answers (%s=1 requires one): %v", RequireEnv, err)
		}
		t.Skipf("no Docker daemon answers; set %s=1 to make this a failure: %v", RequireEnv, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var (
	imageMu  sync.Mutex
	imageTag string
)

// BusyboxImage returns the tag of the test image, importing it unless
// the daemon already has it. It needs /bin/busybox (busybox-static);
// without it the test is skipped, or fails under DROVER_REQUIRE_DOCKER=1.
func BusyboxImage(t testing.TB, c *client.Client) string {
	t.Helper()
	imageMu.Lock()
	defer imageMu.Unlock()
	if imageTag != "" {
		return imageTag
	}
	bin, err := os.ReadFile(BusyboxPath)
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("the test image needs %s (Debian's busybox-static): %v", BusyboxPath, err)
		}
		t.Skipf("the test image needs %s (Debian's busybox-static): %v", BusyboxPath, err)
	}
	sum := sha256.Sum256(append([]byte(layout+"\n"), bin...))
	tag := "drover-test/busybox:" + hex.EncodeToString(sum[:6])
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.ImageInspect(ctx, tag); err == nil {
		imageTag = tag
		return tag
	} else if !cerrdefs.IsNotFound(err) {
		t.Fatalf("inspecting %s: %v", tag, err)
	}
	rootfs, err := Rootfs(bin)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.ImageImport(ctx, image.ImportSource{Source: bytes.NewReader(rootfs), SourceName: "-"}, tag,
		image.ImportOptions{Changes: []string{"ENV PATH=/bin", `CMD ["/bin/sh"]`}})
	if err != nil {
		t.Fatalf("importing %s: %v", tag, err)
	}
	_, err = io.Copy(io.Discard, rc)
	rc.Close()
	if err != nil {
		t.Fatalf("importing %s: %v", tag, err)
	}
	imageTag = tag
	return tag
}

// Rootfs returns the image's file system as a tar archive: busybox in
// /bin with a link per applet, /tmp, /www/index.html ("ok") for httpd,
// and /etc/passwd and /etc/group with root and nobody.
func Rootfs(busybox []byte) ([]byte, error) {
	entries := []rootfs.Entry{rootfs.Dir("bin/", 0o755), rootfs.Dir("etc/", 0o755), rootfs.Dir("tmp/", 0o1777), rootfs.Dir("www/", 0o755)}
	entries = append(entries, rootfs.Busybox(busybox, applets)[1:]...)
	entries = append(entries,
		rootfs.File("www/index.html", 0o644, []byte("ok\n")),
		rootfs.File("etc/passwd", 0o644, []byte("root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n")),
		rootfs.File("etc/group", 0o644, []byte("root:x:0:\nnogroup:x:65534:\n")))
	return rootfs.Tar(entries)
}
