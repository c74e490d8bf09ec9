package allocrunner

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBuildDoesNotChmodThroughALink: a task that replaced alloc/tmp with a
// link to a host directory before the client restarted does not get that
// directory made world-writable when the tree is built again.
func TestBuildDoesNotChmodThroughALink(t *testing.T) {
	base := t.TempDir()
	host := filepath.Join(base, "host-etc")
	if err := os.Mkdir(host, 0o755); err != nil {
		t.Fatal(err)
	}
	d := NewAllocDir(filepath.Join(base, "data"), "a1")
	if err := d.Build([]string{"web"}); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(d.SharedDir(), "tmp")
	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, tmp); err != nil {
		t.Fatal(err)
	}
	if err := d.Build([]string{"web"}); err == nil {
		t.Error("Build through a link out of the allocation succeeded")
	}
	if fi, _ := os.Stat(host); fi.Mode().Perm() != 0o755 || fi.Mode()&os.ModeSticky != 0 {
		t.Fatalf("the host directory's mode became %v", fi.Mode())
	}
}
