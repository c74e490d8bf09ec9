package allocrunner

import (
	"errors"
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

// TestBuildMakesSharedTmpSticky: alloc/tmp is world-writable and sticky
// whether the tree is new (chmod straight on the directory just made),
// built again, or built again after alloc/tmp went (through the root),
// and a data dir without its alloc directory gets one.
func TestBuildMakesSharedTmpSticky(t *testing.T) {
	d := NewAllocDir(filepath.Join(t.TempDir(), "data"), "a1")
	tmp := filepath.Join(d.SharedDir(), "tmp")
	check := func(when string) {
		t.Helper()
		fi, err := os.Stat(tmp)
		if err != nil || fi.Mode().Perm() != 0o777 || fi.Mode()&os.ModeSticky == 0 {
			t.Fatalf("%s: alloc/tmp %v, %v", when, fi.Mode(), err)
		}
		for _, p := range []string{d.LogDir(), d.TaskLocalDir("web"), d.TaskSecretsDir("web"), filepath.Join(d.TaskDir("web"), "tmp")} {
			if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
				t.Fatalf("%s: %s: %v", when, p, err)
			}
		}
	}
	if err := d.Build([]string{"web"}); err != nil {
		t.Fatal(err)
	}
	check("new tree")
	if err := d.Build([]string{"web"}); err != nil {
		t.Fatal(err)
	}
	check("built again")
	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}
	if err := d.Build([]string{"web"}); err != nil {
		t.Fatal(err)
	}
	check("alloc/tmp made again")
}

// TestBuildRefusesTaskNamesThatLeaveTheAllocation: a task's name is its
// directory in the allocation; a name that is not one plain directory name
// ("..", ".", one with a slash, "alloc") fails the build with
// ErrInvalidConfig and makes no directory beside the allocation's (jobs
// stored before the servers refused such names may still carry them).
func TestBuildRefusesTaskNamesThatLeaveTheAllocation(t *testing.T) {
	for _, name := range []string{"..", ".", "../evil", "a/b", "", "alloc"} {
		base := t.TempDir()
		data := filepath.Join(base, "data")
		d := NewAllocDir(data, "a1")
		err := d.Build([]string{"web", name})
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("task %q: Build = %v, want ErrInvalidConfig", name, err)
		}
		allocs := filepath.Dir(d.Root) // every allocation's directory is in it
		for _, p := range []string{filepath.Join(allocs, "local"), filepath.Join(allocs, "secrets"), filepath.Join(allocs, "evil"), filepath.Join(data, "local")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("task %q: Build made %s, outside the allocation", name, p)
			}
		}
	}
}
