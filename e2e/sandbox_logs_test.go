package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers/docker/dockertest"
	"github.com/droverhq/drover/structs"
)

// sandboxLogsJob is a docker service of namespace dev whose task, as root
// in its container, puts in place of its own log files a symlink to the
// host's marker (relative, climbing out of the allocation, as
// stdout.0; absolute as stdout.1) and a FIFO (as stderr.0), then marks
// alloc/planted and sleeps.
func sandboxLogsJob(image, marker string) string {
	climb := strings.Repeat("../", 32) + strings.TrimPrefix(marker, "/")
	script := fmt.Sprintf(`cd /alloc/logs && rm -f main.stdout.0 main.stderr.0 && ln -s %s main.stdout.0 && ln -s %s main.stdout.1 && mkfifo main.stderr.0 && touch /alloc/planted && exec sleep 300`, climb, marker)
	return fmt.Sprintf(`job "logs" {
  namespace = "dev"
  group "g" {
    task "main" {
      driver = "docker"
      config {
        image   = %q
        command = "/bin/sh"
        args    = ["-c", %q]
      }
    }
  }
}`, image, script)
}

// The logs endpoint with a task's symlinks and FIFO in place of its log
// files: each request (framed, plain, from the end, followed) is answered
// 400 at once, saying the file is not a regular file, and never holds the
// host's marker; the agent keeps answering.
func TestSandboxLogsSymlinkAndFIFORefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a container")
	}
	cli := dockertest.Client(t)
	image := dockertest.BusyboxImage(t, cli)
	a := sandboxArtStart(t)
	dir, marker := sandboxArtMarker(t)
	mc := a.proc.client()
	mc.SetToken(a.mgmt["X-Nomad-Token"])
	node := devNodeID(t, mc)
	t.Cleanup(func() { removeNodeContainers(cli, node) })

	if code, out := a.sandboxArtRegister(t, sandboxLogsJob(image, marker)); code != 200 {
		t.Fatalf("register: %d %s", code, out)
	}
	var allocID string
	eventually(t, 90*time.Second, "the task has planted its links", func() error {
		_, out := rawRequest(t, "GET", a.base+"/v1/job/logs/allocations?namespace=dev", "", a.dev)
		var stubs []*structs.AllocationListStub
		if err := json.Unmarshal([]byte(out), &stubs); err != nil || len(stubs) == 0 {
			return fmt.Errorf("allocations: %s", out)
		}
		allocID = stubs[0].ID
		_, err := os.Stat(filepath.Join(a.dataDir, "alloc", allocID, "alloc", "planted"))
		return err
	})
	for _, c := range []struct{ typ, query, want string }{
		{"stdout", "", "alloc/logs/main.stdout.0, alloc/logs/main.stdout.1 is not a regular file"},
		{"stdout", "&plain=true", "is not a regular file"},
		{"stdout", "&origin=end&offset=10&plain=true", "is not a regular file"},
		{"stdout", "&follow=true", "is not a regular file"},
		{"stderr", "&plain=true", "alloc/logs/main.stderr.0 is not a regular file"},
		{"stderr", "&follow=true", "is not a regular file"},
	} {
		began := time.Now()
		code, out := rawRequest(t, "GET", a.base+"/v1/client/fs/logs/"+allocID+"?task=main&type="+c.typ+c.query, "", a.dev)
		if code != 400 || !strings.Contains(out, c.want) || strings.Contains(out, "HOST-MARKER") {
			t.Errorf("%s%s: %d %q, want 400 saying %q", c.typ, c.query, code, out, c.want)
		}
		if took := time.Since(began); took > 5*time.Second {
			t.Errorf("%s%s: answered after %s", c.typ, c.query, took)
		}
	}
	a.sandboxArtUntouched(t, dir, marker)
}
