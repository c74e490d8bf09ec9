package docker

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A task's container can write alloc/logs: a symlink or a FIFO it puts
// where the driver's next log file goes is replaced, and the host file
// the link names is never written.
func TestRotatingFileReplacesWhatATaskPutInPlace(t *testing.T) {
	base := t.TempDir()
	alloc := filepath.Join(base, "alloc-1")
	logs := filepath.Join(alloc, "alloc", "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(base, "host-marker")
	os.WriteFile(marker, []byte("host"), 0o644)
	os.WriteFile(filepath.Join(logs, "web.stdout.0"), nil, 0o644)
	r, err := openRotating(alloc, filepath.Join(logs, "web.stdout"), 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// While the driver writes .0, the task plants the next files: .1 as a
	// link to the host's file, .2 as a FIFO.
	if err := os.Symlink(marker, filepath.Join(logs, "web.stdout.1")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(logs, "web.stdout.2"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		chunk := []byte(strings.Repeat("x", 700<<10))
		for range 3 {
			if _, err := r.Write(chunk); err != nil {
				done <- err
				return
			}
		}
		done <- r.writeStamped([]byte("line\n"), time.Unix(1700000000, 5))
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("writing the logs blocked on the FIFO a task planted")
	}
	if b, _ := os.ReadFile(marker); string(b) != "host" {
		t.Fatalf("the host's file was written through a task's link: %d bytes", len(b))
	}
	for _, n := range []string{"web.stdout.0", "web.stdout.1", "web.stdout.2"} {
		fi, err := os.Lstat(filepath.Join(logs, n))
		if err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("%s: %v %v, want a regular file", n, fi, err)
		}
	}
	fi, _ := os.Stat(filepath.Join(logs, "web.stdout.2"))
	if got := fi.ModTime(); !got.Equal(time.Unix(1700000000, 5)) {
		t.Fatalf("live file stamped %v, want the line's time to the nanosecond", got)
	}
}
