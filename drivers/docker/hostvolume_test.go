package docker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/droverhq/drover/drivers"
)

// A host volume (a task's volume_mount, resolved by the client) is bound
// into the container without docker.volumes.enabled: written through when
// writable, refused when read-only.
func TestHostVolumeMounts(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "in"), []byte("from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := e.task("hv", `cat /data/in > /data/out && echo rw >> /data/out`)
	cfg.Mounts = []drivers.MountConfig{{TaskPath: "/data", HostPath: host}}
	h := start(t, d, cfg)
	if r := waitExit(t, d, h); !r.Successful() {
		t.Fatalf("exit %+v: %s", r, readFile(t, cfg.StderrPath+".0"))
	}
	if got := readFile(t, filepath.Join(host, "out")); got != "from the host\nrw\n" {
		t.Fatalf("out %q", got)
	}

	ro := e.task("hvro", `cat /data/in; echo no > /data/ro-out`)
	ro.Mounts = []drivers.MountConfig{{TaskPath: "/data", HostPath: host, Readonly: true}}
	h = start(t, d, ro)
	if r := waitExit(t, d, h); r.Successful() {
		t.Fatalf("a write to a read-only host volume succeeded")
	}
	if _, err := os.Stat(filepath.Join(host, "ro-out")); err == nil {
		t.Fatal("ro-out written through a read-only mount")
	}
	if got := readFile(t, ro.StderrPath+".0"); !strings.Contains(got, "Read-only file system") {
		t.Fatalf("stderr %q, want the read-only error", got)
	}
	if got := readFile(t, ro.StdoutPath+".0"); got != "from the host\n" {
		t.Fatalf("stdout %q", got)
	}
}
