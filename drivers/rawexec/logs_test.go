package rawexec

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestRotatorCopyTruncateKeepsLiveInode(t *testing.T) {
	dir := t.TempDir()
	r := newRotator(filepath.Join(dir, "web.stdout"), 2, 1)
	live, err := r.open()
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for round := 0; round < 3; round++ {
		if _, err := live.Write(chunk); err != nil {
			t.Fatal(err)
		}
		rotated, err := r.check()
		if err != nil || !rotated {
			t.Fatalf("round %d: rotated=%v err=%v", round, rotated, err)
		}
	}
	// The writer's fd still points at the live file, now the highest index.
	if _, err := live.Write([]byte("tail")); err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]string{0: "", 1: "", 2: "full", 3: "tail"} {
		b, err := os.ReadFile(r.path(i))
		switch want {
		case "":
			if !os.IsNotExist(err) {
				t.Errorf("file %d should be pruned (max_files 2), err=%v", i, err)
			}
		case "full":
			if err != nil || len(b) != 1<<20 {
				t.Errorf("file %d: %d bytes, err=%v", i, len(b), err)
			}
		default:
			if string(b) != want {
				t.Errorf("file %d = %q, want %q", i, b, want)
			}
		}
	}
	if rotated, err := r.check(); rotated || err != nil {
		t.Fatalf("small live file rotated=%v err=%v", rotated, err)
	}
	// A new rotator (a restarted client) finds the same live file.
	r2 := newRotator(filepath.Join(dir, "web.stdout"), 2, 1)
	if i, _ := r2.live(hostFS{}); i != 3 {
		t.Fatalf("live index after restart = %d, want 3", i)
	}
}

func TestRotatorIgnoresOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"web.stdout.x", "web.stdout.01", "web.stderr.7", "webx.stdout.9", "web.stdout.2"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := newRotator(filepath.Join(dir, "web.stdout"), 3, 1)
	if i, err := r.live(hostFS{}); i != 2 || err != nil {
		t.Fatalf("live = %d, %v; want 2", i, err)
	}
}

func TestRotatorOpenRemovesLeftoverCopies(t *testing.T) {
	dir := t.TempDir()
	left := filepath.Join(dir, ".web.stdout.rotate-42")
	if err := os.WriteFile(left, []byte("half a rotation"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := newRotator(filepath.Join(dir, "web.stdout"), 2, 1).open()
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("leftover copy still there: %v", err)
	}
}

// A task can write its allocation's alloc/logs: a link it puts in place
// of a log file is replaced when the client opens the file (a client
// restart re-opens it) and is never truncated through when the client
// rotates, whatever file outside the allocation it points to.
func TestRotatorDoesNotFollowATasksLinks(t *testing.T) {
	alloc := filepath.Join(t.TempDir(), "a1")
	logs := filepath.Join(alloc, "alloc", "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	host := t.TempDir()
	secret := filepath.Join(host, "secret")
	big := filepath.Join(host, "big")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, 3<<20/2), 0o600); err != nil {
		t.Fatal(err)
	}
	r := newRotator(filepath.Join(logs, "web.stdout"), 2, 1)
	if err := r.inAlloc(alloc); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(logs, "web.stdout.0")
	if err := os.Symlink(secret, live); err != nil {
		t.Fatal(err)
	}
	f, err := r.open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("task output\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Fatalf("the host file behind the link became %q", b)
	}
	if fi, err := os.Lstat(live); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the live log file is %v (%v), want a regular file of the client's", fi, err)
	}

	// The live file replaced again by a link to a file over the size
	// limit: the rotation must not truncate it through the link.
	if err := os.Remove(live); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(big, live); err != nil {
		t.Fatal(err)
	}
	_, _ = r.check()
	if fi, err := os.Stat(big); err != nil || fi.Size() != 3<<20/2 {
		t.Fatalf("the host file behind the link is now %v (%v)", fi, err)
	}
}
