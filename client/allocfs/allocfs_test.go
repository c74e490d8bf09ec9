package allocfs

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

const secret = "HOST-MARKER-9f2c"

// layout makes an allocation directory beside a host directory holding a
// marker file, and returns both.
func layout(t *testing.T) (alloc, host string) {
	t.Helper()
	base := t.TempDir()
	alloc = filepath.Join(base, "alloc-1")
	host = filepath.Join(base, "host")
	for _, d := range []string{alloc, host, filepath.Join(alloc, "alloc", "logs"), filepath.Join(alloc, "web", "local")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(host, "marker"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	return alloc, host
}

func TestSymlinksOutAreRefused(t *testing.T) {
	alloc, host := layout(t)
	links := map[string]string{
		"alloc/root":     "/",
		"alloc/host":     host,
		"alloc/up":       "../../host",
		"web/local/up":   "../../../host",
		"web/local/file": host + "/marker",
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(alloc, l)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(alloc)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, name := range []string{"alloc/root/etc/hostname", "alloc/host/marker", "alloc/up/marker", "web/local/up/marker", "web/local/file", "../host/marker", "/etc/hostname"} {
		if b, err := r.ReadFile(name, 0); !errors.Is(err, ErrEscapes) {
			t.Errorf("ReadFile(%q) = %q, %v; want ErrEscapes", name, b, err)
		}
		if p, err := r.RealPath(name); !errors.Is(err, ErrEscapes) {
			t.Errorf("RealPath(%q) = %q, %v; want ErrEscapes", name, p, err)
		}
	}
	for _, name := range []string{"alloc/root/etc/x", "alloc/host/marker", "alloc/up/marker", "web/local/up/marker", "../host/marker", "/etc/x"} {
		if err := r.WriteFile(name, []byte("x"), 0o644); !errors.Is(err, ErrEscapes) {
			t.Errorf("WriteFile(%q) = %v; want ErrEscapes", name, err)
		}
	}
	// WriteFile replaces a symlink at the destination itself.
	if err := r.WriteFile("web/local/file", []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(host, "marker")); string(b) != secret {
		t.Fatalf("the host's file was written through a symlink: %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(alloc, "web/local/file")); !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("destination is %v, want a regular 0600 file", fi.Mode())
	}
}

func TestSymlinksInsideAreFollowed(t *testing.T) {
	alloc, _ := layout(t)
	if err := os.WriteFile(filepath.Join(alloc, "alloc", "data.txt"), []byte("shared"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../alloc", filepath.Join(alloc, "web", "local", "shared")); err != nil {
		t.Fatal(err)
	}
	r, err := Open(alloc)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := r.ReadFile("web/local/shared/data.txt", 0)
	if err != nil || string(b) != "shared" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	p, err := r.RealPath("web/local/shared")
	if err != nil || p != filepath.Join(alloc, "alloc") {
		t.Fatalf("RealPath = %q, %v; want %q", p, err, filepath.Join(alloc, "alloc"))
	}
}

func TestOpenRefusesSpecialFiles(t *testing.T) {
	alloc, _ := layout(t)
	if err := syscall.Mkfifo(filepath.Join(alloc, "alloc", "logs", "web.stdout.0"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	r, err := Open(alloc)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Without O_NONBLOCK this open would wait for a writer for ever.
	if _, err := r.Open("alloc/logs/web.stdout.0"); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Open(fifo) = %v, want ErrNotRegular", err)
	}
}

func TestCopyInRefusesSymlinksInSource(t *testing.T) {
	alloc, host := layout(t)
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a"), 0o640)
	os.Mkdir(filepath.Join(src, "d"), 0o755)
	os.WriteFile(filepath.Join(src, "d", "b.sh"), []byte("b"), 0o755)
	r, _ := Open(alloc)
	defer r.Close()
	if err := r.CopyIn(src, "web/local/art"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(alloc, "web/local/art/d/b.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("copied file: %v %v", fi, err)
	}
	os.Symlink(host, filepath.Join(src, "evil"))
	if err := r.CopyIn(src, "web/local/art2"); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("CopyIn with a symlink = %v, want ErrNotRegular", err)
	}
}

// TestPropertyNothingOutside makes random symlink layouts of the kind a
// task can make in alloc/ and local/, then random reads, writes, copies
// and resolutions of random path-shaped names: nothing outside the
// allocation is read, written or handed out.
func TestPropertyNothingOutside(t *testing.T) {
	words := []string{"..", ".", "alloc", "web", "local", "secrets", "root", "up", "x", "etc", "marker", "l1", "l2", "", "/", "data"}
	targets := func(host string) []string {
		return []string{"/", host, host + "/marker", "..", "../..", "../../..", "../../host", "../../../host", ".", "l2", "../alloc", "x", "/etc", "alloc/../../host"}
	}
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		alloc, host := layout(t)
		before := snapshot(t, filepath.Dir(alloc), alloc)
		randPath := func() string {
			n := 1 + rng.IntN(5)
			parts := make([]string, n)
			for i := range parts {
				parts[i] = words[rng.IntN(len(words))]
			}
			p := strings.Join(parts, "/")
			if rng.IntN(6) == 0 {
				p = "/" + p
			}
			return p
		}
		// The task's doing: symlinks anywhere it can write.
		for range 1 + rng.IntN(6) {
			dir := []string{"alloc", "web/local", "web", "alloc/logs"}[rng.IntN(4)]
			name := []string{"root", "up", "l1", "l2", "x", "web.stdout.0"}[rng.IntN(6)]
			tg := targets(host)
			os.Symlink(tg[rng.IntN(len(tg))], filepath.Join(alloc, dir, name))
		}
		r, err := Open(alloc)
		if err != nil {
			t.Fatal(err)
		}
		src := t.TempDir()
		os.WriteFile(filepath.Join(src, "f"), []byte("artifact"), 0o644)
		for range 30 {
			p := randPath()
			switch rng.IntN(5) {
			case 0:
				if b, err := r.ReadFile(p, 1<<20); err == nil && bytes.Contains(b, []byte(secret)) {
					t.Fatalf("seed %d: ReadFile(%q) read the host's marker", seed, p)
				}
			case 1:
				r.WriteFile(p, []byte("written"), 0o644)
			case 2:
				r.CopyIn(src, p)
			case 3:
				if rp, err := r.RealPath(p); err == nil && rp != alloc && !strings.HasPrefix(rp, alloc+"/") {
					t.Fatalf("seed %d: RealPath(%q) = %q, outside %q", seed, p, rp, alloc)
				}
			case 4:
				r.MkdirAll(p, 0o755)
			}
		}
		r.Close()
		if after := snapshot(t, filepath.Dir(alloc), alloc); after != before {
			t.Fatalf("seed %d: the host outside the allocation changed:\nbefore %s\nafter  %s", seed, before, after)
		}
	}
}

// snapshot lists everything under base but skip, with contents.
func snapshot(t *testing.T, base, skip string) string {
	var lines []string
	filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p == skip {
			return filepath.SkipDir
		}
		line := p + " " + d.Type().String()
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			line += " " + string(b)
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
