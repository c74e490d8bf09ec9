package allocrunner

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/droverhq/drover/client/allocfs"
	"github.com/droverhq/drover/structs"
)

// A symlink a task made at its payload's file, or on the way to it, does
// not carry the client's write out of the allocation: the link at the
// file is replaced, one out on the way is refused, and the host's file
// is untouched.
func TestWritePayloadSymlinks(t *testing.T) {
	hostDir := t.TempDir()
	marker := filepath.Join(hostDir, "marker")
	if err := os.WriteFile(marker, []byte("host\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := NewAllocDir(t.TempDir(), "a1")
	if err := d.Build([]string{"t"}); err != nil {
		t.Fatal(err)
	}
	local := d.TaskLocalDir("t")
	if err := os.Symlink(marker, filepath.Join(local, "payload")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(hostDir, filepath.Join(local, "out")); err != nil {
		t.Fatal(err)
	}
	task := &structs.Task{Name: "t", DispatchPayload: &structs.DispatchPayloadConfig{File: "payload"}}
	if err := d.WritePayload(task, []byte("job's")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(local, "payload")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("local/payload is not a regular file: %v", err)
	}
	task.DispatchPayload.File = "out/marker"
	if err := d.WritePayload(task, []byte("job's")); !errors.Is(err, allocfs.ErrEscapes) {
		t.Fatalf("through local/out: %v, want ErrEscapes", err)
	}
	if b, _ := os.ReadFile(marker); string(b) != "host\n" {
		t.Fatalf("host marker now %q", b)
	}
	if es, _ := os.ReadDir(hostDir); len(es) != 1 {
		t.Fatalf("host dir holds %v", es)
	}
}
